package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
)

// maxGroup bounds the turn writes committed together (turnWrite): a batch's writes
// are answered once it commits, so a bound keeps the first one's wait short. The
// intake does not wait for a whole batch (run yields to it).
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
	// intake counts the intake's transactions (Enqueue, EnqueueBatch) from before they
	// ask for the write connection until just after they give it back: a batch of
	// turn writes yields to them (run).
	intake atomic.Int32
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

// The states of a turnCall.
const (
	callQueued    int32 = iota
	callAbandoned       // its caller returned: its context ended while it was queued
	callClaimed         // a leader took it, to run it or to lead the next batch
)

// turnCall is one turn write in group's queue.
type turnCall struct {
	ctx   context.Context
	f     func(ctx context.Context, tx *sql.Tx) error
	state atomic.Int32
	err   error
	// done is closed once err is set: f ran and its batch committed (or failed), or
	// f did not run.
	done chan struct{}
	// lead is closed when the caller is to run the next batch.
	lead chan struct{}
}

// turnWrite runs f, a running turn's statements (lease, checkpoint, finish), in a
// transaction on the write connection, committed with those of the other turns that
// queued while the batch before ran: a group commit. f may run more than once (when any
// call of its batch fails, f included, the batch runs again with savepoints; when one
// loses the transaction, the rest run again: run), so it sets its results afresh each
// time, and it returns every error tx gives it (a batch without savepoints notices a
// lost transaction only by its calls' errors). f's writes are committed when turnWrite
// returns nil, and none is when it returns an error: f's (its writes rolled back
// alone), ctx's, or the commit's. f runs on a context that ends only once every call of
// its batch has seen its own end (a write that SQLite interrupts rolls the whole
// transaction back, the batch's other turns with it). When ctx ends while the call
// waits for its batch, it returns ctx's error at once and f never runs (unless the call
// was just handed the next batch to run: it passes it on first; a call claimed for a
// batch that yields waits for the intake's transaction too). The intake's transactions
// (Enqueue, EnqueueBatch) do not queue here: a batch that finds one waiting commits
// what ran and lets it go first, so it waits for about one turn write, not a batch
// (docs/architecture.md, "Accepted means stored").
//
// The caller that finds no batch running runs one: the calls queued by then, at most
// maxGroup; it then hands the next batch to the first call still queued, so that no
// caller waits for more than the batches ahead of it.
func (p *pool) turnWrite(ctx context.Context, f func(ctx context.Context, tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &turnCall{ctx: ctx, f: f, done: make(chan struct{}), lead: make(chan struct{})}
	g := &p.group
	g.mu.Lock()
	lead := !g.leading
	if lead {
		g.leading = true
		c.state.Store(callClaimed)
	}
	g.queue = append(g.queue, c)
	g.mu.Unlock()
	if !lead {
		select {
		case <-c.done:
			return c.err
		case <-c.lead:
		case <-ctx.Done():
			if c.state.CompareAndSwap(callQueued, callAbandoned) {
				return ctx.Err()
			}
			select { // claimed: for a batch, or to lead one
			case <-c.done:
				return c.err
			case <-c.lead:
			}
		}
		if err := ctx.Err(); err != nil {
			// Handed the next batch as its context ended: c is first in the queue,
			// which no one else takes from while c leads; the next call leads.
			g.mu.Lock()
			g.queue[0] = nil
			g.queue = g.queue[1:]
			g.mu.Unlock()
			g.handOver()
			return err
		}
	}
	defer g.handOver() // also when a call of the batch panics
	p.commit(g.take())
	<-c.done // c is in the batch it leads: the first queued, and claimed
	return c.err
}

// take removes the next batch from the queue: the calls it can claim, at most
// maxGroup, the leader's first.
func (g *group) take() []*turnCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	batch := make([]*turnCall, 0, min(len(g.queue), maxGroup))
	n := 0
	for _, c := range g.queue {
		if len(batch) == maxGroup {
			break
		}
		n++
		if c.state.Load() == callClaimed || c.state.CompareAndSwap(callQueued, callClaimed) {
			batch = append(batch, c)
		}
	}
	clear(g.queue[:n]) // the calls' turns are not kept alive by the queue's array
	g.queue = g.queue[n:]
	return batch
}

// handOver ends a batch: the first call still queued that it can claim runs the next
// one, if any.
func (g *group) handOver() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for len(g.queue) > 0 {
		c := g.queue[0]
		if c.state.CompareAndSwap(callQueued, callClaimed) {
			close(c.lead)
			return
		}
		g.queue[0] = nil
		g.queue = g.queue[1:] // abandoned
	}
	g.leading = false
}

// commit runs batch's calls in a transaction, or more (run), commits them, and closes
// every call's done. When a call's failure lost the transaction (SQLite rolls it back
// on an I/O error or a full disk, say), that call fails and the others run again in a
// new one.
func (p *pool) commit(batch []*turnCall) {
	// again are the calls of the transaction running: when one panics, nothing of
	// that transaction was committed; those of a transaction committed before it (the
	// batch yielded to the intake) keep their results.
	again := batch
	finished := false
	defer func() {
		for _, c := range batch {
			if !finished && slices.Contains(again, c) {
				c.err = errors.New("a turn write of the same batch panicked")
			}
			close(c.done)
		}
	}()
	// The batch's context ends once every call's has.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var live atomic.Int32
	live.Store(int32(len(batch)))
	for _, c := range batch {
		stop := context.AfterFunc(c.ctx, func() {
			if live.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	for len(again) > 0 {
		again = p.run(ctx, again)
	}
	if ctx.Err() != nil {
		// Every caller's context ended: a write the batch's context interrupted says
		// why its caller's did (a deadline, not only "canceled").
		for _, c := range batch {
			if err := c.ctx.Err(); err != nil && c.err != nil && !errors.Is(c.err, err) {
				c.err = errors.Join(err, c.err)
			}
		}
	}
	finished = true
}

// run runs calls in a transaction on ctx (two when one fails) and commits it; it
// returns the calls to run in a new transaction: all but the one that lost this one,
// or, when an intake transaction waits for the connection, those not run yet. The
// batch then commits what ran and yields: database/sql hands the freed connection to a
// waiting request, and the batch asks again only after its commit, so an intake that
// waits by then goes first (with other writers waiting too, database/sql picks among
// them at random, and the ack may wait for another turn write).
//
// The calls run first with no savepoints, which spares SQLite the savepoints' journal:
// a savepoint copies each page its statements change, about 13 pages of 4 KiB for a
// turn's write, and spills them to a file past 64 KiB. Only when one of two or more
// fails, which a turn's writes rarely do, is that transaction rolled back and are they
// run again, each in a savepoint, so that the failed one's writes are undone alone.
func (p *pool) run(ctx context.Context, calls []*turnCall) (again []*turnCall) {
	runnable := calls[:0:0]
	for _, c := range calls {
		if err := c.ctx.Err(); err != nil {
			c.err = err
		} else {
			runnable = append(runnable, c)
		}
	}
	if len(runnable) == 0 {
		return nil
	}
	again, failed := p.runTx(ctx, runnable, false)
	if failed {
		again, _ = p.runTx(ctx, runnable, true)
	}
	return again
}

// runTx runs calls in one transaction on ctx, each in a savepoint of its own when
// savepoints is set, and commits what succeeded; it returns the calls to run in a new
// transaction, as run does. Without savepoints, a failed call of two or more rolls the
// transaction back, with nothing committed, and runTx reports failed: the calls are to
// run again with savepoints. A call alone keeps its error, with nothing written.
func (p *pool) runTx(ctx context.Context, calls []*turnCall, savepoints bool) (again []*turnCall, failed bool) {
	tx, err := p.write.BeginTx(ctx, nil)
	if err != nil {
		for _, c := range calls {
			c.err = err
		}
		return nil, false
	}
	defer tx.Rollback()
	ran := calls[:0:0] // the calls whose writes the commit keeps
	for i, c := range calls {
		if i > 0 && p.intake.Load() > 0 {
			again = calls[i:]
			break
		}
		if !savepoints {
			if c.err = c.f(ctx, tx); c.err != nil {
				return nil, len(calls) > 1
			}
		} else if c.err, err = p.savepoint(ctx, tx, c); err != nil {
			// The transaction is lost: c fails, the others run again.
			c.err = errors.Join(c.err, fmt.Errorf("turn write lost its transaction: %w", err))
			return append(ran, calls[i+1:]...), false
		}
		if c.err == nil {
			ran = append(ran, c)
		}
	}
	if len(ran) == 0 {
		return again, false
	}
	if err := tx.Commit(); err != nil {
		for _, c := range ran {
			c.err = fmt.Errorf("commit: %w", err)
		}
	}
	return again, false
}

// savepoint runs c.f in tx within a savepoint, which it rolls back when f fails. fErr
// is f's error; err is set when the savepoint itself failed, and the transaction with
// it.
func (p *pool) savepoint(ctx context.Context, tx *sql.Tx, c *turnCall) (fErr, err error) {
	if _, err := tx.StmtContext(ctx, p.st.savepoint).ExecContext(ctx); err != nil {
		return errors.New("savepoint not set"), err
	}
	fErr = c.f(ctx, tx)
	if fErr != nil {
		if _, err := tx.StmtContext(ctx, p.st.rollbackTo).ExecContext(ctx); err != nil {
			return fErr, fmt.Errorf("rollback to savepoint: %w", err)
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
