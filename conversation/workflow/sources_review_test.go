package workflow_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestParse_FetchWithEnhance: no model writes a fetch artifact, so there is no text
// of the model's to enhance: enhance is refused like editor (else the card would say
// "Enhanced by the model profile" of pages no model saw).
func TestParse_FetchWithEnhance(t *testing.T) {
	got := problems(t, yaml(sourcesBase+`	- id: sources
		title: Sources
		mode: auto
		depends_on: [research]
		fetch: research
		enhance: {model: enhance, prompt: Sharpen.}
`))
	want := []string{`test.yaml:16: artifact "sources": enhance does not apply to a fetch artifact: no model writes it (remove enhance or fetch)`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestParse_FetchWithCriteria: criteria are refused on a fetch artifact: they would
// send every fetched page to the evaluator, to judge what no model wrote.
func TestParse_FetchWithCriteria(t *testing.T) {
	got := problems(t, yaml(sourcesBase+`	- id: sources
		title: Sources
		mode: auto
		depends_on: [research]
		fetch: research
		criteria:
			- id: relevant
			  description: Every page is relevant.
`))
	want := []string{`test.yaml:16: artifact "sources": criteria does not apply to a fetch artifact: no model writes it (remove criteria or fetch)`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestURLs_Parentheses: a URL with balanced parentheses in its path (Wikipedia's
// "Go_(programming_language)") is kept whole, in a Markdown link too; a closing
// parenthesis that is not the URL's own still ends it.
func TestURLs_Parentheses(t *testing.T) {
	text := "See [Go](https://en.wikipedia.org/wiki/Go_(programming_language)), " +
		"https://en.wikipedia.org/wiki/Rust_(programming_language).\n" +
		"(also https://a.example/x) and (https://b.example/y).\n" +
		"[site](https://c.example/z) https://d.example/f(1)(2)"
	got := workflow.URLs(text, workflow.MaxFetchURLs)
	want := []string{
		"https://en.wikipedia.org/wiki/Go_(programming_language)",
		"https://en.wikipedia.org/wiki/Rust_(programming_language)",
		"https://a.example/x", "https://b.example/y", "https://c.example/z", "https://d.example/f(1)(2)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("URLs =\n%q\nwant\n%q", got, want)
	}
}

// TestURLs_Fragments: URLs that differ only by their fragment name one page: it is
// listed (and fetched) once, as first written, and takes one place of max.
func TestURLs_Fragments(t *testing.T) {
	text := "https://w.example/Go#History https://w.example/Go#Design https://w.example/Go https://x.example/"
	got := workflow.URLs(text, 2)
	want := []string{"https://w.example/Go#History", "https://x.example/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("URLs = %q; want %q", got, want)
	}
}
