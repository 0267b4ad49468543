package service

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestVerdictCard: the card shows the verdict after the evaluation line, and after an
// automatic revision both verdicts, before → after, in the thread's language.
func TestVerdictCard(t *testing.T) {
	def, err := workflow.Parse("t.yaml", []byte(`name: t
title: T
artifacts:
  - id: a
    title: A
    criteria:
      - {id: key, description: Key, critical: true}
      - {id: other, description: Other}
`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := def.Artifact("a")
	failing := []workflow.CriterionResult{{ID: "key", Pass: false, Reason: "no source"}, {ID: "other", Pass: true}}
	passing := []workflow.CriterionResult{{ID: "key", Pass: true}, {ID: "other", Pass: true}}
	for _, tc := range []struct {
		lang        string
		prior, eval []workflow.CriterionResult
		want        []string
	}{
		{"en", nil, passing, []string{"✅ 2 of 2 criteria met\n⚖️ *Verdict:* ✅ pass"}},
		{"en", nil, failing, []string{"⚠️ 1 of 2 criteria met\n❌ *Key*: no source\n⚖️ *Verdict:* ❌ fail"}},
		{"en", failing, passing, []string{"⚖️ *Verdict:* ❌ fail (1 of 2 criteria met) → ✅ pass (2 of 2) after one automatic revision"}},
		{"ru", nil, passing, []string{"⚖️ *Вердикт:* ✅ пройдено"}},
		{"ru", failing, failing, []string{"⚖️ *Вердикт:* ❌ не пройдено (выполнено критериев: 1 из 2) → ❌ не пройдено (1 из 2) после одной автоматической доработки"}},
	} {
		c := cards{lang: tc.lang, def: def, format: func(s string) string { return s }}
		st := &workflow.ArtifactState{Status: workflow.StatusGenerated, Text: "Text.", Eval: tc.eval, PriorEval: tc.prior}
		var texts []string
		for _, b := range c.artifact(a, st, "").Blocks {
			texts = append(texts, b.Text)
		}
		got := strings.Join(texts, "\n")
		for _, want := range tc.want {
			if !strings.Contains(got, want) {
				t.Errorf("%s card lacks %q:\n%s", tc.lang, want, got)
			}
		}
	}
}

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
