package render

import (
	"strings"
	"testing"

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
		c := Cards{Lang: tc.lang, Def: def, Format: func(s string) string { return s }}
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
