package postgres

import (
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// pool is what the parts of a Store share: the connection pool, and the statements
// prepared on it.
type pool struct {
	db *sqlx.DB
	// intake is a few connections of their own for the intake's statements
	// (EnqueueBatch, Exists, CountPending, Enqueued; docs/architecture.md, "Accepted
	// means stored"), so that an envelope's ack never waits behind running turns for a
	// connection of db. intakeBatchStmt is enqueueBatchSQL prepared on it.
	intake          *sqlx.DB
	intakeBatchStmt *sql.Stmt
	// renew is a connection of its own for the heartbeat's statement (Renew, prepared
	// on it as renewStmt; docs/architecture.md, "Durable turns"), so that a renewal
	// never waits for a connection of db behind up to MAX_CONCURRENT_TURNS turns: one
	// that waited past LEASE_TTL would let other replicas take this one's threads.
	renew *sqlx.DB
	// The statements of a turn (Enqueue, Acquire, AcquireBegin, Begin, Next, Load, Save, Release) and of
	// the heartbeat (Renew, on renew), prepared once per connection (by database/sql, on first
	// use) rather than parsed and planned on every call: that planning, of Save's WITH
	// statement above all, cost more than a round trip. Named prepared statements need
	// session-level pooling between the store and the server (PgBouncer's transaction
	// mode supports them from version 1.21). searchStmt, the knowledge base's Search,
	// has a plan worth keeping too.
	loadStmt, createStmt, updateStmt, enqueueStmt, acquireStmt, beginStmt, releaseStmt, nextStmt *sql.Stmt
	acquireBeginStmt, renewStmt, searchStmt                                                      *sql.Stmt
}
