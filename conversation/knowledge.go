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
	// Untrusted is its source's Origin.Untrusted: the search_knowledge tool labels
	// the passage untrusted content.
	Untrusted bool
}

// OriginIngest is Origin.By of a document stored by threadwright ingest (an
// operator).
const OriginIngest = "ingest"

// Origin says who put a document in the knowledge base (docs/api.md, "Tokens").
type Origin struct {
	// By is OriginIngest, or the actor of the API token that uploaded it
	// ("api:<name>"); "" reads as OriginIngest.
	By string
	// Untrusted marks a document whose text an agent treats as untrusted content,
	// like a web page: one uploaded by an API token not marked trusted.
	Untrusted bool
}

// SourceInfo describes an ingested source.
type SourceInfo struct {
	Source string
	// Hash is the content hash of the ingested version (re-ingesting an unchanged file
	// is a no-op).
	Hash       string
	Chunks     int
	IngestedAt time.Time
	Origin     Origin
}

// Knowledge is the knowledge base: documents split into chunks and searched with the
// database's own full-text search (Postgres tsvector/ts_rank with a GIN index; SQLite
// FTS5). store/sqlite and store/postgres implement it.
type Knowledge interface {
	// ReplaceSource stores chunks as the whole content of source (hash identifies the
	// version), put there by origin, replacing what was there, atomically. It returns
	// false, changing nothing, when source is already stored with the same hash and
	// origin.
	ReplaceSource(ctx context.Context, source, hash string, origin Origin, chunks []Chunk) (bool, error)
	// DeleteSource removes source and its chunks. Errors: ErrNotFound.
	DeleteSource(ctx context.Context, source string) error
	// Sources lists the ingested sources, sorted by path.
	Sources(ctx context.Context) ([]SourceInfo, error)
	// Search returns up to limit passages matching query (words, as a person types
	// them; punctuation and operators are not interpreted), best first.
	Search(ctx context.Context, query string, limit int) ([]Passage, error)
}
