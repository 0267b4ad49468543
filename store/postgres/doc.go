// Package postgres is threadwright's production store: a conversation.Store in
// PostgreSQL, shared by every replica of the bot (DESIGN.md, "Persistence").
//
// It uses jmoiron/sqlx over github.com/lib/pq. A turn costs three round trips: Claim,
// Load and Save are one statement each, and Save, sent outside a transaction, commits
// on its own. Optimistic concurrency needs no lock but the UPDATE's own: Save's
// conditional UPDATE (… WHERE version = $n) takes the conversation's row lock, so of two
// concurrent saves from one version the second re-checks the version after the first
// commits and finds it changed; two concurrent creates of one thread meet at the unique (team_id,
// channel_id, thread_ts) index, where the loser's INSERT … ON CONFLICT DO NOTHING
// writes nothing, and its Save returns conversation.ErrConflict.
//
// Claims need no lock but the UPDATE's own either: Claim is one UPDATE conditional on
// the input being pending and unclaimed (claimed_until NULL or past), and a concurrent
// Claim of the same input waits for that row lock, re-checks the condition on the
// row's newest version and finds the winner's claim. Claims expire by the clock of the
// process that checks them (each replica's, as for every time the store writes), so
// replicas' clocks must agree to well within a claim's length.
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
