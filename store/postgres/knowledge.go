package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lib/pq"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Knowledge is the knowledge base: sources and their chunks, searched by words (see
// searchSQL).
type Knowledge struct{ *pool }

var _ conversation.Knowledge = (*Knowledge)(nil)

// searchSQL ranks the chunks that hold any word of the query $1, best first, at most
// $2, in one statement (prepared once per connection, like the statements of a turn):
//
//   - lexeme: the query's words as the index has them, the lexemes of
//     to_tsvector('simple', $1), so that the query is split, lowercased and stripped
//     of punctuation exactly as the chunks were, and never read as tsquery syntax
//     ("AND", "!" or "*" are words, or nothing). A word of one letter of an alphabet
//     (the "s" of "what's") is left out unless the query has no other, as in
//     store/sqlite.
//   - term: the first 32 of them (sqlstore.MaxQueryWords), each quoted into a
//     one-lexeme tsquery (a backslash and a quote escaped), with df, the number of
//     chunks that hold it, counted on the GIN index.
//   - found, weighted: the words that at most half the chunks hold, n being the
//     number of chunks (the sum of sources.chunks); or, when the query has none, those
//     that some chunk holds. A word that most chunks hold says nothing about which one
//     answers: these are the corpus's own stop words ("the", "how", "и"), in any
//     language. Each is weighed by its inverse document frequency
//     ln(1 + (n - df + 0.5) / (df + 0.5)), BM25's, as SQLite's bm25() computes it: a
//     word in half the chunks weighs 0.7, a word in one chunk of a thousand 6.5.
//   - The chunks matching any word (the words' tsqueries joined with |, a condition
//     the GIN index answers) are scored with the sum, over the words, of the word's
//     weight times ts_rank of the chunk for the word alone, which grows with how often
//     the word occurs (less and less), counts a word of the heading (weight B) four
//     times as much as one of the text (D), and is divided by 1 + ln(the chunk's
//     length in words) (normalization 1), as bm25() favours short chunks. Ties go in
//     source and ordinal order.
//
// ts_rank of the whole query would weigh every word alike, so that a chunk saying
// "the" ten times would beat one that says "parental leave" once; and plainto_tsquery
// or websearch_to_tsquery would AND the words, while a question rarely has all its
// words in one chunk.
const searchSQL = `
WITH lexeme AS (
	SELECT u.lexeme AS w, u.positions[1] AS pos,
		char_length(u.lexeme) > 1 OR u.lexeme ~ '[0-9\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]' AS word
	FROM unnest(to_tsvector('simple', $1::text)) AS u
),
term AS MATERIALIZED (
	SELECT q.q, (SELECT count(*) FROM chunks WHERE tsv @@ q.q) AS df
	FROM (
		SELECT w FROM lexeme WHERE word OR NOT EXISTS (SELECT FROM lexeme WHERE word)
		ORDER BY pos LIMIT 32 -- sqlstore.MaxQueryWords
	) AS l,
		LATERAL (SELECT ('''' || replace(replace(l.w, '\', '\\'), '''', '''''') || '''')::tsquery AS q) AS q
),
found AS (
	SELECT term.q, term.df, total.n
	FROM term, (SELECT coalesce(sum(chunks), 0) AS n FROM sources) AS total
	WHERE term.df > 0
),
weighted AS MATERIALIZED (
	SELECT q, ln(1 + (n - df + 0.5) / (df + 0.5)) AS idf
	FROM found WHERE 2 * df <= n OR NOT EXISTS (SELECT FROM found WHERE 2 * df <= n)
)
SELECT c.source, c.ordinal, c.heading, c.text, s.score, src.untrusted
FROM chunks AS c JOIN sources AS src ON src.source = c.source,
	LATERAL (SELECT sum(w.idf * ts_rank(c.tsv, w.q, 1)) AS score FROM weighted AS w) AS s
WHERE c.tsv @@ (SELECT string_agg(q::text, ' | ')::tsquery FROM weighted)
ORDER BY s.score DESC, c.source, c.ordinal
LIMIT $2::integer`

// ReplaceSource stores chunks as the whole content of source, in one transaction:
// it upserts the source's row where its hash differs (the row lock makes a concurrent
// ReplaceSource of the same source wait), then replaces its chunks. When the source is
// stored with hash already it changes nothing and returns false. The chunks are
// numbered from 0 in the order given.
func (s *Knowledge) ReplaceSource(ctx context.Context, source, hash string, origin conversation.Origin, chunks []conversation.Chunk) (bool, error) {
	origin = sqlstore.OriginOf(origin)
	ok, err := sqlstore.ReplaceSource(source, hash, chunks, func(chunks []conversation.Chunk, now time.Time) (bool, error) {
		return s.replaceSource(ctx, source, hash, origin, chunks, now)
	})
	return ok, classify(err)
}

func (s *Knowledge) replaceSource(ctx context.Context, source, hash string, origin conversation.Origin, chunks []conversation.Chunk, now time.Time) (bool, error) {
	headings, texts := make(pq.StringArray, len(chunks)), make(pq.StringArray, len(chunks))
	for i, c := range chunks {
		headings[i], texts[i] = c.Heading, c.Text
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var changed bool
	err = tx.QueryRowContext(ctx, `
		INSERT INTO sources (source, hash, chunks, ingested_at, created_at, origin, untrusted) VALUES ($1, $2, $3, $4, $4, $5, $6)
		ON CONFLICT (source) DO UPDATE SET hash = EXCLUDED.hash, chunks = EXCLUDED.chunks, ingested_at = EXCLUDED.ingested_at,
			origin = EXCLUDED.origin, untrusted = EXCLUDED.untrusted
		WHERE (sources.hash, sources.origin, sources.untrusted) IS DISTINCT FROM (EXCLUDED.hash, EXCLUDED.origin, EXCLUDED.untrusted)
		RETURNING true`,
		source, hash, len(chunks), now, origin.By, origin.Untrusted).Scan(&changed)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // stored with hash already
	}
	if err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE source = $1`, source); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO chunks (source, ordinal, created_at, heading, text)
		SELECT $1, u.ord - 1, $2, u.heading, u.text
		FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u (heading, text, ord)`,
		source, now, headings, texts); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// DeleteSource removes source and its chunks (ON DELETE CASCADE). Errors:
// conversation.ErrNotFound.
func (s *Knowledge) DeleteSource(ctx context.Context, source string) error {
	return classify(sqlstore.DeleteSource(source, func() (sql.Result, error) {
		return s.db.ExecContext(ctx, `DELETE FROM sources WHERE source = $1`, source)
	}))
}

// Sources lists the ingested sources, sorted by path byte-wise (COLLATE "C").
func (s *Knowledge) Sources(ctx context.Context) ([]conversation.SourceInfo, error) {
	infos, err := sqlstore.Sources(func(rows *[]sqlstore.SourceRow[time.Time]) error {
		return s.db.SelectContext(ctx, rows, `SELECT source, hash, chunks, ingested_at, origin, untrusted FROM sources ORDER BY source`)
	})
	return infos, classify(err)
}

// Search returns up to limit chunks that hold any word of query, best first, in one
// statement (searchSQL).
func (s *Knowledge) Search(ctx context.Context, query string, limit int) ([]conversation.Passage, error) {
	passages, err := sqlstore.Search(query, limit, func(query string, limit int, out *[]sqlstore.PassageRow) error {
		rows, err := s.searchStmt.QueryContext(ctx, query, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r sqlstore.PassageRow
			if err := rows.Scan(&r.Source, &r.Ordinal, &r.Heading, &r.Text, &r.Score, &r.Untrusted); err != nil {
				return err
			}
			*out = append(*out, r)
		}
		return rows.Err()
	})
	return passages, classify(err)
}
