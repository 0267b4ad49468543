// Package postgres is threadwright's production store: a conversation.Store in
// PostgreSQL, shared by every replica of the bot (docs/architecture.md, "Persistence").
//
// It uses jmoiron/sqlx over github.com/lib/pq, through a bounded pool (Open's
// maxConns). A turn under a lease (docs/architecture.md, "Durable turns") costs seven
// round trips, one statement each, prepared once per connection: Enqueue, Acquire,
// Begin, Load, Save, a Begin that finds nothing more, and Release; Save, sent outside
// a transaction, commits on its own (with Turn.Enqueue it runs in a transaction, one
// more statement per input). Optimistic concurrency needs no lock but the UPDATE's
// own: Save's conditional UPDATE (… WHERE version = $n) takes the conversation's row
// lock, so of two concurrent saves from one version the second re-checks the version
// after the first commits and finds it changed; two concurrent creates of one thread
// meet at the unique (team_id, channel_id, thread_ts) index, where the loser's INSERT
// … ON CONFLICT DO NOTHING writes nothing, and its Save returns
// conversation.ErrConflict.
//
// Leases need no lock but their row's either. Acquire is one upsert of the thread's
// lease row that takes it only when it is free or expired, so of concurrent Acquires
// on any replicas exactly one wins; a lease expires by the database's clock, so the
// replicas' clocks need not agree. The fencing token, which every takeover
// increments, is checked by Begin, Finish, Release and Save, and Save and Finish hold
// the lease row (FOR SHARE) until they commit, so that no takeover slips in between
// the check and the write. Enqueue writes the lease row in the statement that inserts
// the input, which tells the holder (Renew) and keeps Release from freeing the lease
// behind an input it could not see (see releaseSQL).
//
// Errors that may go away when retried (a lost or refused connection, too many
// clients, a server shutting down, a serialization failure or deadlock) satisfy
// errors.Is(err, conversation.ErrUnavailable); text that PostgreSQL cannot hold (NUL,
// invalid UTF-8, the JSON escape \u0000) is stored repaired (sqlstore.Text,
// sqlstore.JSON).
//
// The knowledge base (conversation.Knowledge) is searched with the chunks' generated
// tsvector column ('simple' configuration: lowercased words in every language, no
// stemming) and its GIN index. A query's words are those to_tsvector finds in it,
// never read as tsquery syntax, matched with OR and ranked by ts_rank weighed by each
// word's rarity (BM25's inverse document frequency), so that both stores rank alike;
// the words that more than half the chunks hold are left out (see searchSQL).
//
// The schema is in migrations/ (embedded, applied by goose when the store opens, under
// a session advisory lock so replicas starting together take turns). Tables live in
// the connection's current schema (the first of its search_path), so several
// deployments, or tests, can share a database in separate schemas. The package passes
// store/storetest, the conformance suite it shares with store/sqlite, and shares with
// it, through store/internal/sqlstore, its row types, the checks of its arguments and
// the handling of its statements' results.
package postgres
