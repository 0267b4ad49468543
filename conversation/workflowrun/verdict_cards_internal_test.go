package workflowrun

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestVerdictFix: the guidance of the automatic revision names every failing
// criterion with its reason, marks the critical ones, asks for the placeholders
// first, and keeps what the team asked for.
func TestVerdictFix(t *testing.T) {
	def, err := workflow.Parse("t.yaml", []byte(`name: t
title: T
artifacts:
  - id: a
    title: A
    criteria:
      - {id: key, description: Names its sources, critical: true}
      - {id: other, description: Is short}
`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := def.Artifact("a")
	eval := []workflow.CriterionResult{{ID: "key", Reason: "no source"}, {ID: "other", Reason: "too\nlong"}, {ID: conversation.CriterionPlaceholders, Reason: "left"}}
	got := verdictFix(a, def.Judge(a, eval), []string{"[city]"}, "lead with the price")
	want := `The check "No placeholders" failed: placeholder [city] left in the text.`
	if !strings.HasPrefix(got, want) {
		t.Errorf("guidance does not start with the placeholders fix:\n%s", got)
	}
	for _, w := range []string{
		"The evaluation failed: 0 of 3 criteria met, and a critical criterion failed.",
		"\n- Names its sources (critical): no source\n- Is short: too long\n",
		"Keep following what the team asked for: lead with the price",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("guidance lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "\n\n") || strings.Contains(got, "- No placeholders") {
		t.Errorf("guidance has a blank line or lists the placeholders twice:\n%s", got)
	}
}
