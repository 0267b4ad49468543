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
