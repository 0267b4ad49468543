// Package sqlite is threadwright's embedded store: a conversation.Store in one SQLite
// file, so a first run needs no database server (docs/architecture.md, "Persistence").
//
// It uses modernc.org/sqlite, a pure-Go SQLite, through jmoiron/sqlx. The database runs
// in WAL mode: writes go through a single connection whose transactions begin
// IMMEDIATE, so concurrent writers within the process queue for it instead of failing
// with "database is locked", while reads use a pool of query-only connections that never
// wait for the writer. Another process writing the same file is waited for up to the
// busy timeout (5 s), after which its error satisfies errors.Is(err,
// conversation.ErrUnavailable). synchronous is NORMAL, SQLite's recommended setting
// for WAL: a crash of the process loses nothing, a power failure can lose the last
// transactions but never corrupts the file. The statements of a turn and of the lease
// heartbeat are prepared once and reused.
//
// Leases (docs/architecture.md, "Durable turns") expire by the process's clock, which
// processes sharing a file on one machine share; SQLite runs one writer at a time, so
// each lease statement sees every write committed before it. Text is stored repaired
// where PostgreSQL could not hold it (sqlstore.Text, sqlstore.JSON), so that both
// stores return the same.
//
// Spool (OpenSpool) is a conversation.Spool in a file of its own, with synchronous
// FULL: the inputs accepted while the store does not answer.
//
// The knowledge base (conversation.Knowledge) is searched with FTS5: chunks_fts, an
// external-content index of the chunks kept in step by triggers, tokenized by
// unicode61 (every script, case and diacritics folded, no stemming), ranked with
// bm25(). A query's words are quoted, never read as FTS5 syntax, and matched with OR;
// the words that more than half the chunks hold are left out (see searchSQL).
//
// The schema is in migrations/ (embedded, applied by goose when the store opens). Times
// are stored as INTEGER Unix microseconds, UTC. The package passes store/storetest, the
// conformance suite it shares with store/postgres, and shares with it, through
// store/internal/sqlstore, its row types, the checks of its arguments and the handling
// of its statements' results.
package sqlite
