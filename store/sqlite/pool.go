package sqlite

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// pool is what the parts of a Store share: its connections, and the statements
// prepared on them.
type pool struct {
	// write is the only connection that writes; read is a pool of query-only connections.
	write *sqlx.DB
	read  *sqlx.DB
	// The statements of a turn and of the heartbeat, prepared once (on the write
	// connection, or on each read connection as it is first used) rather than parsed
	// on every call; a transaction on the write connection reuses them
	// (sql.Tx.StmtContext finds them prepared on its connection).
	st statements
	// turns admits a turn's statement or transaction on write (turnWrite): one at a
	// time, in the order they came.
	turns chan struct{}
}

// newPool returns the pool of write and read.
func newPool(write, read *sqlx.DB) *pool {
	return &pool{write: write, read: read, turns: make(chan struct{}, 1)}
}

// turnWrite runs f, a running turn's statement or transaction on the write connection
// (lease, checkpoint, finish), once the one before it is done. The intake's batches
// (EnqueueBatch) do not queue here: database/sql hands the freed connection to one of
// its waiters at random, so with every running turn waiting for it a batch waited
// behind hundreds of statements; with the turns queued here, it waits behind one at
// most (docs/architecture.md, "Accepted means stored"). It returns ctx's error when
// ctx ends first.
func (p *pool) turnWrite(ctx context.Context, f func() error) error {
	select {
	case p.turns <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.turns }()
	return f()
}

// statements are the Store's prepared statements; their SQL is in the constants named
// after them (createSQL, acquireSQL, …), next to the methods that run them.
type statements struct {
	// On read.
	loadConversation, loadMessages *sql.Stmt
	// On write.
	create, update, insertMessage, markDone, leaseHeld, insertUsage *sql.Stmt
	enqueueInput, enqueueLease                                      *sql.Stmt
	acquire, begin, release, renew                                  *sql.Stmt
}
