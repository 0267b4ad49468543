package htmltext_test

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/internal/htmltext"
)

// FuzzConvert checks that the text stays within its bound (4 bytes per byte of the
// document plus 1 KiB, or Options.MaxBytes), is UTF-8 when the document is, and that
// nesting, however deep, indents no line past MaxListDepth levels.
func FuzzConvert(f *testing.F) {
	for _, seed := range []string{
		"",
		"<title>T</title><h1>A</h1><p>b <a href=/c>c</a></p>",
		"<ul><li>a<ol><li>b</ol></ul><table><tr><td>1<td>2</table>",
		"<pre><code class=language-go>```x```</code></pre><code>y",
		"<header>h</header><main><footer>f</footer></main><div hidden>x",
		"<a href=x><img alt=y></a><a href=javascript:z>z</a>&amp;&#xD800;\xff",
		strings.Repeat("<ul><li>", 20) + strings.Repeat("<ol><li>x", 20),
		strings.Repeat("<ul><li>x", 3000),
		strings.Repeat("<div><blockquote><table><tr><td>", 2000) + "deep",
		strings.Repeat("<b><i><a href=/x>", 3000) + "text",
		"<pre>" + strings.Repeat("`", 5000) + "</pre>",
		strings.Repeat("<h1>", 1000) + strings.Repeat("<li>", 1000),
	} {
		f.Add(seed, 0, true)
	}
	base, err := url.Parse("https://example.com/a/b")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc string, maxBytes int, links bool) {
		opts := htmltext.Options{TitleHeading: !links, MaxBytes: maxBytes}
		if links {
			opts.Base = base
		}
		got := htmltext.Convert(doc, opts)
		limit := bound(len(doc))
		if maxBytes > 0 {
			limit = min(limit, maxBytes)
		}
		if len(got.Text) > limit {
			t.Errorf("%d bytes of text, want at most %d", len(got.Text), limit)
		}
		if utf8.ValidString(doc) && !utf8.ValidString(got.Text) {
			t.Errorf("text %q is not UTF-8", got.Text)
		}
		if len(got.Title) > 1<<10 {
			t.Errorf("title of %d bytes", len(got.Title))
		}
		if n := deepestIndent(got.Text); n > 2*htmltext.MaxListDepth {
			t.Errorf("a line indented by %d spaces, want at most %d (lists nested past MaxListDepth)", n, 2*htmltext.MaxListDepth)
		}
	})
}

// deepestIndent returns the most leading spaces of a line of text outside fenced
// code blocks.
func deepestIndent(text string) int {
	deepest, fenced := 0, false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			deepest = max(deepest, len(line)-len(trimmed))
		}
	}
	return deepest
}
