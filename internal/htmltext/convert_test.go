package htmltext_test

import (
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/internal/htmltext"
)

// bound is the most text Convert may write for a document of n bytes.
func bound(n int) int { return 4*n + 1<<10 }

func TestConvert(t *testing.T) {
	base, err := url.Parse("https://example.com/docs/page?q=1")
	if err != nil {
		t.Fatal(err)
	}
	links := htmltext.Options{Base: base}
	titled := htmltext.Options{TitleHeading: true}
	for _, tc := range []struct {
		name, html string
		opts       htmltext.Options
		want       string
	}{
		{"Paragraphs", "<p>one  two\n three</p><div>four</div>five", htmltext.Options{}, "one two three\n\nfour\n\nfive"},
		{"Headings", "<h1>One</h1>a<h3>Three</h3><h2></h2><h2/>b", htmltext.Options{}, "# One\n\na\n\n### Three\n\nb"},
		{"TitleHeading", "<title> The \n Title </title><h2>Sub</h2>x", titled, "# The Title\n\n## Sub\n\nx"},
		{"TitleHeadingWithH1", "<title>T</title><h1>Own</h1>x", titled, "# Own\n\nx"},
		{"TitleHeadingOnly", "<title>T</title>", titled, "# T"},
		{"TitleNotInText", "<title>T</title>x", htmltext.Options{}, "x"},
		{"Lists", "<ul><li>a</li><li>b<ol><li>c</li><li>d</li></ol></li></ul><ol><li>e<li>f</ol>", htmltext.Options{},
			"- a\n- b\n  1. c\n  2. d\n1. e\n2. f"},
		{"ListItemAlone", "<li>x</li>", htmltext.Options{}, "- x"},
		{"EmptyListItems", "<ul><li></li><li> </li><li>x</li></ul>", htmltext.Options{}, "- x"},
		{"DeepList", strings.Repeat("<ul><li>x", 10), htmltext.Options{},
			"- x\n  - x\n    - x\n      - x\n        - x\n          - x\n            - x\n              - x\n              - x\n              - x"},
		{"DeepOrderedList", strings.Repeat("<ol><li>x", 9) + "<li>y</ol><li>z", htmltext.Options{},
			"1. x\n  1. x\n    1. x\n      1. x\n        1. x\n          1. x\n            1. x\n              1. x\n              1. x\n              2. y\n              3. z"},
		{"Table", "<table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td> 1 </td></tr></table>", htmltext.Options{},
			"Name | Value\na | 1"},
		{"Br", "one<br>two<br/>three<hr>four", htmltext.Options{}, "one\ntwo\nthree\n\nfour"},
		{"Entities", "<p>a &lt;b&gt; &amp; &quot;c&quot; &#x416;&nbsp;d</p>", htmltext.Options{}, `a <b> & "c" Ж d`},
		{"InlineCode", "<p>run <code>go test</code>, then <kbd>q</kbd></p>", htmltext.Options{}, "run `go test`, then `q`"},
		{"Pre", "<pre>\nline 1\n  line 2<br>line 3\n\n</pre>after", htmltext.Options{}, "```\nline 1\n  line 2\nline 3\n```\n\nafter"},
		{"PreLanguage", `<pre><code class="hljs language-go">x := 1</code></pre>`, htmltext.Options{}, "```go\nx := 1\n```"},
		{"PreBackticks", "<pre>use ```fences``` and `ticks`</pre>", htmltext.Options{}, "````\nuse ```fences``` and `ticks`\n````"},
		{"PreUnclosed", "<p>a</p><pre>code <b>bold</b>", htmltext.Options{}, "a\n\n```\ncode bold\n```"},
		{"PreEmpty", "<pre> \n </pre>x", htmltext.Options{}, "x"},
		{"Dropped", "<p>a<script>x()</script><style>p{}</style>b</p><nav>menu</nav><footer>foot</footer>" +
			"<svg><text>chart</text></svg><button>Go</button><select><option>1</select><noscript>JS</noscript>", htmltext.Options{}, "ab"},
		{"NestedDropped", "<nav><nav>inner</nav>still nav</nav>after", htmltext.Options{}, "after"},
		{"Hidden", `<div hidden>a<div>b</div>c</div><span aria-hidden="true">icon</span><span aria-hidden="false">d</span>`, htmltext.Options{}, "d"},
		{"HeaderFooterOfPage", "<header>Site</header><main><header>Title</header>body<footer>By Ada</footer></main><footer>©</footer>",
			htmltext.Options{}, "Title\n\nbody\n\nBy Ada"},
		{"HeaderInArticle", "<article><header><h1>A</h1></header>x</article><header>banner</header>", htmltext.Options{}, "# A\n\nx"},
		{"EmptyBlocks", "<div><p></p><div> </div></div><p>x</p><h2></h2><p>y</p>", htmltext.Options{}, "x\n\ny"},
		{"Malformed", "<p>unclosed <b>bold<p>next &bogus; <", htmltext.Options{}, "unclosed bold\n\nnext &bogus; <"},
		{"LinksLeftOut", `see <a href="/x">the guide</a>.`, htmltext.Options{}, "see the guide."},
		{"Links", `see <a href="/guide#setup">the guide</a>, <a href="https://example.org/x">https://example.org/x</a>` +
			` and <a href="#top">the top</a>, <a href="javascript:void(0)">js</a>, <a href="mailto:a@example.com">mail</a>.`,
			links, "see the guide (https://example.com/guide#setup), https://example.org/x and the top, js, mail."},
		{"RelativeLink", `<a href="other">o</a> <a href="?p=2">next</a>`, links,
			"o (https://example.com/docs/other) next (https://example.com/docs/page?p=2)"},
		{"ImageLink", `<a href="/logo"><img src="l.png" alt=" Logo "></a> text <a href="/icon"><img src="i.png"></a>`, links,
			"Logo (https://example.com/logo) text"},
		{"UnclosedLinks", `<a href="/a">a<a href="/b">b`, links, "a (https://example.com/a)b (https://example.com/b)"},
		{"MaxBytes", "<p>one two three</p>", htmltext.Options{MaxBytes: 9}, "one two t"},
		{"MaxBytesRune", "<p>ab é</p>", htmltext.Options{MaxBytes: 4}, "ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := htmltext.Convert(tc.html, tc.opts)
			if got.Text != tc.want {
				t.Errorf("Convert(%q).Text =\n%q\nwant\n%q", tc.html, got.Text, tc.want)
			}
			if wantCut := tc.opts.MaxBytes > 0; got.Cut != wantCut {
				t.Errorf("Cut = %v, want %v", got.Cut, wantCut)
			}
		})
	}
}

func TestConvertTitle(t *testing.T) {
	for _, tc := range []struct{ html, want string }{
		{"<title> Release\n  notes </title><title>second</title>", "Release notes"},
		{"<svg><title>chart</title></svg><p>x</p>", ""},
		{"<title>" + strings.Repeat("é", 1000) + "</title>", strings.Repeat("é", 512)},
	} {
		if got := htmltext.Convert(tc.html, htmltext.Options{}).Title; got != tc.want {
			t.Errorf("Title of %.40q = %.40q, want %.40q", tc.html, got, tc.want)
		}
	}
}

// hostile returns documents of about n bytes whose tags are never closed, the
// markup of the F1 finding, and others that once made the converters quadratic.
func hostile(n int) map[string]string {
	repeat := func(unit string) string { return strings.Repeat(unit, n/len(unit)) }
	return map[string]string{
		"UnclosedList":       repeat("<ul><li>"),
		"UnclosedListText":   repeat("<ul><li>x"),
		"UnclosedOrdered":    repeat("<ol><li>x"),
		"DeepOrderedItems":   strings.Repeat("<ol>", 8) + repeat("<li>x"), // the most text per byte
		"UnclosedBlockquote": repeat("<blockquote>x"),
		"UnclosedTable":      repeat("<table><tr><td>x"),
		"UnclosedDiv":        repeat("<div>x"),
		"UnclosedHeadings":   repeat("<h1>x<h2>y"),
		"UnclosedCode":       repeat("<code>x"),
		"UnclosedLinks":      repeat(`<a href="?">x`),
		"Backticks":          "<pre>" + strings.Repeat("`", n) + "</pre>",
		"CodeInPre":          "<pre>" + repeat(" <code>"),
		"HiddenNesting":      `<div hidden>` + repeat("<div>"),
	}
}

// allocated returns the bytes that f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The converter's memory is linear in its input, however the markup nests: a page
// of 800 KB (under fetch_url's 1 MiB) of unclosed <ul><li> once took the bot down.
func TestConvertHostile(t *testing.T) {
	base, err := url.Parse("https://example.com/" + strings.Repeat("long/", 200))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{128 << 10, 800 << 10} {
		for name, doc := range hostile(n) {
			t.Run(fmt.Sprintf("%s/%dKB", name, n>>10), func(t *testing.T) {
				for _, opts := range []htmltext.Options{{TitleHeading: true}, {Base: base}} {
					var got htmltext.Document
					start := time.Now()
					bytes := allocated(func() { got = htmltext.Convert(doc, opts) })
					t.Logf("base %v: %d bytes in, %d bytes out (cut %v), %d bytes allocated, %s",
						opts.Base != nil, len(doc), len(got.Text), got.Cut, bytes, time.Since(start))
					if limit := uint64(20*len(doc) + 1<<20); bytes > limit {
						t.Errorf("base %v: %d bytes allocated, want at most %d", opts.Base != nil, bytes, limit)
					}
					if len(got.Text) > bound(len(doc)) {
						t.Errorf("base %v: %d bytes of text, want at most %d", opts.Base != nil, len(got.Text), bound(len(doc)))
					}
				}
			})
		}
	}
}

// BenchmarkConvert converts a documentation page of about 70 KB as fetch_url
// (links) and ingest (title heading) do.
func BenchmarkConvert(b *testing.B) {
	doc := realisticPage()
	base, err := url.Parse("https://example.com/docs/operations")
	if err != nil {
		b.Fatal(err)
	}
	for _, bm := range []struct {
		name string
		opts htmltext.Options
	}{
		{"Links", htmltext.Options{Base: base}},
		{"TitleHeading", htmltext.Options{TitleHeading: true}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				htmltext.Convert(doc, bm.opts)
			}
		})
	}
}

// BenchmarkConvertHostile converts 800 KB of unclosed <ul><li>.
func BenchmarkConvertHostile(b *testing.B) {
	doc := hostile(800 << 10)["UnclosedListText"]
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		htmltext.Convert(doc, htmltext.Options{})
	}
}

func ExampleConvert() {
	base, _ := url.Parse("https://example.com/handbook/")
	doc := htmltext.Convert(`<html><head><title>Handbook</title><script>track()</script></head>
<body><nav><a href="/">Home</a></nav>
<main><h1>Travel</h1><p>Book through the <a href="desk">travel desk</a>.</p>
<ol><li>Fly economy</li><li>Keep receipts</li></ol>
<pre><code class="language-sh">expenses submit</code></pre></main>
<footer>© Example</footer></body></html>`, htmltext.Options{Base: base})
	fmt.Println(doc.Title)
	fmt.Println(doc.Text)
	// Output:
	// Handbook
	// # Travel
	//
	// Book through the travel desk (https://example.com/handbook/desk).
	//
	// 1. Fly economy
	// 2. Keep receipts
	//
	// ```sh
	// expenses submit
	// ```
}
