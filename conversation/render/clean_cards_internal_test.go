package render

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestEvaluationCardInRussian: the placeholders criterion, its reason and the
// editor's note read in the thread's language.
func TestEvaluationCardInRussian(t *testing.T) {
	def, err := workflow.Parse("t.yaml", []byte("name: t\ntitle: T\nartifacts:\n  - id: a\n    title: A\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := def.Artifact("a")
	for _, tc := range []struct{ lang, summary, criterion, reason, note string }{
		{"en", "0 of 1 criteria met", "❌ *No placeholders*", "still in the text after an automatic fix: [product]", "✏️ *Editor's note:* _Revised as asked: shorter._"},
		{"ru", "выполнено критериев: 0 из 1", "❌ *Без заполнителей*", "остались в тексте и после автоматического исправления: [product]", "✏️ *Примечание редактора:* _Revised as asked: shorter._"},
	} {
		c := Cards{Lang: tc.lang, Def: def, Format: func(s string) string { return s }}
		st := &workflow.ArtifactState{Status: workflow.StatusGenerated, Text: "For [product].", Note: "Revised as asked: shorter.",
			Eval: CheckPlaceholders(tc.lang, nil, "For [product].")}
		var texts []string
		for _, b := range c.artifact(a, st, "").Blocks {
			texts = append(texts, b.Text)
		}
		got := strings.Join(texts, "\n")
		for _, want := range []string{tc.summary, tc.criterion + ": " + tc.reason, tc.note} {
			if !strings.Contains(got, want) {
				t.Errorf("%s card lacks %q:\n%s", tc.lang, want, got)
			}
		}
		if strings.Count(got, "Revised as asked") != 1 {
			t.Errorf("%s card: the note is shown other than once:\n%s", tc.lang, got)
		}
	}
}
