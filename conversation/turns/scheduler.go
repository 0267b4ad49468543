package turns

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/threadwright/threadwright/conversation"
)

// Scheduling defaults.
const (
	// DefaultLeaseTTL is how long a lease lives without renewal: a dead replica's
	// threads are taken over after at most this plus one sweep interval.
	DefaultLeaseTTL = 10 * time.Second
	// DefaultFinalTimeout bounds the final writes of a turn (its reply, cards, save),
	// store retries included: long enough to ride out a database restart.
	DefaultFinalTimeout = 2 * time.Minute
)

// Status texts shown in the thread.
const (
	// StatusQueued is shown while a thread's input waits for a free turn slot
	// (MaxConcurrentTurns).
	StatusQueued = "is waiting in line…"
)

// errClosing is the cause of the turns cancelled by Shutdown.
var errClosing = errors.New("conversation: shutting down")

// thread is a thread this process holds, or is taking, the lease of. Its fields are
// guarded by Service.mu.
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
	// releasing is set while the worker frees the lease (Store.Release): a Renew
	// that misses it then was not a takeover.
	releasing bool
	// pokes counts inputs this process enqueued for the thread; a worker that sees it
	// change while it releases the lease takes the thread again.
	pokes int
	// newest is the Seq of the newest input enqueued for the thread, as Renew reports.
	newest int64
	// run is the turn running now, if any.
	run *active
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
}

// kick makes this process work on thread key: it starts taking the thread's lease
// unless it holds it or is taking it already, in which case it notes that an input
// was enqueued.
func (s *Runtime) kick(key conversation.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if t, ok := s.threads[key]; ok {
		t.pokes++
		return
	}
	t := &thread{key: key}
	s.threads[key] = t
	s.wg.Add(1)
	go s.hold(t)
}

// hold takes t's lease and runs the thread's inputs until none is pending.
func (s *Runtime) hold(t *thread) {
	defer s.wg.Done()
	defer s.letGo(t)
	if !s.acquire(t) {
		return
	}
	s.work(t)
}

// letGo removes t from the threads this process holds. A lease still held (its worker
// stopped with inputs pending: a shutdown) is handed over (Store.Abandon), so that
// another worker takes the thread at once.
func (s *Runtime) letGo(t *thread) {
	s.mu.Lock()
	if s.threads[t.key] == t {
		delete(s.threads, t.key)
	}
	l := t.lease
	held := l.Held() && !t.lost
	t.lost = t.lost || held
	s.mu.Unlock()
	if held {
		s.abandon(l, "thread with pending inputs handed over")
	}
}

// abandon hands l over (Store.Abandon) on a context of its own, and logs why at info
// when it did.
func (s *Runtime) abandon(l conversation.Lease, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	switch err := s.cfg.Store.Abandon(ctx, l); {
	case errors.Is(err, conversation.ErrLeaseLost):
		return // another worker has it already
	case err != nil:
		s.log.Warn("thread not handed over; it is taken over when its lease expires", conversation.LogKeyThread, l.Key.String(), "error", err)
		return
	}
	s.log.Info(why, conversation.LogKeyThread, l.Key.String())
}

// acquire takes t's lease. It reports false when another worker holds the thread
// (which then runs its inputs) or the store does not answer (the sweep tries again).
func (s *Runtime) acquire(t *thread) bool {
	log := s.log.With(conversation.LogKeyThread, t.key.String())
	bo := storeBackoff(0)
	for {
		s.mu.Lock()
		pokes := t.pokes
		s.mu.Unlock()
		start := s.cfg.Now()
		l, prev, ok, err := s.cfg.Store.Acquire(s.ctx, t.key, s.owner, s.cfg.LeaseTTL)
		switch {
		case err != nil && errors.Is(err, conversation.ErrUnavailable) && s.ctx.Err() == nil:
			wait := bo.NextBackOff()
			if wait == backoff.Stop {
				log.Warn("thread not taken: the store does not answer; the sweep tries again", "error", err)
				return false
			}
			log.Warn("taking a thread: store unavailable; retrying", "wait", wait, "error", err)
			if !sleepCtx(s.ctx, wait) {
				return false
			}
			continue
		case err != nil:
			if s.ctx.Err() == nil {
				log.Error("thread not taken; the sweep tries again", "error", err)
			}
			return false
		case !ok:
			// Another worker holds it and runs its inputs. An input enqueued here
			// while it released the lease would find the lease free: look again.
			// Otherwise t goes now, under the lock, so that the next input enqueued
			// here starts a new attempt rather than poking a worker that is gone.
			s.mu.Lock()
			again := t.pokes != pokes
			if !again && s.threads[t.key] == t {
				delete(s.threads, t.key)
			}
			s.mu.Unlock()
			if again {
				continue
			}
			return false
		}
		switch prev {
		case "":
		case s.owner:
			log.Warn("took this process's own lease again: an earlier Acquire's answer was lost", "token", l.Token)
		default:
			log.Warn("took over a thread whose worker stopped renewing its lease", "previous_owner", prev, "token", l.Token)
		}
		s.mu.Lock()
		// since is when Acquire returned: a Renew that started before then may have
		// read the leases before this one was committed (renewed).
		t.lease, t.since, t.validUntil, t.lost = l, s.cfg.Now(), start.Add(s.cfg.LeaseTTL), false
		s.mu.Unlock()
		return true
	}
}

// work runs the pending inputs of t's thread, in order, one at a time, each in a
// turn slot, until none is left and the lease is released, the lease is lost, or the
// service shuts down. A turn that leaves its input pending (its store writes failed,
// for example) is tried again after a backoff, holding the thread so that no later
// input overtakes it.
func (s *Runtime) work(t *thread) {
	log := s.log.With(conversation.LogKeyThread, t.key.String())
	retry := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(time.Second), backoff.WithMaxInterval(30*time.Second),
		backoff.WithMaxElapsedTime(0))
	for {
		if s.ctx.Err() != nil || s.isLost(t) {
			return
		}
		if !s.slot(t) {
			return
		}
		in, err := s.begin(t)
		if err != nil {
			s.turns.Release(1)
			if errors.Is(err, conversation.ErrLeaseLost) || s.ctx.Err() != nil {
				return
			}
			log.Warn("next input not begun; retrying", "error", err)
			if !sleepCtx(s.ctx, retry.NextBackOff()) {
				return
			}
			continue
		}
		if in == nil {
			s.turns.Release(1)
			if s.release(t) {
				return
			}
			continue
		}
		err = s.runInput(t, *in)
		s.turns.Release(1)
		switch {
		case err == nil:
			retry.Reset()
		case errors.Is(err, conversation.ErrLeaseLost) || s.ctx.Err() != nil || s.isClosed():
			// Shutting down: the input stays pending and the thread is handed over.
			return
		default:
			wait := retry.NextBackOff()
			log.Warn("input left pending; trying it again", conversation.LogKeyInput, in.ID, "attempt", in.Attempts, "wait", wait, "error", err)
			if !sleepCtx(s.ctx, wait) {
				return
			}
		}
	}
}

// slot takes a turn slot (MaxConcurrentTurns), showing the thread as queued while it
// waits. It reports false when the service shuts down first.
func (s *Runtime) slot(t *thread) bool {
	if s.turns.TryAcquire(1) {
		return true
	}
	s.setStatusBounded(t.key, StatusQueued)
	return s.waitSlot()
}

// begin starts the next pending input of t's thread (Store.Begin), retrying while the
// store is unavailable. It returns nil when none is pending.
func (s *Runtime) begin(t *thread) (*conversation.Input, error) {
	var in *conversation.Input
	err := s.retryStore(s.ctx, "begin the next input", func(ctx context.Context) error {
		var err error
		in, err = s.cfg.Store.Begin(ctx, s.leaseOf(t))
		return err
	})
	return in, err
}

// release frees t's lease when no input of its thread is pending, and reports
// whether the worker is done with the thread. An input enqueued here meanwhile makes
// it take the thread again.
func (s *Runtime) release(t *thread) bool {
	s.mu.Lock()
	pokes := t.pokes
	t.releasing = true
	s.mu.Unlock()
	var freed bool
	err := s.retryStore(s.ctx, "release a thread", func(ctx context.Context) error {
		var err error
		freed, err = s.cfg.Store.Release(ctx, s.leaseOf(t))
		return err
	})
	s.mu.Lock()
	t.releasing = false
	if err != nil || !freed {
		s.mu.Unlock()
		// Lost, or shutting down: done; an input pending: go on with it.
		return err != nil && (errors.Is(err, conversation.ErrLeaseLost) || s.ctx.Err() != nil)
	}
	again := t.pokes != pokes
	t.lease = conversation.Lease{}
	if !again && s.threads[t.key] == t {
		delete(s.threads, t.key) // under the lock: see acquire
	}
	s.mu.Unlock()
	if again {
		return !s.acquire(t)
	}
	return true
}

// leaseOf returns t's lease.
func (s *Runtime) leaseOf(t *thread) conversation.Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.lease
}

// isLost reports whether t's lease was taken by another worker.
func (s *Runtime) isLost(t *thread) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.lost
}

// confirm makes sure t's lease is still this process's before the turn writes to the
// chat. While renewals succeed that is known; after they have failed for LeaseTTL it
// renews now, retrying until the store answers or ctx ends. Errors: ErrLeaseLost;
// ctx's error.
func (s *Runtime) confirm(ctx context.Context, t *thread) error {
	if t == nil {
		return nil
	}
	s.mu.Lock()
	lost, valid := t.lost, s.cfg.Now().Before(t.validUntil)
	s.mu.Unlock()
	switch {
	case lost:
		return conversation.ErrLeaseLost
	case valid:
		return nil
	}
	err := s.retryStore(ctx, "confirm the thread's lease", func(ctx context.Context) error {
		start := s.cfg.Now()
		states, err := s.cfg.Store.Renew(ctx, s.owner, s.cfg.LeaseTTL)
		if err != nil {
			return err
		}
		s.renewed(start, states)
		return nil
	})
	if err != nil {
		return err
	}
	if s.isLost(t) {
		return conversation.ErrLeaseLost
	}
	return nil
}

// heartbeat renews this process's leases every LeaseTTL/10 until ctx ends.
func (s *Runtime) heartbeat(ctx context.Context) {
	tick := time.NewTicker(s.cfg.LeaseTTL / 10)
	defer tick.Stop()
	failing := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		start := s.cfg.Now()
		states, err := s.cfg.Store.Renew(ctx, s.owner, s.cfg.LeaseTTL)
		if err != nil {
			if ctx.Err() == nil && failing%10 == 0 {
				s.log.Warn("leases not renewed; turns hold their writes until the store answers", "failures", failing+1, "error", err)
			}
			failing++
			continue
		}
		if failing > 0 {
			s.log.Warn("leases renewed again after store failures", "failures", failing)
			failing = 0
		}
		s.renewed(start, states)
	}
}

// renewed applies the result of a Renew that started at start: leases still held are
// valid for LeaseTTL more and bring other workers' requests (a newer message, a Stop
// button); a lease held since before start and missing from states was taken over. A
// lease of this owner that no worker of this process holds (an Acquire whose answer
// was lost) is handed over, so that it is not renewed for nobody.
func (s *Runtime) renewed(start time.Time, states []conversation.LeaseState) {
	byKey := make(map[conversation.Key]conversation.LeaseState, len(states))
	for _, st := range states {
		byKey[st.Key] = st
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, st := range byKey {
		if _, ok := s.threads[key]; !ok {
			go s.abandon(st.Lease, "a lease this process lost track of handed over") // fenced by its token
		}
	}
	for key, t := range s.threads {
		if !t.lease.Held() || t.lost || t.releasing {
			continue
		}
		st, ok := byKey[key]
		if !ok || st.Token != t.lease.Token {
			if t.since.Before(start) {
				t.lost = true
				s.log.Warn("thread lease lost: another worker took the thread; this worker stops without writing", conversation.LogKeyThread, key.String(), "token", t.lease.Token)
				if t.run != nil {
					t.run.cancel(conversation.ErrLeaseLost)
				}
			}
			continue
		}
		if v := start.Add(s.cfg.LeaseTTL); v.After(t.validUntil) {
			t.validUntil = v
		}
		t.newest = max(t.newest, st.Newest)
		r := t.run
		if r == nil {
			continue
		}
		if st.Message > r.seq && r.stoppable && r.run == "" {
			s.log.Info("a newer message on another replica stopped the running turn", conversation.LogKeyThread, key.String(), conversation.LogKeyInput, r.inputID)
			r.cancel(conversation.Stopped{By: st.MessageBy, NewMessage: true})
		}
		if st.Stop.Target != "" && r.stoppable && (st.Stop.Target == r.run || r.run == "" && st.Stop.Target == r.inputID) {
			s.log.Info("a Stop button on another replica stopped the running turn", conversation.LogKeyThread, key.String(), conversation.LogKeyInput, r.inputID, "by", st.Stop.By)
			r.cancel(conversation.Stopped{By: st.Stop.By})
			go s.clearSignal(key)
		}
	}
}

// clearSignal removes an applied stop request, so that it does not stop a later
// turn of the same pipeline run.
func (s *Runtime) clearSignal(key conversation.Key) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.cfg.Store.Signal(ctx, key, conversation.StopRequest{}); err != nil {
		s.log.Warn("stop request not cleared", conversation.LogKeyThread, key.String(), "error", err)
	}
}

// sweep takes over, every LeaseTTL/5 until ctx ends, the threads with pending inputs
// that no live lease holds: those of a replica that died, or that nobody took.
func (s *Runtime) sweep(ctx context.Context) {
	tick := time.NewTicker(s.cfg.LeaseTTL / 5)
	defer tick.Stop()
	for {
		if _, err := s.takeOrphans(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("sweep for threads without a worker", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// orphanBatch bounds the threads one sweep takes.
const orphanBatch = 500

// takeOrphans starts work on the threads with pending inputs and no live lease, and
// returns how many it found.
func (s *Runtime) takeOrphans(ctx context.Context) (int, error) {
	keys, err := s.cfg.Store.Orphans(ctx, orphanBatch)
	if err != nil {
		return 0, fmt.Errorf("find threads without a worker: %w", err)
	}
	for _, k := range keys {
		s.kick(k)
	}
	return len(keys), nil
}

// startRun records the turn of in as t's running turn, cancelled by cancel.
func (s *Runtime) startRun(t *thread, in conversation.Input, cancel context.CancelCauseFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.run = &active{inputID: in.ID, seq: in.Seq, cancel: cancel, pokes: t.pokes}
}

// endRun forgets t's running turn.
func (s *Runtime) endRun(t *thread) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.run = nil
}

// allowStop marks the thread's running turn as one a person may stop.
func (s *Runtime) allowStop(key conversation.Key) {
	s.markRun(key, func(a *active) { a.stoppable = true })
}

// allowRunStop marks the thread's running turn as the pipeline run id, which its Stop
// button may stop.
func (s *Runtime) allowRunStop(key conversation.Key, id string) {
	s.markRun(key, func(a *active) { a.stoppable, a.run = true, id })
}

// freeze makes the thread's running turn no longer stoppable (its answer is ready:
// posting and saving it must not be cut short).
func (s *Runtime) freeze(key conversation.Key) {
	s.markRun(key, func(a *active) { a.stoppable = false })
}

func (s *Runtime) markRun(key conversation.Key, f func(*active)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.threads[key]; t != nil && t.run != nil {
		f(t.run)
	}
}

// stopLocal cancels the thread's running turn in this process with cause when it is
// stoppable and, when target is set, is the turn of that input or of that pipeline
// run; a pipeline run is stopped only by its id. It reports whether it did.
func (s *Runtime) stopLocal(key conversation.Key, target string, cause conversation.Stopped) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[key]
	if t == nil || t.run == nil || !t.run.stoppable {
		return false
	}
	a := t.run
	if a.run != "" && target != a.run || a.run == "" && target != "" && a.inputID != target {
		return false
	}
	a.cancel(cause)
	return true
}

// stopOlder cancels the thread's running turn in this process with cause when it is
// stoppable, works on no pipeline run, and is not in's own turn. It reports whether
// it did.
func (s *Runtime) stopOlder(in conversation.Input, cause conversation.Stopped) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[in.Key]
	if t == nil || t.run == nil || !t.run.stoppable || t.run.run != "" || t.run.inputID == in.ID {
		return false
	}
	t.run.cancel(cause)
	return true
}

// waiting reports whether another input of key waits behind its running turn.
func (s *Runtime) waiting(key conversation.Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[key]
	if t == nil || t.run == nil {
		return false
	}
	return t.pokes > t.run.pokes || t.newest > t.run.seq
}

// Holds reports whether this process holds (or is taking) thread key: its worker
// runs, or is about to run, the thread's inputs.
func (s *Runtime) Holds(key conversation.Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.threads[key]
	return ok
}

// retryStore runs op, retrying with backoff while it fails with ErrUnavailable, until
// it succeeds, fails otherwise, or ctx ends (its deadline bounds the retries). Each
// retry is logged at warn.
func (s *Runtime) retryStore(ctx context.Context, what string, op func(context.Context) error) error {
	bo := storeBackoff(-1)
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil || !errors.Is(err, conversation.ErrUnavailable) || ctx.Err() != nil {
			return err
		}
		wait := bo.NextBackOff()
		if d, ok := ctx.Deadline(); ok && s.cfg.Now().Add(wait).After(d) {
			return err
		}
		s.log.Warn("store unavailable; retrying", "op", what, "attempt", attempt, "wait", wait, "error", err)
		if !sleepCtx(ctx, wait) {
			return err
		}
	}
}

// storeBackoff is the backoff of store retries: from 100 ms, doubling to 5 s, with
// jitter, for at most maxElapsed (0: 30 s; negative: no bound but the caller's
// context).
func storeBackoff(maxElapsed time.Duration) backoff.BackOff {
	switch {
	case maxElapsed == 0:
		maxElapsed = 30 * time.Second
	case maxElapsed < 0:
		maxElapsed = 0
	}
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(100*time.Millisecond), backoff.WithMaxInterval(5*time.Second),
		backoff.WithMaxElapsedTime(maxElapsed))
}

// sleepCtx waits for d or until ctx ends, and reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d == backoff.Stop {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// setStatusBounded shows status in the thread on a short context of its own; a
// failure is logged at debug.
func (s *Runtime) setStatusBounded(key conversation.Key, status string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.setStatus(ctx, s.log.With(conversation.LogKeyThread, key.String()), key, status)
}
