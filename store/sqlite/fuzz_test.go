package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
	"github.com/threadwright/threadwright/store/storetest"
)

// openFuzz opens a store in a new file and closes it when the fuzz target ends.
func openFuzz(f *testing.F) *Store {
	s, err := Open(context.Background(), filepath.Join(f.TempDir(), "fuzz.db"))
	return storetest.Opened(f, s, err)
}

// FuzzQueryWords checks that queryWords turns any query into at most
// sqlstore.MaxQueryWords FTS5 strings, each a word in double quotes with no quote
// inside, and that the real chunks_fts table takes each of them, and all of them
// joined with OR as searchSQL joins them, as a MATCH expression without error.
func FuzzQueryWords(f *testing.F) {
	for _, q := range storetest.SearchSeeds {
		f.Add(q)
	}
	s := openFuzz(f)
	f.Fuzz(func(t *testing.T, q string) {
		words := queryWords(textcut.Runes(q, sqlstore.MaxQueryChars))
		if len(words) > sqlstore.MaxQueryWords {
			t.Errorf("%d words, want at most %d", len(words), sqlstore.MaxQueryWords)
		}
		for _, w := range words {
			inner, quoted := strings.CutPrefix(w, `"`)
			inner, closed := strings.CutSuffix(inner, `"`)
			if !quoted || !closed || inner == "" || strings.ContainsAny(inner, "\" \t\n\x00") {
				t.Fatalf("term %q of %q is not one quoted word", w, q)
			}
		}
		for _, match := range append(words, strings.Join(words, " OR ")) {
			if match == "" {
				continue
			}
			var n int
			if err := s.read.QueryRowContext(context.Background(), `SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?`, match).Scan(&n); err != nil {
				t.Fatalf("MATCH %q (from %q): %v", match, q, err)
			}
		}
	})
}

// FuzzSearch runs storetest.FuzzSearch on a store.
func FuzzSearch(f *testing.F) {
	storetest.FuzzSearch(f, openFuzz(f))
}
