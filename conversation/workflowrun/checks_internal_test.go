package workflowrun

import (
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// The checks' and the model's results come out in criteria order, whatever order
// the model answered in; a result for an undeclared id follows.
func TestMergeResults(t *testing.T) {
	a := &workflow.Artifact{ID: "a", Criteria: []workflow.Criterion{
		{ID: "m1"}, {ID: "c1", Check: &workflow.Check{Line: "X:"}}, {ID: "m2"}, {ID: "c2", Check: &workflow.Check{Heading: "Y"}},
	}}
	checks := []workflow.CriterionResult{{ID: "c1", Pass: true}, {ID: "c2", Pass: false}}
	model := []workflow.CriterionResult{{ID: "extra"}, {ID: "m2", Pass: true}, {ID: "m1", Pass: true}}
	var ids []string
	for _, r := range mergeResults(a, checks, model) {
		ids = append(ids, r.ID)
	}
	if got := ids; len(got) != 5 || got[0] != "m1" || got[1] != "c1" || got[2] != "m2" || got[3] != "c2" || got[4] != "extra" {
		t.Fatalf("merged %v; want m1 c1 m2 c2 extra", got)
	}
}
