package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The methods of conversation.Knowledge, less their SQL. Both backends search with
// OR semantics, each word of the query weighed by its rarity among the chunks (BM25's
// inverse document frequency: SQLite's bm25(), and the same formula in PostgreSQL's
// statement), so that a question matches the chunks that share most of its rarer words
// and "the", "how" or "и" count for almost nothing.

// Bounds of Search.
const (
	// MaxSearchLimit is the most passages one Search returns; a larger limit is
	// lowered to it.
	MaxSearchLimit = 100
	// MaxQueryChars is the most characters of a query Search reads; the rest is
	// ignored.
	MaxQueryChars = 1000
	// MaxQueryWords is the most distinct words of a query Search looks up.
	MaxQueryWords = 32
)

// SourceRow is a row of the sources table as Sources reads it, with its timestamp of
// type T.
type SourceRow[T Time] struct {
	Source     string `db:"source"`
	Hash       string `db:"hash"`
	Chunks     int    `db:"chunks"`
	IngestedAt T      `db:"ingested_at"`
	Origin     string `db:"origin"`
	Untrusted  bool   `db:"untrusted"`
}

// PassageRow is a chunk as Search reads it, with its score.
type PassageRow struct {
	Source    string  `db:"source"`
	Ordinal   int     `db:"ordinal"`
	Heading   string  `db:"heading"`
	Text      string  `db:"text"`
	Score     float64 `db:"score"`
	Untrusted bool    `db:"untrusted"`
}

// ReplaceSource implements conversation.Knowledge.ReplaceSource around a backend's
// write: it rejects what cannot be stored as it is (an empty source or hash; a chunk
// with no text, with another chunk's Source, or with text that is not UTF-8 or holds
// NUL bytes, which PostgreSQL's text cannot), numbers the chunks from 0 in the order
// given (their Ordinal fields are ignored, their Source set to source) and calls write
// with them and the time now. write stores them in one transaction unless source is
// stored with hash already, and reports whether it wrote. Errors are wrapped with the
// source ("replace source <source>: …").
func ReplaceSource(source, hash string, chunks []conversation.Chunk, write func(chunks []conversation.Chunk, now time.Time) (bool, error)) (bool, error) {
	chunks, err := checkChunks(source, hash, chunks)
	var ok bool
	if err == nil {
		ok, err = write(chunks, Now())
	}
	if err != nil {
		return false, fmt.Errorf("replace source %s: %w", source, err)
	}
	return ok, nil
}

// checkChunks returns a copy of chunks numbered and attributed to source, or the
// reason they cannot be stored.
func checkChunks(source, hash string, chunks []conversation.Chunk) ([]conversation.Chunk, error) {
	switch {
	case strings.TrimSpace(source) == "":
		return nil, errors.New("empty source")
	case hash == "":
		return nil, errors.New("empty hash")
	case !storable(source) || !storable(hash):
		return nil, errors.New("source and hash must be UTF-8 text without NUL bytes")
	}
	out := make([]conversation.Chunk, len(chunks))
	for i, c := range chunks {
		switch {
		case c.Source != "" && c.Source != source:
			return nil, fmt.Errorf("chunk %d belongs to source %q", i, c.Source)
		case strings.TrimSpace(c.Text) == "":
			return nil, fmt.Errorf("chunk %d has no text", i)
		case !storable(c.Heading) || !storable(c.Text):
			return nil, fmt.Errorf("chunk %d: heading and text must be UTF-8 text without NUL bytes", i)
		}
		c.Source, c.Ordinal = source, i
		out[i] = c
	}
	return out, nil
}

// OriginOf returns origin as stored: By "" is conversation.OriginIngest.
func OriginOf(origin conversation.Origin) conversation.Origin {
	if origin.By == "" {
		origin.By = conversation.OriginIngest
	}
	return origin
}

// storable reports whether s can be stored in a text column of both backends.
func storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// DeleteSource implements conversation.Knowledge.DeleteSource of source: del deletes
// its row from sources (its chunks go with it, ON DELETE CASCADE). Errors:
// conversation.ErrNotFound when del deletes no row.
func DeleteSource(source string, del func() (sql.Result, error)) error {
	n, err := RowsAffected(del())
	if err == nil && n == 0 {
		err = conversation.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete source %s: %w", source, err)
	}
	return nil
}

// Sources implements conversation.Knowledge.Sources: query selects every row of
// sources into rows, sorted by source byte-wise; Sources converts them, their times in
// UTC.
func Sources[T Time](query func(rows *[]SourceRow[T]) error) ([]conversation.SourceInfo, error) {
	var rows []SourceRow[T]
	if err := query(&rows); err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	infos := make([]conversation.SourceInfo, len(rows))
	for i, r := range rows {
		infos[i] = conversation.SourceInfo{Source: r.Source, Hash: r.Hash, Chunks: r.Chunks, IngestedAt: r.IngestedAt.UTC(),
			Origin: conversation.Origin{By: r.Origin, Untrusted: r.Untrusted}}
	}
	return infos, nil
}

// Search implements conversation.Knowledge.Search: unless limit is not positive or
// query holds nothing but spaces (no passages, and no query), query cut to
// MaxQueryChars characters (bytes that are not UTF-8, and NUL, made spaces) and limit
// lowered to MaxSearchLimit go to run, which selects
// into rows the best chunks, highest score first (ties in source and ordinal order).
// Search converts them.
func Search(query string, limit int, run func(query string, limit int, rows *[]PassageRow) error) ([]conversation.Passage, error) {
	query = strings.ReplaceAll(strings.ToValidUTF8(textcut.Runes(query, MaxQueryChars), " "), "\x00", " ")
	if limit <= 0 || strings.TrimSpace(query) == "" {
		return nil, nil
	}
	var rows []PassageRow
	if err := run(query, min(limit, MaxSearchLimit), &rows); err != nil {
		return nil, fmt.Errorf("search knowledge: %w", err)
	}
	passages := make([]conversation.Passage, len(rows))
	for i, r := range rows {
		passages[i] = conversation.Passage{
			Chunk: conversation.Chunk{Source: r.Source, Heading: r.Heading, Ordinal: r.Ordinal, Text: r.Text},
			Score: r.Score, Untrusted: r.Untrusted,
		}
	}
	return passages, nil
}
