package workflow_test

import (
	"reflect"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

func TestPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"For families, [product] is a planner.", []string{"[product]"}},
		{"[Company name] and [product] and [product] again", []string{"[Company name]", "[product]"}},
		{"See [the docs](https://example.com) and [1] and [2][3].", nil},
		{"A [reference link][docs] and an image ![alt](x.png).", nil},
		{"[docs]: https://example.com", nil},
		{"- [ ] todo\n- [x] done", nil},
		{"Code `a[i]` and `[product]` and\n```\nx = [value]\n```", nil},
		{"escaped \\[product] stays", nil},
		{"Nothing to see.", nil},
		{"Для [продукт] тоже.", []string{"[продукт]"}},
	} {
		if got := workflow.Placeholders(tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Placeholders(%q) = %q; want %q", tc.text, got, tc.want)
		}
	}
}

func TestStripNotes(t *testing.T) {
	in := "First paragraph.\n\n_Revised as asked: make it shorter._\n\nSecond, with _italics_ kept."
	want := "First paragraph.\n\n\nSecond, with _italics_ kept."
	if got := workflow.StripNotes(in); got != want {
		t.Errorf("StripNotes = %q; want %q", got, want)
	}
	tail := "Text.\n\n_Revised as asked: mention the budget._\n"
	if got := workflow.StripNotes(tail); got != "Text." {
		t.Errorf("StripNotes(trailing note) = %q", got)
	}
	if got := workflow.StripNotes("_Emphasis: a whole italic line is kept._"); got != "_Emphasis: a whole italic line is kept._" {
		t.Errorf("StripNotes changed an ordinary italic line: %q", got)
	}
}

// TestReportLeavesOutRevisionNotes: the editor's note stays on the card; the report
// has the text only.
func TestReportLeavesOutRevisionNotes(t *testing.T) {
	d, err := workflow.Parse("t.yaml", []byte("name: t\ntitle: T\nartifacts:\n  - id: a\n    title: A\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.RenderReport(workflow.ReportData{Artifacts: map[string]string{"a": "Body.\n\n_Revised as asked: make it shorter._"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "# T\n\n## A\n\nBody.\n"; out != want {
		t.Errorf("report = %q; want %q", out, want)
	}
}
