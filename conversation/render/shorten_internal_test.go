package render

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation/workflow"
)

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		text string
		n    int
		want string
	}{
		{"short text", 40, "short text"},
		{"the quick brown fox jumps", 12, "the quick…"},
		{"the quick brown fox jumps", 10, "the quick…"},
		{"the quick, brown fox", 11, "the quick…"},
		{"_the quick brown fox jumps_", 14, "_the quick…_"},
		{"plain and *bold words here*", 17, "plain and *bold…*"},
		{"Supercalifragilistic", 5, "Super…"},
		{"привет мир и все остальные", 11, "привет мир…"},
	} {
		got := shorten(tc.text, tc.n)
		if got != tc.want {
			t.Errorf("shorten(%q, %d) = %q; want %q", tc.text, tc.n, got, tc.want)
		}
		if strings.Contains(got, "message clipped") || utf8.RuneCountInString(got) > tc.n+2 {
			t.Errorf("shorten(%q, %d) = %q: too long or a prompt marker", tc.text, tc.n, got)
		}
	}
}

// TestEvaluationCard: an evaluation is one summary line, then each failing criterion
// with its reason on a line of its own; met criteria are not repeated.
func TestEvaluationCard(t *testing.T) {
	a := &workflow.Artifact{ID: "positioning", Title: "Positioning", Criteria: []workflow.Criterion{
		{ID: "clear", Description: "Clear"}, {ID: "concrete", Description: "Concrete"}, {ID: "short", Description: "Short"}}}
	c := Cards{Lang: "en", Format: func(s string) string { return s }}
	got := c.grading().evaluation(a, []workflow.CriterionResult{{ID: "clear", Pass: true, Reason: "Met: “Clear”."}, {ID: "concrete", Pass: true, Reason: "ok"}, {ID: "short", Pass: true}})
	if got != "✅ 3 of 3 criteria met" {
		t.Errorf("all met = %q", got)
	}
	got = c.grading().evaluation(a, []workflow.CriterionResult{{ID: "clear", Pass: true, Reason: "Met"}, {ID: "concrete", Pass: false, Reason: "the placeholder  [product]\nis left"}, {ID: "short", Pass: true}})
	want := "⚠️ 2 of 3 criteria met\n❌ *Concrete*: the placeholder [product] is left"
	if got != want {
		t.Errorf("one failing = %q; want %q", got, want)
	}
	ru := Cards{Lang: "ru"}.grading().evaluation(a, []workflow.CriterionResult{{ID: "clear", Pass: true}})
	if !strings.Contains(ru, "1 из 1") {
		t.Errorf("ru = %q", ru)
	}
	card := c.artifact(a, &workflow.ArtifactState{Text: "text", Eval: []workflow.CriterionResult{{ID: "clear", Pass: true, Reason: "Met: “Clear”."}}}, "")
	for _, b := range card.Blocks {
		if strings.Contains(b.Text, "Met: “Clear”") {
			t.Errorf("the card repeats a met criterion: %q", b.Text)
		}
	}
}
