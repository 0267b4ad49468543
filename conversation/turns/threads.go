package turns

import (
	"context"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// threadSet is the threads this process holds, or is taking, the lease of, with
// their running turns. Its mutex guards the set, its flags and every thread's fields.
type threadSet struct {
	mu      sync.Mutex
	closed  bool
	started bool
	m       map[conversation.Key]*thread
}

func newThreadSet() *threadSet {
	return &threadSet{m: make(map[conversation.Key]*thread)}
}

// thread is a thread this process holds, or is taking, the lease of. Its fields are
// guarded by threadSet.mu.
type thread struct {
	key conversation.Key
	// lease is the lease held; zero while it is being acquired.
	lease conversation.Lease
	// since is when the lease was acquired (by the local clock).
	since time.Time
	// validUntil is when the lease may have expired by now, as far as this process
	// knows: the start of the last successful Acquire or Renew plus LeaseTTL.
	validUntil time.Time
	// lost is set when a Renew showed that another worker took the thread.
	lost bool
	// releasing is set while the worker frees the lease (Store.Next, or the turn's
	// last save, Turn.Release): a Renew that misses it then was not a takeover.
	releasing bool
	// nexts counts the worker's Store.Next calls, each retry of one counting as the
	// same call: a call retried after its answer was lost counts no second attempt.
	nexts int64
	// pokes counts inputs this process enqueued for the thread; a worker that sees it
	// change while it releases the lease takes the thread again.
	pokes int
	// freed is set when the last save of a turn freed the lease (Turn.Release);
	// freedPokes is pokes before that save, which the worker compares (leases.freed).
	freed      bool
	freedPokes int
	// newest is the Seq of the newest input enqueued for the thread, as Renew reports.
	newest int64
	// retaken is the input begun when this process took its own lease again (an
	// AcquireBegin whose answer was lost, tried again): an earlier run of it, by the
	// lease's holder before, may have posted, whatever its Attempts say.
	retaken string
	// run is the turn running now, if any; last is the turn that ran before, once
	// it ended (for awaits).
	run, last *active
	// queued is set while the thread shows StatusQueued, which its worker set as the
	// input waited for a turn slot, until the input's turn replaces or clears it
	// (Run.ShowWorking, Run.ClearStatus, Run.Drop).
	queued bool
}

// active is a running turn that can be stopped.
type active struct {
	inputID string
	seq     int64
	cancel  context.CancelCauseFunc
	// stoppable is true once the turn runs the assistant pipeline (workflow steps run
	// to their end).
	stoppable bool
	// run, when set, names the pipeline run the turn works on: a Stop button naming
	// it stops the turn, whatever part of the run the turn is, and a newer message
	// in the thread does not (people talk while a pipeline works).
	run string
	// pokes is the thread's pokes when the turn began.
	pokes int
	// interruptible is true when a newer person's message stops the turn (the
	// channel's policy is interrupt; burst.go).
	interruptible bool
	// messageTS is the Slack ts of the newest person's message the turn answers (""
	// for another input): a message stops the turn only when it was sent after it,
	// not a late first copy of an older one (newerMessage).
	messageTS string
	// checked is the newest LeaseState.Message applyRequests has looked up
	// (stopIfNewer); lookups counts the lookups of it that found no newer message
	// (maxLookups once one found it newer), and looking is true while one runs.
	checked int64
	lookups int
	looking bool
}

// stopsForMessage reports whether a person's message stops a: a is stoppable,
// interruptible, and works on no pipeline run.
func (a *active) stopsForMessage() bool { return a.stoppable && a.interruptible && a.run == "" }

// newerMessage reports whether m, a person's message that arrived while a runs, was
// sent after the newest message a answers, or a answers none: only then does it stop
// a. A copy of an older message that Slack delivers late (its first delivery failed)
// is answered after a, in its turn, and leaves a's answer alone.
func (a *active) newerMessage(m *conversation.UserMessage) bool {
	return a.messageTS == "" || m == nil || conversation.CompareTS(m.TS, a.messageTS) > 0
}

// isClosed reports whether Shutdown has begun.
func (ts *threadSet) isClosed() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.closed
}

// idle reports whether this process holds no thread.
func (ts *threadSet) idle() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.m) == 0
}

// holds reports whether this process holds (or is taking) thread key.
func (ts *threadSet) holds(key conversation.Key) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	_, ok := ts.m[key]
	return ok
}

// leaseOf returns t's lease.
func (ts *threadSet) leaseOf(t *thread) conversation.Lease {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return t.lease
}

// releasing notes that a save that may free t's lease (Turn.Release) begins, and the
// pokes before it.
func (ts *threadSet) releasing(t *thread) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.releasing, t.freedPokes = true, t.pokes
}

// released notes that the save releasing announced ended, and whether it freed t's
// lease, which t then no longer holds.
func (ts *threadSet) released(t *thread, freed bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.releasing = false
	if freed {
		t.freed, t.lease = true, conversation.Lease{}
	}
}

// pokesOf returns how many inputs were enqueued here for t's thread (its pokes).
func (ts *threadSet) pokesOf(t *thread) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return t.pokes
}

// takeFreed reports whether a save freed t's lease since the last call, and t's
// pokes before that save.
func (ts *threadSet) takeFreed(t *thread) (pokes int, freed bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	freed, t.freed = t.freed, false
	return t.freedPokes, freed
}

// isLost reports whether t's lease was taken by another worker.
func (ts *threadSet) isLost(t *thread) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return t.lost
}

// startRun records the turn of in as t's running turn, cancelled by cancel;
// interruptible says whether a newer person's message stops it. seq is that of the
// newest input the turn answers (the last of its burst).
func (ts *threadSet) startRun(t *thread, in conversation.Input, cancel context.CancelCauseFunc, interruptible bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	seq := in.Seq
	if n := len(in.Burst); n > 0 {
		seq = in.Burst[n-1].Seq
	}
	msgTS := ""
	if in.Message != nil {
		msgTS = in.Message.TS
		for _, b := range in.Burst { // the newest by ts, as BurstMessages sorts them
			if b.Message != nil && conversation.CompareTS(b.Message.TS, msgTS) > 0 {
				msgTS = b.Message.TS
			}
		}
	}
	t.run = &active{inputID: in.ID, seq: seq, cancel: cancel, pokes: t.pokes, interruptible: interruptible, messageTS: msgTS}
}

// endRun forgets t's running turn.
func (ts *threadSet) endRun(t *thread) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.run, t.last = nil, t.run
}

// markRun changes the running turn of thread key with f, when there is one.
func (ts *threadSet) markRun(key conversation.Key, f func(*active)) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.m[key]; t != nil && t.run != nil {
		f(t.run)
	}
}

// stopLocal cancels the thread's running turn in this process with cause when it is
// stoppable and target stops it (stoppedBy). It reports whether it did.
func (ts *threadSet) stopLocal(key conversation.Key, target string, cause conversation.Stopped) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.m[key]
	if t == nil || t.run == nil || !t.run.stoppable {
		return false
	}
	if !t.run.stoppedBy(target) {
		return false
	}
	t.run.cancel(cause)
	return true
}

// stoppedBy reports whether a Stop naming target stops a: the session's native Stop
// (conversation.SessionStop) stops whatever runs; a pipeline run's Stop only that
// run; any other, the turn of the input it names ("" for any input's).
func (a *active) stoppedBy(target string) bool {
	switch {
	case target == conversation.SessionStop:
		return true
	case a.run != "":
		return target == a.run
	}
	return target == "" || target == a.inputID
}

// stopOlder cancels the thread's running turn in this process with cause when it is
// stoppable, interruptible, works on no pipeline run, is not in's own turn, and
// answers no message sent after in's (active.newerMessage). It reports whether it did.
func (ts *threadSet) stopOlder(in conversation.Input, cause conversation.Stopped) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.m[in.Key]
	if t == nil || t.run == nil || !t.run.stopsForMessage() || t.run.inputID == in.ID || !t.run.newerMessage(in.Message) {
		return false
	}
	t.run.cancel(cause)
	return true
}

// awaits reports whether the thread of key has an input that no turn of its worker
// has begun: none has run yet, or inputs were enqueued after the newest input of the
// last turn (as waiting sees them). A worker that loops back for a slot after its
// turn, with nothing enqueued since, has none.
func (ts *threadSet) awaits(key conversation.Key) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.m[key]
	if t == nil {
		return true
	}
	last := t.run
	if last == nil {
		last = t.last
	}
	return last == nil || t.enqueuedAfter(last)
}

// setQueued records whether t shows StatusQueued (scheduler.slot).
func (ts *threadSet) setQueued(t *thread, queued bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.queued = queued
}

// takeQueued reports whether t shows StatusQueued, and forgets it.
func (ts *threadSet) takeQueued(t *thread) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	q := t.queued
	t.queued = false
	return q
}

// enqueuedAfter reports whether an input of t was enqueued after the newest input of
// turn r: this process poked t since r began, or Renew saw a newer Seq.
func (t *thread) enqueuedAfter(r *active) bool {
	return t.pokes > r.pokes || t.newest > r.seq
}

// waiting reports whether another input of key waits behind its running turn.
func (ts *threadSet) waiting(key conversation.Key) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.m[key]
	if t == nil || t.run == nil {
		return false
	}
	return t.enqueuedAfter(t.run)
}

// takeRetaken reports whether in is the input t's lease began when this process took
// its own lease again (thread.retaken), and forgets it.
func (ts *threadSet) takeRetaken(t *thread, inputID string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	retaken := inputID != "" && t.retaken == inputID
	t.retaken = ""
	return retaken
}
