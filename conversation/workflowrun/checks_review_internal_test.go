package workflowrun

import (
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// A model that answers about a checked criterion too (it was not asked) does not
// count it twice: the check's result stands alone.
func TestMergeResultsCheckedIDFromModel(t *testing.T) {
	a := &workflow.Artifact{ID: "a", Criteria: []workflow.Criterion{{ID: "m"}, {ID: "c", Check: &workflow.Check{Line: "X:"}}}}
	checks := []workflow.CriterionResult{{ID: "c", Pass: false, Reason: "No \"X:\" line"}}
	model := []workflow.CriterionResult{{ID: "m", Pass: true}, {ID: "c", Pass: true}}
	got := mergeResults(a, checks, model)
	if len(got) != 2 || got[0].ID != "m" || got[1].ID != "c" || got[1].Pass {
		t.Fatalf("merged %+v; want m, then c as the check judged it, once", got)
	}
}
