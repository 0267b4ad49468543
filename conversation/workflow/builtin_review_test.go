package workflow_test

import (
	"strings"
	"testing"
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
// criterion wants 4 to 8: for a short or a long article (800 or 5,000 words) the
// prompt must bound the count as the criterion does, or the outline fails it.
func TestBlogPlanPromptBoundsSectionsAsItsCriterion(t *testing.T) {
	d := builtin(t, "blog")
	plan, _ := d.Artifact("plan")
	var crit string
	for _, c := range plan.Criteria {
		if c.ID == "sections" {
			crit = c.Description
		}
	}
	if !strings.Contains(crit, "4 to 8 sections") {
		t.Fatalf("the sections criterion is %q; this test expects 4 to 8", crit)
	}
	prompt := strings.Join(strings.Fields(d.ExpandPrompt(plan.Prompt, map[string]string{"topic": "t", "wordcount": "5000"})), " ")
	if !strings.Contains(prompt, "4 to 8 sections") {
		t.Errorf("the outline's prompt does not bound the sections as its criterion (4 to 8):\n%s", prompt)
	}
}
