package render

import (
	"regexp"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// settingRe matches a setting's name: an upper-case SNAKE_CASE word (MODEL_PROFILES).
var settingRe = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)

// internalWords are the code's words for its modes, which mean nothing to a person
// reading Slack: a model profile, the deployment, an "auto" mode, a pass by its name.
var internalWords = []string{
	"auto,", "(auto", "no review", "model profile", "deployment", "enhancement pass", "pipeline (", "revised as asked",
	"авто,", "(авто", "профил", "развёртывани", "проход улучшения",
}

// TestCatalogsOneVoice: no Slack-facing text of any catalog, in either language,
// names a setting or an internal mode; and every English text has its Russian one.
func TestCatalogsOneVoice(t *testing.T) {
	for lang, c := range catalogs {
		for key, text := range c {
			if m := settingRe.FindString(text); m != "" {
				t.Errorf("%s %q names the setting %s: %q", lang, key, m, text)
			}
			low := strings.ToLower(text)
			for _, w := range internalWords {
				if strings.Contains(low, w) {
					t.Errorf("%s %q has the internal word %q: %q", lang, key, w, text)
				}
			}
		}
	}
	for key := range catalogs["en"] {
		if _, ok := catalogs["ru"][key]; !ok {
			t.Errorf("%q has no Russian text", key)
		}
	}
}

// cardText is the text of every block of artifact a's card for st, in lang.
func cardText(t *testing.T, lang string, def *workflow.Definition, id string, st *workflow.ArtifactState) string {
	t.Helper()
	a, ok := def.Artifact(id)
	if !ok {
		t.Fatalf("no artifact %q", id)
	}
	c := Cards{Lang: lang, Def: def, Format: func(s string) string { return s }}
	var texts []string
	for _, b := range c.artifact(a, st, "").Blocks {
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n")
}

// TestReviewWording: a failed criterion's reason that only repeats the criterion is
// not shown as the reason (it would advise the opposite of a "does not" criterion);
// a pass with a failed criterion says why it passes; both verdicts of an automatic
// revision count the same criteria; and its note is labelled automatic, lists what
// the evaluation found fixed, and drops the editor's "Revised as asked".
func TestReviewWording(t *testing.T) {
	def, err := workflow.Parse("t.yaml", []byte(`name: t
title: T
pass_share: 0.5
artifacts:
  - id: a
    title: A
    criteria:
      - {id: problem, description: Names the problem, critical: true}
      - {id: solution, description: Does not describe the solution}
      - {id: audience, description: Names who has the problem}
`))
	if err != nil {
		t.Fatal(err)
	}
	restated := []workflow.CriterionResult{{ID: "problem", Pass: true}, {ID: "audience", Pass: true},
		{ID: "solution", Pass: false, Reason: `Not clearly met yet: "Does not describe the solution"; add a sentence that shows it.`}}
	got := cardText(t, "en", def, "a", &workflow.ArtifactState{Status: workflow.StatusGenerated, Text: "Text.", Eval: restated})
	for _, want := range []string{"❌ *Does not describe the solution*: not met yet; the review gave no more detail",
		"⚖️ *Verdict:* ✅ pass — passes: the failed criterion is not critical"} {
		if !strings.Contains(got, want) {
			t.Errorf("card lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "add a sentence") {
		t.Errorf("card shows the restated reason:\n%s", got)
	}
	if got := cardText(t, "ru", def, "a", &workflow.ArtifactState{Status: workflow.StatusGenerated, Text: "Text.", Eval: restated}); !strings.Contains(got, "пройдено: невыполненный критерий не ключевой") {
		t.Errorf("ru card does not say why it passes:\n%s", got)
	}

	prior := []workflow.CriterionResult{{ID: "problem", Pass: false, Reason: "The text never says what goes wrong."}, {ID: "solution", Pass: true},
		{ID: "audience", Pass: true}, {ID: conversation.CriterionPlaceholders, Pass: false, Reason: "[city]"}}
	after := []workflow.CriterionResult{{ID: "problem", Pass: true}, {ID: "solution", Pass: true}, {ID: "audience", Pass: true}}
	st := &workflow.ArtifactState{Status: workflow.StatusGenerated, Text: "Text.", Eval: after, PriorEval: prior, Note: "_Revised as asked: named the late deliveries._"}
	got = cardText(t, "en", def, "a", st)
	for _, want := range []string{"✅ 4 of 4 criteria met", "❌ fail (2 of 4 criteria met) → ✅ pass (4 of 4)",
		"✏️ *Revised automatically:* _now meets: Names the problem; No placeholders_\n_named the late deliveries._"} {
		if !strings.Contains(got, want) {
			t.Errorf("card lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"Editor's note", "Revised as asked"} {
		if strings.Contains(got, bad) {
			t.Errorf("automatic revision's card says %q:\n%s", bad, got)
		}
	}
}

// TestRevisionClaimChecked: an editor's "Revised as asked: mention commuting
// parents" stays on the card when the text bears it out, and gives way to "not
// found" when it does not; a claim no check can judge stays as written.
func TestRevisionClaimChecked(t *testing.T) {
	def, err := workflow.Parse("t.yaml", []byte("name: t\ntitle: T\nartifacts:\n  - {id: a, title: A}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, lang, note, text, want, not string
	}{
		{"Found", "en", "_Revised as asked: mention commuting parents._", "It suits parents who commute.", "Revised as asked: mention commuting parents", "not found"},
		{"Missing", "en", "_Revised as asked: mention commuting parents._", "Students cook late and alone.", "Asked for: mention commuting parents. This change was not found in the text.", "Revised as asked"},
		{"MissingRussian", "ru", "_Revised as asked: упомяните студентов._", "Это удобно родителям.", "Просили: упомяните студентов. В тексте этого изменения не видно.", "Revised as asked"},
		{"NotJudged", "en", "_Revised as asked: make it shorter._", "Short.", "Revised as asked: make it shorter", "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := cardText(t, tc.lang, def, "a", &workflow.ArtifactState{Status: workflow.StatusGenerated, Rev: 2, Text: tc.text, Note: tc.note})
			if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
				t.Errorf("card has no %q, or has %q:\n%s", tc.want, tc.not, got)
			}
		})
	}
}
