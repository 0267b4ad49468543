package workflow_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// blogArticle is an article in the blog's final shape with sections of words each.
func blogArticle(sections, words int) string {
	var b strings.Builder
	b.WriteString("# Title\nMeta description: d\nMeta keywords: a, b\nImage description: i\n\n## Table of contents\n- one\n\n## TL;DR\n- one\n\n")
	for i := range sections {
		fmt.Fprintf(&b, "## Section %d\n%s\n\n", i, strings.Repeat("word ", words))
	}
	b.WriteString("## Conclusion\nDone.\n\n## References\n1. https://example.com/a\n")
	return b.String()
}

// checkedArticle is the blog article's checks: four lines, four headings, and the
// word count.
func checkedArticle() *workflow.Artifact {
	tol := 0.15
	c := func(id string, ch workflow.Check) workflow.Criterion {
		return workflow.Criterion{ID: id, Description: id, Check: &ch}
	}
	return &workflow.Artifact{ID: "article", Criteria: []workflow.Criterion{
		c("title", workflow.Check{Line: "# "}), c("meta", workflow.Check{Line: "Meta description:"}),
		c("keywords", workflow.Check{Line: "Meta keywords:"}), c("image", workflow.Check{Line: "Image description:"}),
		c("toc", workflow.Check{Heading: "Table of contents"}), c("tldr", workflow.Check{Heading: "TL;DR"}),
		c("conclusion", workflow.Check{Heading: "Conclusion"}), c("references", workflow.Check{Heading: "References"}),
		c("words", workflow.Check{Words: "wordcount", Tolerance: &tol, Exclude: []string{"Table of contents", "TL;DR", "References"}}),
	}}
}

// BenchmarkRunChecks: the blog article's checks on a 1,500-word article, and on a
// 4 MiB hostile one (one long line, no headings), which the pipeline may be given.
func BenchmarkRunChecks(b *testing.B) {
	a := checkedArticle()
	in := map[string]string{"wordcount": "1500"}
	for _, tt := range []struct {
		name, text string
	}{
		{"article-1500-words", blogArticle(6, 250)},
		{"hostile-4MiB-line", strings.Repeat("x ", 2<<20)},
		{"hostile-4MiB-headings", strings.Repeat("## h\n", 4<<20/5)},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.text)))
			b.ReportAllocs()
			for b.Loop() {
				workflow.RunChecks(a, tt.text, workflow.CheckEnv{Inputs: in})
			}
		})
	}
}

// BenchmarkURLs: the sources phase's URL extraction on an item's notes, and on 1 MiB
// of notes holding 20,000 URLs (it keeps MaxFetchURLs).
func BenchmarkURLs(b *testing.B) {
	var many strings.Builder
	for i := 0; many.Len() < 1<<20; i++ {
		fmt.Fprintf(&many, "- fact %d (source: https://example.com/page/%d).\n", i, i)
	}
	for _, tt := range []struct{ name, text string }{
		{"notes", "- One fact (source: https://a.example/x).\n- Another (https://b.example/y?q=1).\n"},
		{"1MiB", many.String()},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.text)))
			b.ReportAllocs()
			for b.Loop() {
				workflow.URLs(tt.text, workflow.MaxFetchURLs)
			}
		})
	}
}
