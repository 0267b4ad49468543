package turns

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Group commit (docs/architecture.md, "Accepted means stored"): the inputs that
// Submit calls hand over while a batch is being stored wait together and go into the
// store in the next batch, in one transaction (Store.EnqueueBatch). When inputs come
// one at a time, each is a batch of one, stored at once, unless they come as fast as a
// burst's (commitDelay); in a burst, one commit stores many. A batch keeps the order
// in which its inputs were handed over, so a thread's inputs keep theirs (the bot
// hands a thread's next input over only once the one before it is stored).

const (
	// maxBatch bounds the inputs of one batch (one transaction).
	maxBatch = 500
	// maxBatchRetry bounds how long one batch retries while the store is unavailable,
	// so that the inputs queued behind it wait no longer (a Slack envelope's ack is
	// due within 3 s: the bot's ack budget, 2.5 s by default, less spoolReserve). A
	// caller whose own deadline is later, or who set none, queues again without a
	// spool (store), until its deadline or batchTimeout; with one, it is spooled.
	maxBatchRetry = 2 * time.Second
	// minAttempt is the least time a batch's attempt gets: an input whose deadline is
	// closer does not fail the batch's other inputs with it (it rides along, as one
	// whose time is up does, and may be told the outcome up to minAttempt after its
	// deadline).
	minAttempt = 250 * time.Millisecond
	// batchTimeout bounds a caller's retries when it set no deadline (store).
	batchTimeout = 30 * time.Second
	// commitDelay is how long a batch waits for more inputs when, as it is gathered,
	// the intake is busy and fewer than fullBatch are queued (the wait is not cut
	// short when more come meanwhile), as PostgreSQL's commit_delay does: at most that
	// much more latency for an ack, for many inputs a commit instead of one or two.
	// In the first second of a burst of 1,000 mentions on SQLite, the batches' commits
	// took 0.11-0.19 s of CPU without it, 0.07-0.11 s with it (docs/operations.md,
	// "Numbers"; docs/architecture.md, "Accepted means stored").
	// Busy means that, less than busyGap ago, an input came while another was queued
	// or being stored, or that busyThreads inputs, each for another thread than the
	// input before it, came within busyGap (1,600 a second: a burst, whose inputs are
	// often each stored before the next comes). Steady traffic well below that, an
	// input alone, and one thread's inputs coming one after another (its lane hands
	// the next over once the one before it is stored) never wait.
	commitDelay = time.Millisecond
	// storeGrace is how long after its batch's deadline a caller with a deadline
	// still waits for the batch's answer before it gives up (await): a store that
	// honours its context answers by then; one that does not (a connection that hangs
	// with no reset: lib/pq cancels a statement through a connection of its own and
	// reads on) would hold every input behind it past its ack. It fits within
	// spoolReserve, so that a caller that gives up is still spooled by its deadline.
	storeGrace  = spoolReserve / 2
	busyGap     = 5 * time.Millisecond
	busyThreads = 8
	fullBatch   = 64
)

// groupCommit batches the inputs handed to store.
type groupCommit struct {
	*env

	mu      sync.Mutex
	queue   []*queuedInput
	running bool
	// grew is closed, and replaced, each time an input joins the queue (nil until the
	// first): what a test waits on to know an input is queued.
	grew chan struct{}
	// storing is how many inputs the batch being stored holds (0 between batches).
	storing int
	// overdue is when the batch being stored is overdue: storeGrace after its
	// deadline (zero between batches); its callers give up then (await).
	overdue time.Time
	// kick starts work on the thread of an input stored after its caller gave up
	// on it (await): no caller does (intake.kick; nil in tests).
	kick func(conversation.Key)
	// busy is when the intake was last found busy (see commitDelay; zero before).
	busy time.Time
	// switches holds when the last busyThreads inputs for another thread than the
	// input before them came; lastKey is the thread of the input handed over last.
	switches recentTimes
	lastKey  conversation.Key
}

// newGroupCommit returns a groupCommit of e with nothing queued.
func newGroupCommit(e *env) *groupCommit {
	return &groupCommit{env: e, switches: newRecentTimes(busyThreads)}
}

// queuedInput is an input waiting for its batch, and where its outcome goes.
type queuedInput struct {
	ctx context.Context
	in  conversation.Input
	// stored, when set, is called once in is stored, before its caller is told.
	stored func()
	done   chan commitResult // buffered: the committer never waits for the caller
	// overdue is its batch's overdue, once the batch began; answered is set once
	// its outcome is known, before stored is called; gone, once its caller gave up
	// (await). Guarded by groupCommit.mu.
	overdue        time.Time
	answered, gone bool
}

// errNoAnswer is the outcome of an input whose caller gave up waiting for the store
// (await): storeDown accepts it.
var errNoAnswer = fmt.Errorf("store: no answer by the deadline: %w", context.DeadlineExceeded)

// commitResult is the outcome of storing one input.
type commitResult struct {
	inserted bool
	// retried is set when an attempt of the batch failed before the one that
	// committed: that attempt may have stored the batch (a commit whose reply was
	// lost), so an input reported as a duplicate may be new.
	retried bool
	err     error
}

// store stores in with the inputs handed over with it, and reports the outcome:
// inserted false for a duplicate (see commitResult.retried). It returns once the
// batch holding in has committed or failed: never before in is stored. While the
// store is unavailable, a batch retries until the earliest deadline of its inputs
// (less spoolReserve with a spool), at most maxBatchRetry; without a spool, in then
// queues again while at least minAttempt of ctx's time is left (batchTimeout when
// ctx has no deadline; the last batch may end up to maxBatchRetry after it). stored,
// when set, is called once in is stored, as soon as its batch commits: before store
// returns, and before a caller woken later could count in twice.
func (g *groupCommit) store(ctx context.Context, in conversation.Input, stored func()) commitResult {
	until, ok := ctx.Deadline()
	if !ok {
		until = time.Now().Add(batchTimeout)
	}
	for failed := false; ; failed = true {
		r := g.storeOnce(ctx, in, stored)
		r.retried = r.retried || failed // the batch that failed may have committed
		if r.err == nil || !storeDown(r.err) || errors.Is(r.err, errNoAnswer) || g.cfg.Spool != nil || ctx.Err() != nil || time.Until(until) < minAttempt {
			return r
		}
	}
}

// storeOnce queues in for the next batch and returns its outcome (await).
func (g *groupCommit) storeOnce(ctx context.Context, in conversation.Input, stored func()) commitResult {
	q := &queuedInput{ctx: ctx, in: in, stored: stored, done: make(chan commitResult, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, q)
	now := time.Now()
	if in.Key != g.lastKey {
		g.switches.add(now)
		g.lastKey = in.Key
	}
	if len(g.queue)+g.storing > 1 || g.switches.within(now, busyGap) {
		g.busy = now
	}
	if g.grew != nil {
		close(g.grew)
		g.grew = nil
	}
	if !g.running {
		g.running = true
		go g.run()
	}
	g.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		return <-q.done
	}
	return g.await(q)
}

// await waits for the outcome of q, whose caller has a deadline. The caller gives up
// once q's batch is overdue, or, while q still waits in the queue, once the batch
// being stored is (the store does not answer: a connection that hangs), but not past
// its own time (its deadline, less spoolReserve with a spool, and storeGrace) once
// that batch's deadline passed: q leaves the queue then. It is told errNoAnswer,
// which storeDown accepts, with a spool in time to be spooled. A batch that began may
// still store q later: its thread is started then (kick), and a copy of it is found
// stored, as after a lost reply. A caller of a slow batch that answers in time, and
// one queued behind it, get its outcome.
func (g *groupCommit) await(q *queuedInput) commitResult {
	own, _ := q.ctx.Deadline()
	if g.cfg.Spool != nil {
		own = own.Add(-spoolReserve)
	}
	own = own.Add(storeGrace)
	for {
		g.mu.Lock()
		at := q.overdue
		if at.IsZero() && !g.overdue.IsZero() {
			// Queued behind a batch: its deadline first (it may be slow, not hung),
			// then no later than the caller's own time, or than the batch's overdue.
			at = g.overdue
			if own.Before(at) {
				at = later(own, g.overdue.Add(-storeGrace))
			}
		}
		if !at.IsZero() && !time.Now().Before(at) && !q.answered {
			q.gone = true
			if q.overdue.IsZero() {
				g.queue = slices.DeleteFunc(g.queue, func(o *queuedInput) bool { return o == q })
			}
			g.mu.Unlock()
			return commitResult{err: errNoAnswer}
		}
		answered, queued := q.answered, q.overdue.IsZero()
		g.mu.Unlock()
		if answered {
			return <-q.done
		}
		wait := minAttempt // between batches: the next begins at once
		if !at.IsZero() {
			wait = time.Until(at)
		}
		if queued {
			// Queued: the batch that takes q may be overdue before at.
			wait = min(wait, minAttempt)
		}
		t := time.NewTimer(wait)
		select {
		case r := <-q.done:
			t.Stop()
			return r
		case <-t.C:
		}
	}
}

// run stores batches until the queue is empty, each gathered for commitDelay while
// the intake is busy.
func (g *groupCommit) run() {
	for {
		g.mu.Lock()
		if busy := !g.busy.IsZero() && time.Since(g.busy) < busyGap; busy && len(g.queue) > 0 && len(g.queue) < fullBatch {
			g.mu.Unlock()
			<-time.After(commitDelay)
			g.mu.Lock()
		}
		n := min(len(g.queue), maxBatch)
		if n == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		batch := g.queue[:n:n]
		g.queue = g.queue[n:]
		g.storing = n
		deadline := g.deadline(batch)
		g.overdue = deadline.Add(storeGrace)
		for _, q := range batch {
			q.overdue = g.overdue
		}
		g.mu.Unlock()
		g.commitBy(batch, deadline, false)
	}
}

// commitBy stores batch in one transaction, its retries bounded by deadline, and
// tells each of its callers the outcome, once the batch no longer counts as being
// stored: a caller that hands its thread's next input over at once (a lane) finds the
// intake quiet, not busy with the batch it came from. When it fails for a reason other
// than the store being unavailable, one input may be what the store refuses: each is
// then stored alone, by the batch's deadline (an input whose time is up rides along as
// in the batch), and told at once, so that the others are not refused with it.
// retried is set when an attempt of a batch holding batch's inputs failed already
// (commitResult.retried).
func (g *groupCommit) commitBy(batch []*queuedInput, deadline time.Time, retried bool) {
	inserted, failed, err := g.enqueue(batch, deadline)
	retried = retried || failed
	if err != nil && len(batch) > 1 && !storeDown(err) {
		for _, q := range batch {
			g.mu.Lock()
			g.overdue = deadline.Add(storeGrace) // each store clears it
			g.mu.Unlock()
			g.commitBy([]*queuedInput{q}, deadline, retried)
		}
		return
	}
	g.mu.Lock()
	g.storing = 0
	g.overdue = time.Time{}
	gone := make([]bool, len(batch))
	for i, q := range batch {
		q.answered, gone[i] = true, q.gone
	}
	g.mu.Unlock()
	for i, q := range batch { // every input counts as stored before any caller wakes
		if err != nil || !inserted[i] && !retried {
			continue
		}
		if inserted[i] && q.stored != nil {
			q.stored()
		}
		if gone[i] && g.kick != nil {
			// Stored (or, after a failed attempt, maybe stored): no caller starts its
			// thread.
			g.kick(q.in.Key)
		}
	}
	for i, q := range batch {
		r := commitResult{err: err}
		if err == nil {
			r.inserted, r.retried = inserted[i], retried
		}
		q.done <- r
	}
}

// deadline returns how long a batch may retry while the store is unavailable: until
// the earliest deadline of its inputs whose time is not up (less spoolReserve with a
// spool), no sooner than minAttempt from now and no later than maxBatchRetry. Those
// whose time is up (they waited long on their lane, or their caller is gone) ride
// along, and do not fail the others with theirs, unless no input is left: then their
// earliest, and the batch fails at once, as each would (one cancelled before its
// deadline gets minAttempt). A batch none of whose callers set a deadline has
// maxBatchRetry (each caller queues again for the rest of its time: store).
func (g *groupCommit) deadline(batch []*queuedInput) time.Time {
	var deadline, expired time.Time
	bounded := true
	for _, q := range batch {
		switch d, ok := q.ctx.Deadline(); {
		case !ok:
			bounded = false
		case q.ctx.Err() != nil:
			expired = earliest(expired, d)
		default:
			deadline = earliest(deadline, d)
		}
	}
	now := time.Now()
	switch {
	case deadline.IsZero() && bounded:
		// Cancelled before its deadline (a stopped turn's forwarded input): one short
		// try, no retries for the rest of that deadline.
		return earliest(expired, now.Add(minAttempt))
	case deadline.IsZero():
		return now.Add(maxBatchRetry)
	case g.cfg.Spool != nil:
		deadline = deadline.Add(-spoolReserve)
	}
	if least := now.Add(minAttempt); deadline.Before(least) {
		return least
	}
	return earliest(deadline, now.Add(maxBatchRetry))
}

// enqueue runs Store.EnqueueBatch for batch, retrying while the store is unavailable
// until deadline, and reports whether an attempt failed before the one that
// succeeded (commitResult.retried).
func (g *groupCommit) enqueue(batch []*queuedInput, deadline time.Time) (inserted []bool, retried bool, err error) {
	ins := make([]conversation.Input, len(batch))
	for i, q := range batch {
		ins[i] = q.in
	}
	// Not cancelled with one caller's context: the batch holds the others' inputs too.
	ctx, cancel := context.WithDeadline(context.WithoutCancel(batch[0].ctx), deadline)
	defer cancel()
	attempts := 0
	err = g.retryStore(ctx, "store inputs", func(ctx context.Context) error {
		attempts++
		var err error
		inserted, err = g.cfg.Store.EnqueueBatch(ctx, ins)
		return err
	})
	return inserted, attempts > 1, err
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// earliest returns the earlier of a and b, a zero time counting as none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}
