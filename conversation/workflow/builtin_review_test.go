package workflow_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// The blog article's checks test only that a field or heading is there, and a
// checked criterion is never shown to the model's evaluation: so a checked
// criterion's description promises no more than its check tests, and what the
// fields must also be (the meta description's 160 characters, 4 to 8 keywords, a
// table of contents that lists the sections) is a criterion the model judges.
func TestBlogCheckedCriteriaPromiseOnlyTheCheck(t *testing.T) {
	article, _ := builtin(t, "blog").Artifact("article")
	var judged []string
	for _, c := range article.Criteria {
		if c.Check == nil {
			judged = append(judged, strings.ToLower(c.Description))
			continue
		}
		for _, more := range []string{"160", "4 to 8", "listing", "bullets", "starts with"} {
			if strings.Contains(c.Description, more) {
				t.Errorf("checked criterion %s says %q, which its check %+v does not test: %q", c.ID, more, *c.Check, c.Description)
			}
		}
	}
	all := strings.Join(judged, "\n")
	for _, want := range []string{"160 characters", "4 to 8", "table of contents lists"} {
		if !strings.Contains(all, want) {
			t.Errorf("no criterion the model judges says %q:\n%s", want, all)
		}
	}
}

// The blog outline's prompt asks for as many sections as the length holds; its
// criterion wants 3 to 8: for a short or a long article (800 or 5,000 words) the
// prompt must bound the count as the criterion does, or the outline fails it; and
// it ties the count to the length (about one section per 350 words), so each
// section's budget holds a lead-in and a whole subsection.
func TestBlogPlanPromptBoundsSectionsAsItsCriterion(t *testing.T) {
	d := builtin(t, "blog")
	plan, _ := d.Artifact("plan")
	var crit string
	for _, c := range plan.Criteria {
		if c.ID == "sections" {
			crit = c.Description
		}
	}
	if !strings.Contains(crit, "3 to 8 sections") {
		t.Fatalf("the sections criterion is %q; this test expects 3 to 8", crit)
	}
	prompt := strings.Join(strings.Fields(d.ExpandPrompt(plan.Prompt, map[string]string{"topic": "t", "wordcount": "5000"})), " ")
	if !strings.Contains(prompt, "3 to 8 sections") || !strings.Contains(prompt, "one section per about 350 words") {
		t.Errorf("the outline's prompt does not bound the sections as its criterion (3 to 8), by the length:\n%s", prompt)
	}
}

// A short article's sections cannot always hold a whole 250-300-word subsection (800
// words: 3 sections of about 240 words, lead-in included): the subsections check is
// shown and guides the revision, but alone it does not fail the sections' verdict,
// while the lead-in, the wrap-ups and the keywords still do.
func TestBlogSubsectionLengthDoesNotFailTheVerdictAlone(t *testing.T) {
	d := builtin(t, "blog")
	sections, _ := d.Artifact("sections")
	brief := "## Reader\nTeams.\n\n## Keywords\nword\n"
	var text strings.Builder
	for _, title := range []string{"One", "Two", "Three"} {
		text.WriteString("## " + title + "\n\nA lead that sets the scene. A second that says what follows.\n\n### Part\n\n" + words(195) + "\n\n")
	}
	eval := []workflow.CriterionResult{{ID: "cited", Pass: true}, {ID: "from_notes", Pass: true}, {ID: "brief", Pass: true}, {ID: "story", Pass: true}}
	judge := func(text string) (workflow.Verdict, map[string]bool) {
		results := append([]workflow.CriterionResult(nil), eval...)
		pass := map[string]bool{}
		for _, r := range workflow.RunChecks(sections, text, workflow.CheckEnv{Artifacts: map[string]string{"brief": brief}, Workflow: d}) {
			results = append(results, workflow.CriterionResult{ID: r.ID, Pass: r.Pass})
			pass[r.ID] = r.Pass
		}
		return d.Judge(sections, results), pass
	}
	v, pass := judge(text.String())
	if pass["subsections"] || !pass["lead_in"] || !pass["keywords"] || !pass["no_wrap_up"] {
		t.Fatalf("checks = %v; want only subsections failing", pass)
	}
	if !v.Pass || len(v.Failed) != 1 || v.Failed[0].ID != "subsections" {
		t.Errorf("verdict = %+v; want a pass with subsections among the failed (guidance)", v)
	}
	if v, _ := judge(strings.Replace(text.String(), "A second that says what follows.", "A second. A third.", 1)); v.Pass {
		t.Errorf("a three-sentence lead-in passed the verdict: %+v", v)
	}
}
