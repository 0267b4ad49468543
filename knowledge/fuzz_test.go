package knowledge_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/knowledge"
)

// knowledgeSeeds are documents of every shape the splitters handle.
var knowledgeSeeds = []string{
	"# Title\n\nOne paragraph.\n\n## Next\n\nAnother.",
	"---\ntitle: Front\n---\nText before a heading.\n\nSetext\n======\n\nbody\n\nSub\n---\n\nmore",
	"```go\n" + strings.Repeat("fmt.Println(\"line\")\n", 200) + "```\n\nafter the code",
	"~~~\n" + strings.Repeat("x", 3000) + "\n~~~",
	strings.Repeat("A sentence that goes on. ", 200),
	strings.Repeat("word", 800),
	"\ufeffa\r\nb\rc\n\n\n" + strings.Repeat("ü", 2500),
	strings.Repeat("# h\n", 50) + "```\nunclosed",
}

// FuzzSplitMarkdown checks that every chunk is under MaxChunkChars characters (a
// fenced code block under MaxFenceChars), is numbered in order, and holds only text of
// the document, in the document's order (lines such as headings and rules may be
// left out).
func FuzzSplitMarkdown(f *testing.F) {
	fuzzSplit(f, knowledge.SplitMarkdown, true, func(t *testing.T, md, chunks string) {
		if !subsequence(content(chunks), content(md)) {
			t.Fatalf("the chunks hold text that is not the document's, in its order: %q", chunks)
		}
	})
}

// FuzzSplitText checks that every chunk is under MaxChunkChars characters, numbered
// in order, and that the chunks together hold the whole text, whitespace aside.
func FuzzSplitText(f *testing.F) {
	fuzzSplit(f, knowledge.SplitText, false, func(t *testing.T, text, chunks string) {
		if got, want := noSpace(chunks), noSpace(strings.TrimPrefix(text, "\ufeff")); got != want {
			t.Fatalf("the chunks hold %q, the text %q", got, want)
		}
	})
}

// fuzzSplit fuzzes split with the seeds, checks each input's chunks (checkChunks;
// fences tells whether split keeps fenced code whole), and hands the input and the
// chunks' texts, a line apart, to check.
func fuzzSplit(f *testing.F, split func(string) []conversation.Chunk, fences bool, check func(t *testing.T, in, chunks string)) {
	for _, s := range knowledgeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !utf8.ValidString(in) {
			t.Skip()
		}
		chunks := split(in)
		checkChunks(t, chunks, fences)
		var all strings.Builder
		for _, c := range chunks {
			all.WriteString(c.Text + "\n")
		}
		check(t, in, all.String())
	})
}

// checkChunks checks the size and numbering of chunks: under MaxChunkChars
// characters, or, with fences, MaxFenceChars for a fenced code block.
func checkChunks(t *testing.T, chunks []conversation.Chunk, fences bool) {
	t.Helper()
	for i, c := range chunks {
		n := utf8.RuneCountInString(c.Text)
		text := strings.TrimSpace(c.Text)
		limit := knowledge.MaxChunkChars
		if fences && (strings.HasPrefix(text, "```") || strings.HasPrefix(text, "~~~")) {
			limit = knowledge.MaxFenceChars
		}
		if n > limit || text == "" {
			t.Errorf("chunk %d has %d characters (limit %d)", i, n, limit)
		}
		if c.Ordinal != i {
			t.Errorf("chunk %d numbered %d", i, c.Ordinal)
		}
	}
}

// content returns s without whitespace and code fence lines (``` or ~~~ with their
// language).
func content(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			lines[i] = ""
		}
	}
	return noSpace(strings.Join(lines, "\n"))
}

// subsequence reports whether the runes of a occur in b in the same order.
func subsequence(a, b string) bool {
	for _, r := range a {
		i := strings.IndexRune(b, r)
		if i < 0 {
			return false
		}
		b = b[i+utf8.RuneLen(r):]
	}
	return true
}

// noSpace returns s without whitespace.
func noSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
