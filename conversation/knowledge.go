package conversation

import (
	"context"
	"time"
)

// Chunk is one piece of an ingested document (threadwright ingest): a few paragraphs
// under one heading, the unit the knowledge base searches.
type Chunk struct {
	// Source is the document's path as ingested, e.g. "handbook/leave.md".
	Source string `json:"source"`
	// Heading is the nearest heading above the chunk ("" at the document's start).
	Heading string `json:"heading,omitempty"`
	// Ordinal numbers the chunks of a source from 0, in document order.
	Ordinal int    `json:"ordinal"`
	Text    string `json:"text"`
}

// Passage is a chunk found by a search, with its rank (higher is better; the scale
// is the database's full-text rank).
type Passage struct {
	Chunk
	Score float64
}

// SourceInfo describes an ingested source.
type SourceInfo struct {
	Source string
	// Hash is the content hash of the ingested version (re-ingesting an unchanged file
	// is a no-op).
	Hash       string
	Chunks     int
	IngestedAt time.Time
}

// Knowledge is the knowledge base: documents split into chunks and searched with the
// database's own full-text search (Postgres tsvector/ts_rank with a GIN index; SQLite
// FTS5). store/sqlite and store/postgres implement it.
type Knowledge interface {
	// ReplaceSource stores chunks as the whole content of source (hash identifies the
	// version), replacing what was there, atomically. It returns false, changing
	// nothing, when source is already stored with the same hash.
	ReplaceSource(ctx context.Context, source, hash string, chunks []Chunk) (bool, error)
	// DeleteSource removes source and its chunks. Errors: ErrNotFound.
	DeleteSource(ctx context.Context, source string) error
	// Sources lists the ingested sources, sorted by path.
	Sources(ctx context.Context) ([]SourceInfo, error)
	// Search returns up to limit passages matching query (words, as a person types
	// them; punctuation and operators are not interpreted), best first.
	Search(ctx context.Context, query string, limit int) ([]Passage, error)
}
