package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Knowledge is the knowledge base: sources and their chunks, searched by words (see
// searchSQL).
type Knowledge struct{ *pool }

var _ conversation.Knowledge = (*Knowledge)(nil)

// searchSQL ranks the chunks that hold any word of the query, best first, at most ?2,
// in one statement. ?1 is the query's words as a JSON array of FTS5 strings, each a
// word in double quotes (see queryWords):
//
//   - term: each word with df, the number of chunks that hold it (a count of the
//     word's matches, which reads its list of chunks in the index, not the chunks).
//   - kept: the words that at most half the chunks hold, n being the number of chunks
//     (the sum of sources.chunks); or, when the query has none, those that some chunk
//     holds. A word that most chunks hold says nothing about which one answers: these
//     are the corpus's own stop words ("the", "how", "и"), in any language.
//   - best: the chunks that hold any kept word (the words joined by OR; the empty
//     string "", which matches nothing, when there is none), ranked by bm25(), which
//     weighs each word by its rarity among the chunks (inverse document frequency)
//     and by how often it occurs in a chunk (less and less), against the chunk's
//     length. A word of the heading counts four times as much as one of the
//     text (the weights 4 and 1 of chunks_fts's columns, as PostgreSQL's weights B and
//     D). bm25() is lower for better matches, so the best come first in ascending
//     order (ties in rowid order, which is the order the chunks were stored in), and
//     score is its negation, so that higher is better, as conversation.Passage says.
//     The chunks' rows are read for the best ?2 only.
const searchSQL = `
WITH term AS (
	SELECT j.value AS word, (SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH j.value) AS df
	FROM json_each(?1) AS j
),
found AS (
	SELECT term.word, term.df, total.n
	FROM term, (SELECT coalesce(sum(chunks), 0) AS n FROM sources) AS total
	WHERE term.df > 0
),
kept AS (
	SELECT word FROM found WHERE 2 * df <= n OR NOT EXISTS (SELECT 1 FROM found WHERE 2 * df <= n)
),
best AS (
	SELECT rowid AS id, bm25(chunks_fts, 4.0, 1.0) AS rank FROM chunks_fts
	WHERE chunks_fts MATCH (SELECT coalesce(group_concat(word, ' OR '), '""') FROM kept)
	ORDER BY rank, rowid LIMIT ?2
)
SELECT c.source, c.ordinal, c.heading, c.text, -best.rank AS score, s.untrusted
FROM best JOIN chunks AS c ON c.id = best.id JOIN sources AS s ON s.source = c.source
ORDER BY best.rank, c.source, c.ordinal`

// ReplaceSource stores chunks as the whole content of source, in one transaction: it
// replaces the source's row and chunks (chunks_fts follows, by trigger), unless the
// source is stored with hash already, and then it changes nothing and returns false.
// The chunks are numbered from 0 in the order given.
func (s *Knowledge) ReplaceSource(ctx context.Context, source, hash string, origin conversation.Origin, chunks []conversation.Chunk) (bool, error) {
	origin = sqlstore.OriginOf(origin)
	ok, err := sqlstore.ReplaceSource(source, hash, chunks, func(chunks []conversation.Chunk, now time.Time) (bool, error) {
		return s.replaceSource(ctx, source, hash, origin, chunks, now)
	})
	return ok, classify(err)
}

func (s *Knowledge) replaceSource(ctx context.Context, source, hash string, origin conversation.Origin, chunks []conversation.Chunk, now time.Time) (bool, error) {
	tx, err := s.write.BeginTxx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var stored sqlstore.SourceRow[timestamp]
	err = tx.GetContext(ctx, &stored, `SELECT hash, origin, untrusted FROM sources WHERE source = ?`, source)
	switch {
	case err == nil && stored.Hash == hash && stored.Origin == origin.By && stored.Untrusted == origin.Untrusted:
		return false, nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE source = ?`, source); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO sources (source, hash, chunks, ingested_at, created_at, origin, untrusted) VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6)
		ON CONFLICT (source) DO UPDATE SET hash = excluded.hash, chunks = excluded.chunks, ingested_at = excluded.ingested_at,
			origin = excluded.origin, untrusted = excluded.untrusted`,
		source, hash, len(chunks), timestamp(now), origin.By, origin.Untrusted); err != nil {
		return false, err
	}
	insert, err := tx.PrepareContext(ctx, `
		INSERT INTO chunks (source, ordinal, heading, text, created_at) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return false, err
	}
	defer insert.Close()
	for _, c := range chunks {
		if _, err := insert.ExecContext(ctx, source, c.Ordinal, c.Heading, c.Text, timestamp(now)); err != nil {
			return false, err
		}
	}
	return true, tx.Commit()
}

// DeleteSource removes source and its chunks (ON DELETE CASCADE; chunks_fts follows,
// by trigger). Errors: conversation.ErrNotFound.
func (s *Knowledge) DeleteSource(ctx context.Context, source string) error {
	return classify(sqlstore.DeleteSource(source, func() (sql.Result, error) {
		return s.write.ExecContext(ctx, `DELETE FROM sources WHERE source = ?`, source)
	}))
}

// Sources lists the ingested sources, sorted by path byte-wise.
func (s *Knowledge) Sources(ctx context.Context) ([]conversation.SourceInfo, error) {
	infos, err := sqlstore.Sources(func(rows *[]sqlstore.SourceRow[timestamp]) error {
		return s.read.SelectContext(ctx, rows, `SELECT source, hash, chunks, ingested_at, origin, untrusted FROM sources ORDER BY source`)
	})
	return infos, classify(err)
}

// Search returns up to limit chunks that hold any word of query, best first, in one
// statement (searchSQL). The query is never read as FTS5 syntax: queryWords quotes
// its words.
func (s *Knowledge) Search(ctx context.Context, query string, limit int) ([]conversation.Passage, error) {
	passages, err := sqlstore.Search(query, limit, func(query string, limit int, rows *[]sqlstore.PassageRow) error {
		words := queryWords(query)
		if len(words) == 0 {
			return nil
		}
		js, err := json.Marshal(words)
		if err != nil {
			return err
		}
		return s.read.SelectContext(ctx, rows, searchSQL, string(js), limit)
	})
	return passages, classify(err)
}

// queryWords returns the distinct words of query (runs of letters, digits and marks,
// the characters that the unicode61 tokenizer keeps; at most sqlstore.MaxQueryWords),
// each an FTS5 string, in double quotes: "parental". A string is literal, so AND,
// NEAR, *, ^ or a column name in query are words like any other; a word holds no
// double quote, the one character a string would have to escape. Words of one letter
// are left out unless the query has no other (see wordOf).
func queryWords(query string) []string {
	words := strings.FieldsFunc(query, func(r rune) bool {
		return !unicode.In(r, unicode.L, unicode.N, unicode.M, unicode.Co)
	})
	var terms, letters []string
	seen := make(map[string]bool, len(words))
	for _, w := range words {
		w = strings.ToLower(w)
		if seen[w] || len(terms) == sqlstore.MaxQueryWords {
			continue
		}
		seen[w] = true
		if wordOf(w) {
			terms = append(terms, `"`+w+`"`)
		} else {
			letters = append(letters, `"`+w+`"`)
		}
	}
	if len(terms) == 0 {
		terms = letters[:min(len(letters), sqlstore.MaxQueryWords)]
	}
	return terms
}

// wordOf reports whether w, a word of a query, is one to search for: anything but a
// single letter of an alphabet, such as the "s" of "what's" or the "m" of "I'm",
// which would match chunks by their apostrophes. A digit, or a Chinese, Japanese or
// Korean character, is a word; store/postgres's searchSQL has the same rule.
func wordOf(w string) bool {
	r, size := utf8.DecodeRuneInString(w)
	return size < len(w) || unicode.IsDigit(r) || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
