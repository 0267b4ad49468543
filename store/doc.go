// Package store opens threadwright's persistence: the conversation.Store that
// DATABASE_URL selects (docs/architecture.md, "Persistence"; docs/configuration.md). Both
// backends' stores are a conversation.Knowledge too, the knowledge base that
// `threadwright ingest` fills and the search_knowledge tool searches: type-assert the
// store Open returns.
//
// The backends are subpackages, each adapting one database and passing the shared
// conformance suite in store/storetest:
//
//   - store/postgres, the production store, for a postgres:// or postgresql:// URL;
//   - store/sqlite, the embedded default, one file in the data directory when
//     DATABASE_URL is unset.
//
// Open takes Options: the URL, the data directory, the bound of PostgreSQL's
// connection pool and the logger. Both backends embed their schema as goose
// migrations and apply them when opened; Migrate applies them alone, for
// `threadwright migrate`. The local spool of inputs that the Service keeps while the
// store is unavailable is store/sqlite's Spool, whatever the backend. What the two
// share beyond the conformance suite, the row types and the rules of
// conversation.Store around their SQL, is in store/internal/sqlstore.
package store
