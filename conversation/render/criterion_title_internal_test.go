package render

import (
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestCriterionTitleDropsTheFullStop: a criterion described by a sentence is shown
// without its full stop, since the card puts ": reason" after it ("length.: 1,491
// words" read badly).
func TestCriterionTitleDropsTheFullStop(t *testing.T) {
	a := &workflow.Artifact{Criteria: []workflow.Criterion{
		{ID: "length", Description: "The body is within 15% of the target length. "},
		{ID: "etc", Description: "Lists examples, etc"},
	}}
	for id, want := range map[string]string{"length": "The body is within 15% of the target length", "etc": "Lists examples, etc", "other": "other"} {
		if got := CriterionTitle("en", a, id); got != want {
			t.Errorf("criterionTitle(%q) = %q, want %q", id, got, want)
		}
	}
}
