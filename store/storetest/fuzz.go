package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// SearchSeeds are search queries full of the syntax of SQLite FTS5 and PostgreSQL
// tsquery: operators, quotes, column filters, prefixes, escapes.
var SearchSeeds = []string{
	`"AND OR NOT *"`, `NOT special`, `*`, `"`, `'`, `\`, `''`, `(`, `)`, `-x`, `^x`, `a:*`,
	`NEAR(a b, 2)`, `heading:operators`, `{heading text}: x`, `a & b | !c`, `'special' & !`,
	`<->`, `a <2> b`, `"unterminated`, `x" OR "y`, `it's`, `O'Reilly's \'quoted\'`, `a\\'b`,
	`foo-bar c++ e-mail@example.com http://x.y/z?q=1`, `'':*`, `x'); DROP TABLE chunks; --`,
	"\x00", "\xff\xfe", "Grüße, café, 日本語の検索, Ελληνικά", "   ", "",
	strings.Repeat("word ", 300), strings.Repeat(`"`, 300),
}

// FuzzSearch fuzzes kb.Search with any query: it is never read as search syntax.
// kb must be empty. For each query it stores a chunk whose text is the query beside
// three others, then searches: Search must not fail; a query without words finds
// nothing; a query of at most sqlstore.MaxQueryChars ASCII characters with a word
// finds its own chunk.
func FuzzSearch(f *testing.F, kb conversation.Knowledge) {
	for _, q := range SearchSeeds {
		f.Add(q)
	}
	ctx := context.Background()
	mustReplace(f, kb, "background.md", "h", true,
		chunk("Background", "alpha beta"), chunk("More", "the quick brown fox"), chunk("Else", "gamma delta"))
	f.Fuzz(func(t *testing.T, q string) {
		sum := sha256.Sum256([]byte(q))
		_, err := kb.ReplaceSource(ctx, "query.md", hex.EncodeToString(sum[:]), conversation.Origin{}, []conversation.Chunk{chunk("Query", q)})
		stored := err == nil
		ps, err := kb.Search(ctx, q, 10)
		if err != nil {
			t.Fatalf("Search(%q): %v", q, err)
		}
		if strings.TrimFunc(q, notAWord) == "" && len(ps) > 0 {
			t.Errorf("Search(%q) = %q; want nothing for a query without words", q, refs(ps))
		}
		if !stored || len(q) > sqlstore.MaxQueryChars || !asciiWithWord(q) {
			return
		}
		for _, p := range ps {
			if p.Heading == "Query" {
				return
			}
		}
		t.Errorf("Search(%q) = %q; want the chunk that holds the query", q, refs(ps))
	})
}

// asciiWithWord reports whether q is ASCII with a letter or digit.
func asciiWithWord(q string) bool {
	word := false
	for _, r := range q {
		if r >= utf8.RuneSelf {
			return false
		}
		word = word || unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	return word
}
