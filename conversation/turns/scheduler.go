package turns

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/threadwright/threadwright/conversation"
	"golang.org/x/sync/semaphore"
)

// The scheduler (docs/architecture.md, "Durable turns"): the store, not this
// process's memory, decides who runs a thread. A worker takes the thread's lease and
// begins its first input (Store.AcquireBegin), then its other pending inputs one at a
// time in Seq order until none is left and the lease is released, each step one call
// (Store.Next); a turn's last save frees the lease itself when it leaves nothing
// pending (Turn.Release), so a thread's last turn needs no Next. The
// lease is renewed for every thread this process holds by one heartbeat
// (Store.Renew), which also brings what other replicas asked: a newer message stops
// the running turn, a Stop button names it. A replica that dies stops renewing; its
// leases expire after LeaseTTL and the sweep of any replica (Store.Orphans) takes the
// threads over. Writes are fenced by the lease's token, so a worker that lost its
// lease cannot save over the one that took it.

// scheduler runs one worker per thread this process holds, each input in a turn
// slot (MaxConcurrentTurns), and the sweep that takes over threads without a worker.
type scheduler struct {
	*env
	leases leases
	turn   *envelope
	// gate holds turns back while the intake is busy (admission.go).
	gate *admission
	// slots bounds the turns running at once (MaxConcurrentTurns).
	slots *semaphore.Weighted
	// wg counts the thread workers.
	wg sync.WaitGroup
	// finished is told of each input this process finished (the limits' counts).
	finished func(conversation.Input)
}

// kick makes this process work on thread key: it starts taking the thread's lease
// unless it holds it or is taking it already, in which case it notes that an input
// was enqueued.
func (s *scheduler) kick(key conversation.Key) {
	ts := s.threads
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return
	}
	if t, ok := ts.m[key]; ok {
		t.pokes++
		return
	}
	t := &thread{key: key}
	ts.m[key] = t
	s.wg.Add(1)
	go s.hold(t)
}

// hold takes t's lease and runs the thread's inputs until none is pending. With a
// turn slot free at once, taking the lease begins the first input too
// (Store.AcquireBegin); otherwise the input is begun once a slot is, so that an
// input waiting for one counts no attempt.
func (s *scheduler) hold(t *thread) {
	defer s.wg.Done()
	defer s.letGo(t)
	if !s.admitted(t) {
		return
	}
	slot := s.slots.TryAcquire(1)
	first, ok := s.leases.acquire(t, slot)
	if !ok {
		if slot {
			s.slots.Release(1)
		}
		return
	}
	s.work(t, first, slot)
}

// queuedClearTimeout bounds letGo's clear of a thread's "is waiting in line…" before it
// hands the thread over: at a shutdown every waiting thread's worker clears at once,
// within Shutdown's grace after it cancels them, and a 429 must not hold up the
// hand-over (a Retry-After of 5 s is cut short).
const queuedClearTimeout = time.Second

// letGo removes t from the threads this process holds. A lease still held (its worker
// stopped with inputs pending: a shutdown) is handed over (Store.Abandon), so that
// another worker takes the thread at once. An "is waiting in line…" its worker showed
// and no turn replaced is cleared first, within queuedClearTimeout: the worker that
// takes the thread over does not know of it (and would show nothing beside its agent
// session). A worker whose lease was taken sends no clear: it would come after the
// hand-over, and could wipe the status the new holder set.
func (s *scheduler) letGo(t *thread) {
	ts := s.threads
	ts.mu.Lock()
	if ts.m[t.key] == t {
		delete(ts.m, t.key)
	}
	l := t.lease
	held := l.Held() && !t.lost
	t.lost = t.lost || held
	queued := t.queued
	t.queued = false
	ts.mu.Unlock()
	if queued && held {
		s.clearStatus(s.log.With(conversation.LogKeyThread, t.key.String()), t.key, queuedClearTimeout)
	}
	if held {
		s.leases.abandon(l, "thread with pending inputs handed over")
	}
}

// work runs the pending inputs of t's thread, in order, one at a time, each in a
// turn slot, until none is left and the lease is released, the lease is lost, or the
// service shuts down. first is the input hold began with the lease (nil: none), and
// slot whether hold holds a turn slot for it. A turn that leaves its input pending
// (its store writes failed, for example) is tried again after a backoff, holding
// the thread so that no later input overtakes it.
func (s *scheduler) work(t *thread, first *conversation.Input, slot bool) {
	log := s.log.With(conversation.LogKeyThread, t.key.String())
	retry := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(time.Second), backoff.WithMaxInterval(30*time.Second),
		backoff.WithMaxElapsedTime(0))
	// hold waited for the intake before taking the lease: the first input's turn
	// starts without waiting again.
	for next := false; ; next = true {
		if s.ctx.Err() != nil || s.threads.isLost(t) {
			if slot {
				s.slots.Release(1)
			}
			return
		}
		if !slot && ((next && !s.admitted(t)) || !s.slot(t)) {
			return
		}
		slot = false
		in, freed, pokes, err := s.nextInput(t, first)
		first = nil
		if err != nil {
			s.slots.Release(1)
			if s.notBegun(t, err, pokes, retry, log) {
				return
			}
			continue
		}
		if in == nil {
			s.slots.Release(1)
			if freed && s.leases.freed(t, pokes) {
				return
			}
			continue
		}
		pokes = s.threads.pokesOf(t)
		err = s.turn.runInput(t, *in)
		s.slots.Release(1)
		if pokes, freed := s.threads.takeFreed(t); freed {
			// The turn's last save freed the lease (Turn.Release): no Next.
			if err == nil {
				s.finished(*in)
				retry.Reset()
			}
			if s.leases.freed(t, pokes) {
				return
			}
			continue
		}
		switch {
		case err == nil:
			s.finished(*in)
			retry.Reset()
		case s.lostOrFreed(err):
			if s.leases.freed(t, pokes) {
				return
			}
		case errors.Is(err, conversation.ErrLeaseLost) || s.ctx.Err() != nil || s.threads.isClosed():
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

// nextInput returns the input a worker's turn runs next: first, else the next one
// begun (leases.next), with the burst it starts; freed and pokes are leases.next's.
func (s *scheduler) nextInput(t *thread, first *conversation.Input) (in *conversation.Input, freed bool, pokes int, err error) {
	in, pokes = first, s.threads.pokesOf(t)
	if first == nil {
		in, freed, pokes, err = s.leases.next(t)
	}
	if err == nil && in != nil {
		var b conversation.Input
		if b, err = s.burst(t, *in); err == nil {
			in = &b
		}
	}
	return in, freed, pokes, err
}

// notBegun handles the error of nextInput: it reports whether the worker is done with
// t (its lease gone and nothing enqueued here meanwhile, or the service stopping),
// else waits retry's backoff before the worker tries again.
func (s *scheduler) notBegun(t *thread, err error, pokes int, retry backoff.BackOff, log *slog.Logger) (done bool) {
	if s.lostOrFreed(err) {
		return s.leases.freed(t, pokes)
	}
	if errors.Is(err, conversation.ErrLeaseLost) || s.ctx.Err() != nil {
		return true
	}
	log.Warn("next input not begun; retrying", "error", err)
	return !sleepCtx(s.ctx, retry.NextBackOff())
}

// lostOrFreed reports whether err, of a turn or of next, says the lease is gone while
// the service runs. It may have been taken by another worker, or freed by this one: a
// save or Next that freed it and whose reply was lost finds it gone when retried (a
// save that had been committed ends its turn as finished: Run.savedUnanswered).
// Either way an input enqueued here meanwhile (a poke) must not wait for the sweep:
// the worker goes through leases.freed, which takes the thread again if it is free.
func (s *scheduler) lostOrFreed(err error) bool {
	return errors.Is(err, conversation.ErrLeaseLost) && s.ctx.Err() == nil && !s.threads.isClosed()
}

// admitted waits while the intake is busy (admission.go), at most maxDeferral, and
// reports false when the service shuts down first.
func (s *scheduler) admitted(t *thread) bool {
	waited, bounded := s.gate.wait(s.ctx)
	if waited > 0 {
		s.log.Debug("turn waited for the intake", conversation.LogKeyThread, t.key.String(), "waited", waited, "bounded", bounded)
	}
	return s.ctx.Err() == nil
}

// slot takes a turn slot (MaxConcurrentTurns), showing the thread as queued while it
// waits, counted as queued meanwhile. It reports false when the service shuts down
// first.
func (s *scheduler) slot(t *thread) bool {
	if s.slots.TryAcquire(1) {
		return true
	}
	s.threads.setQueued(t, s.showQueued(t.key))
	s.cfg.Metrics.TurnQueued(1)
	defer s.cfg.Metrics.TurnQueued(-1)
	return s.slots.Acquire(s.ctx, 1) == nil
}

// sweep takes over, every LeaseTTL/5 until ctx ends, the threads with pending inputs
// that no live lease holds: those of a replica that died, or that nobody took. Start
// took them over once before it: the first sweep comes a period later, not at once,
// where it would find the inputs submitted meanwhile, whose workers are taking their
// leases, and poke them into one more Acquire and Next each.
func (s *scheduler) sweep(ctx context.Context) {
	tick := time.NewTicker(s.cfg.LeaseTTL / 5)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := s.takeOrphans(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("sweep for threads without a worker", "error", err)
		}
	}
}

// takeOrphans starts work on the threads with pending inputs and no live lease, and
// returns how many it found.
func (s *scheduler) takeOrphans(ctx context.Context) (int, error) {
	keys, err := s.leases.orphans(ctx)
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		s.kick(k)
	}
	return len(keys), nil
}
