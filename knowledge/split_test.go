package knowledge_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/knowledge"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with the file testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// chunksJSON renders chunks for a golden file.
func chunksJSON(t *testing.T, chunks []conversation.Chunk) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(chunks); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSplitMarkdownGolden(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("testdata", "handbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "handbook.chunks.json", chunksJSON(t, knowledge.SplitMarkdown(string(md))))
}

func TestHTMLToMarkdownGolden(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "page.html"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	md, err := knowledge.HTMLToMarkdown(f)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "page.md", []byte(md+"\n"))
	golden(t, "page.chunks.json", chunksJSON(t, knowledge.SplitMarkdown(md)))
}

func headings(chunks []conversation.Chunk) []string {
	out := []string{}
	for _, c := range chunks {
		out = append(out, c.Heading)
	}
	return out
}

func TestSplitMarkdownHeadings(t *testing.T) {
	for _, tc := range []struct {
		name, md string
		want     []string
	}{
		{"ATX", "intro\n\n# One\n\na\n\n## Two ##\n\nb\n\n###### Six\n\nc", []string{"", "One", "Two", "Six"}},
		{"Setext", "One\n===\n\na\n\nTwo\n---\nb", []string{"One", "Two"}},
		{"NotHeadings", "#hashtag\n\n####### seven\n\n    # indented code", []string{""}},
		{"InFence", "# Real\n\n```\n# not a heading\n```\n\n~~~~\n## nor this\n~~~~", []string{"Real"}},
		{"ThematicBreak", "- item\n---\n\ntext\n\n* * *\n", []string{""}},
		{"EmptySections", "# A\n## B\n\ntext\n\n# C\n", []string{"B"}},
		{"FrontMatterTitle", "---\ntitle: \"Guide\"\ntags: [a]\n---\nintro\n\n# Next\n\nmore", []string{"Guide", "Next"}},
		{"CRLF", "# One\r\n\r\na\r\n", []string{"One"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks := knowledge.SplitMarkdown(tc.md)
			if got := headings(chunks); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("headings = %q; want %q (chunks %+v)", got, tc.want, chunks)
			}
			for i, c := range chunks {
				if c.Ordinal != i || c.Source != "" || strings.TrimSpace(c.Text) == "" {
					t.Errorf("chunk %d = %+v; want ordinal %d, no source, some text", i, c, i)
				}
			}
		})
	}
}

// checkSizes fails unless every chunk is under max characters.
func checkSizes(t *testing.T, chunks []conversation.Chunk, max int) {
	t.Helper()
	for i, c := range chunks {
		if n := utf8.RuneCountInString(c.Text); n > max {
			t.Errorf("chunk %d has %d characters; want at most %d", i, n, max)
		}
	}
}

func TestSplitMarkdownSizes(t *testing.T) {
	t.Run("Paragraphs", func(t *testing.T) {
		var paras []string
		for i := range 40 {
			paras = append(paras, fmt.Sprintf("Paragraph %d.%s", i, strings.Repeat(" Отпуск и работа.", 10)))
		}
		chunks := knowledge.SplitMarkdown("# Long\n\n" + strings.Join(paras, "\n\n"))
		checkSizes(t, chunks, knowledge.MaxChunkChars)
		if len(chunks) < 6 {
			t.Errorf("%d chunks; want the section cut into several", len(chunks))
		}
		// Cut between paragraphs: nothing lost, nothing reordered, nothing cut in half.
		var all []string
		for _, c := range chunks {
			if c.Heading != "Long" {
				t.Errorf("chunk %d heading %q; want Long", c.Ordinal, c.Heading)
			}
			all = append(all, strings.Split(c.Text, "\n\n")...)
		}
		if !reflect.DeepEqual(all, paras) {
			t.Errorf("paragraphs of the chunks differ from the document's")
		}
	})
	t.Run("FenceKeptWhole", func(t *testing.T) {
		code := "```go\n" + strings.Repeat("fmt.Println(\"hello, world\")\n", 60) + "```" // ~1,700 characters
		md := "# Code\n\n" + strings.Repeat("Some text. ", 50) + "\n\n" + code + "\n\nAfter."
		chunks := knowledge.SplitMarkdown(md)
		var found bool
		for _, c := range chunks {
			if strings.Contains(c.Text, "```go") {
				found = c.Text == code
				if !found {
					t.Errorf("the fence's chunk = %q; want the fence alone, whole", c.Text)
				}
			}
		}
		if !found {
			t.Error("no chunk holds the fence")
		}
	})
	t.Run("HugeFence", func(t *testing.T) {
		var lines []string
		for i := range 300 {
			lines = append(lines, fmt.Sprintf("    line %03d = compute(x, y)", i))
		}
		chunks := knowledge.SplitMarkdown("```python\n" + strings.Join(lines, "\n") + "\n```\n")
		checkSizes(t, chunks, knowledge.MaxChunkChars)
		var got []string
		for _, c := range chunks {
			body, ok := strings.CutPrefix(c.Text, "```python\n")
			body, ok2 := strings.CutSuffix(body, "\n```")
			if !ok || !ok2 {
				t.Fatalf("piece %q is not fenced as the block was", c.Text)
			}
			got = append(got, strings.Split(body, "\n")...)
		}
		if !reflect.DeepEqual(got, lines) {
			t.Errorf("the pieces' lines differ from the block's (indentation kept, none lost)")
		}
	})
	t.Run("LongParagraph", func(t *testing.T) {
		p := strings.Repeat("This sentence is about forty characters. ", 80)
		chunks := knowledge.SplitMarkdown(p)
		checkSizes(t, chunks, knowledge.MaxChunkChars)
		for _, c := range chunks {
			if !strings.HasSuffix(c.Text, "characters.") {
				t.Errorf("chunk %q; want it cut after a sentence", c.Text[max(0, len(c.Text)-20):])
			}
		}
	})
	t.Run("LongWord", func(t *testing.T) {
		w := strings.Repeat("ж", 3000)
		chunks := knowledge.SplitText(w)
		checkSizes(t, chunks, knowledge.MaxChunkChars)
		var all strings.Builder
		for _, c := range chunks {
			all.WriteString(c.Text)
		}
		if all.String() != w {
			t.Error("the pieces of a long word do not add up to it")
		}
	})
}

func TestSplitText(t *testing.T) {
	chunks := knowledge.SplitText("\ufeff# Not a heading\r\nstill the first paragraph\n\n\n\nsecond ```\n   \n")
	want := []conversation.Chunk{{Ordinal: 0, Text: "# Not a heading\nstill the first paragraph\n\nsecond ```"}}
	if !reflect.DeepEqual(chunks, want) {
		t.Errorf("SplitText = %+v; want %+v", chunks, want)
	}
	if chunks := knowledge.SplitText(" \n\n\t"); len(chunks) != 0 {
		t.Errorf("SplitText of blank text = %+v; want none", chunks)
	}
}

func TestHTMLToMarkdown(t *testing.T) {
	for _, tc := range []struct{ name, html, want string }{
		{"TitleWithoutH1", "<title> The  Title </title><h2>Sub</h2><p>x</p>", "# The Title\n\n## Sub\n\nx"},
		{"TitleWithH1", "<title>T</title><h1>Own</h1>x", "# Own\n\nx"},
		{"Entities", "<p>a &lt;b&gt; &amp; &quot;c&quot; &#x416;</p>", `a <b> & "c" Ж`},
		{"Dropped", "<p>a<script>x()</script><style>p{}</style>b</p><nav>menu</nav><footer>foot</footer>", "ab"},
		{"NestedDropped", "<nav><nav>inner</nav>still nav</nav>after", "after"},
		{"Br", "one<br>two<br/>three", "one\ntwo\nthree"},
		{"EmptyBlocks", "<div><p></p><div> </div></div><p>x</p><h2></h2><p>y</p>", "x\n\ny"},
		{"InlineCode", "<p>run <code>go test</code>, then <kbd>q</kbd></p>", "run `go test`, then `q`"},
		{"PreWithBackticks", "<pre>\nuse ```fences```\n  indented</pre>", "````\nuse ```fences```\n  indented\n````"},
		{"Malformed", "<p>unclosed <b>bold<p>next &bogus; <", "unclosed bold\n\nnext &bogus; <"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := knowledge.HTMLToMarkdown(strings.NewReader(tc.html))
			if err != nil || got != tc.want {
				t.Errorf("HTMLToMarkdown = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// A 108 KB page of unclosed list items once made HTMLToMarkdown allocate 709 MB and
// write 144 MB (finding F1): lists nested deeper than eight levels are written as at
// the eighth.
func TestHTMLToMarkdownUnclosedLists(t *testing.T) {
	page := strings.Repeat("<ul><li>x", 108<<10/9)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	md, err := knowledge.HTMLToMarkdown(strings.NewReader(page))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n, most := after.TotalAlloc-before.TotalAlloc, uint64(20*len(page)+1<<20); n > most {
		t.Errorf("%d bytes allocated; want at most %d", n, most)
	}
	if most := 4*len(page) + 1<<10; len(md) > most {
		t.Errorf("%d bytes of Markdown; want at most %d", len(md), most)
	}
	if want := strings.Repeat("\n"+strings.Repeat("  ", 7)+"- x", 2); !strings.HasSuffix(md, want) {
		t.Errorf("Markdown ends %q; want items at the eighth level", md[max(len(md)-100, 0):])
	}
}

func ExampleSplitMarkdown() {
	chunks := knowledge.SplitMarkdown(`# Leave

## Parental leave

Sixteen weeks, paid.

## Sick leave

Tell your manager before ten.
`)
	for _, c := range chunks {
		fmt.Printf("%d %s: %s\n", c.Ordinal, c.Heading, c.Text)
	}
	// Output:
	// 0 Parental leave: Sixteen weeks, paid.
	// 1 Sick leave: Tell your manager before ten.
}
