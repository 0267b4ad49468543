package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/jmoiron/sqlx"
)

// maxGroup bounds the turn writes committed together (turnWrite): a batch holds the
// write connection for its whole transaction, and the intake's EnqueueBatch waits
// for it, so a batch of at most this many (about a third of a millisecond each)
// keeps that wait within a few milliseconds of the ack budget.
const maxGroup = 16

// pool is what the parts of a Store share: its connections, the statements
// prepared on them, and the queue of the turns' writes.
type pool struct {
	// write is the only connection that writes; read is a pool of query-only connections.
	write *sqlx.DB
	read  *sqlx.DB
	// The statements of a turn and of the heartbeat, prepared once (on the write
	// connection, or on each read connection as it is first used) rather than parsed
	// on every call; a transaction on the write connection reuses them
	// (sql.Tx.StmtContext finds them prepared on its connection).
	st statements
	// group is the queue of the running turns' writes (turnWrite).
	group group
}

// newPool returns the pool of write and read.
func newPool(write, read *sqlx.DB) *pool {
	return &pool{write: write, read: read}
}

// group is the queue of turn writes waiting for the write connection, and whether one
// of their callers is running a batch of them (the leader).
type group struct {
	mu      sync.Mutex
	queue   []*turnCall
	leading bool
}

// turnCall is one turn write in group's queue.
type turnCall struct {
	ctx context.Context
	f   func(ctx context.Context, tx *sql.Tx) error
	err error
	// done is closed once err is set: f ran and its batch committed (or failed), or
	// f never ran.
	done chan struct{}
	// lead is closed when the caller is to run the next batch.
	lead chan struct{}
}

// turnWrite runs f, a running turn's statements (lease, checkpoint, finish), in a
// transaction on the write connection, committed with those of the other turns that
// queued while the batch before ran: a group commit, each in a savepoint of its own.
// f's writes are committed when turnWrite returns nil, and none is when f returns an
// error (its savepoint is rolled back); a failed commit fails every call of its batch. f runs on a context that ctx's
// cancellation does not reach (SQLite rolls the whole transaction back when a write
// of it is interrupted, the batch's other turns with it); a call whose ctx has ended
// before its turn is not run and returns ctx's error. The intake's batches
// (EnqueueBatch) do not queue here: they wait only for the batch that holds the
// connection (docs/architecture.md, "Accepted means stored").
//
// The caller that finds no batch running runs one: the calls queued by then, at most
// maxGroup; it then hands the next batch to the first call still queued, so that no
// caller waits for more than the batches ahead of it.
func (p *pool) turnWrite(ctx context.Context, f func(ctx context.Context, tx *sql.Tx) error) error {
	c := &turnCall{ctx: ctx, f: f, done: make(chan struct{}), lead: make(chan struct{})}
	g := &p.group
	g.mu.Lock()
	g.queue = append(g.queue, c)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead {
		select {
		case <-c.done:
			return c.err
		case <-c.lead:
		}
	}
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()
	p.commit(batch)
	g.handOver()
	return c.err // c is in batch: the first queued when its caller leads
}

// handOver ends a batch: the first call still queued runs the next one, if any.
func (g *group) handOver() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.leading = false
		return
	}
	close(g.queue[0].lead)
}

// commit runs batch's calls in one transaction, each in a savepoint (none for a batch
// of one), commits it, and closes every call's done.
func (p *pool) commit(batch []*turnCall) {
	defer func() {
		for _, c := range batch {
			close(c.done)
		}
	}()
	// The transaction outlives every caller's cancellation, like f (see turnWrite).
	ctx := context.WithoutCancel(batch[0].ctx)
	tx, err := p.write.BeginTx(ctx, nil)
	if err != nil {
		for _, c := range batch {
			c.err = err
		}
		return
	}
	defer tx.Rollback()
	ran := batch[:0:0] // the calls whose writes the commit keeps
	for i, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			continue
		}
		if len(batch) == 1 {
			c.err = c.f(context.WithoutCancel(c.ctx), tx)
		} else if c.err, err = p.savepoint(tx, c); err != nil {
			// The transaction is lost (SQLite rolled it back: an I/O error, a
			// full disk): the calls that ran lose their writes, the rest do not run.
			for _, c := range batch[i:] {
				c.err = err
			}
			for _, c := range ran {
				c.err = err
			}
			return
		}
		if c.err == nil {
			ran = append(ran, c)
		}
	}
	if len(ran) == 0 {
		return
	}
	if err := tx.Commit(); err != nil {
		for _, c := range ran {
			c.err = fmt.Errorf("commit: %w", err)
		}
	}
}

// savepoint runs c.f in tx within a savepoint, which it rolls back when f fails. fErr
// is f's error; err is set when the savepoint itself failed, and the transaction with
// it.
func (p *pool) savepoint(tx *sql.Tx, c *turnCall) (fErr, err error) {
	ctx := context.WithoutCancel(c.ctx)
	if _, err := tx.StmtContext(ctx, p.st.savepoint).ExecContext(ctx); err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	fErr = c.f(ctx, tx)
	if fErr != nil {
		if _, err := tx.StmtContext(ctx, p.st.rollbackTo).ExecContext(ctx); err != nil {
			return fErr, errors.Join(fmt.Errorf("rollback to savepoint: %w", err), fErr)
		}
	}
	if _, err := tx.StmtContext(ctx, p.st.releaseSavepoint).ExecContext(ctx); err != nil {
		return fErr, fmt.Errorf("release savepoint: %w", err)
	}
	return fErr, nil
}

// The statements of turnWrite's savepoints.
const (
	savepointSQL        = `SAVEPOINT turn`
	rollbackToSQL       = `ROLLBACK TO turn`
	releaseSavepointSQL = `RELEASE turn`
)

// statements are the Store's prepared statements; their SQL is in the constants named
// after them (createSQL, acquireSQL, …), next to the methods that run them.
type statements struct {
	// On read.
	loadConversation, loadMessages *sql.Stmt
	// On write.
	create, update, insertMessage, markDone, leaseHeld, insertUsage *sql.Stmt
	enqueueInput, enqueueLease                                      *sql.Stmt
	acquire, begin, release, renew                                  *sql.Stmt
	savepoint, rollbackTo, releaseSavepoint                         *sql.Stmt
}
