package turns

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"
)

// Runtime runs conversations' turns: it accepts inputs, deduplicates and persists
// them, and runs one turn per input through its Handler, each thread's inputs one at
// a time and in order across all replicas sharing the store (docs/architecture.md,
// "Durable turns"). Create it with New, call Start, and Shutdown at the end; it is
// safe for concurrent use.
type Runtime struct {
	env *env
	// intake takes the inputs of Submit (promoted).
	*intake
	spool  *spooler
	leases leases
	sched  *scheduler
	// cancel cancels the turns (env.ctx) with errClosing; stopBG ends the
	// background work (env.bgCtx).
	cancel context.CancelCauseFunc
	stopBG context.CancelFunc
}

// cancelGrace is how long Shutdown waits for cancelled turns to return.
const cancelGrace = 5 * time.Second

// New fills in cfg's defaults and returns a Runtime whose turns h runs; call Start
// before Submit.
func New(cfg Config, h Handler) *Runtime {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancelCause(context.Background())
	bg, stopBG := context.WithCancel(context.Background())
	e := &env{cfg: cfg, log: cfg.Logger, threads: newThreadSet(), ctx: ctx, bg: &sync.WaitGroup{}, bgCtx: bg}
	lim := newLimits(cfg.UserRate, cfg.UserBurst)
	ls := leases{env: e, renewing: &singleflight.Group{}, finished: lim.finished}
	rt := &Runtime{env: e, leases: ls, cancel: cancel, stopBG: stopBG}
	rt.spool = &spooler{env: e, limits: lim}
	gate := newAdmission(realClock{}, intakeQuiet, burstWindow, burstSubmits, maxDeferral)
	rt.intake = &intake{env: e, limits: lim, spool: rt.spool, commit: newGroupCommit(e), gate: gate}
	rt.sched = &scheduler{env: e, leases: ls, gate: gate, slots: semaphore.NewWeighted(int64(cfg.MaxConcurrentTurns)),
		turn: &envelope{env: e, handler: h, leases: ls, intake: rt.intake}, finished: lim.finished}
	rt.intake.kick, rt.spool.kick, rt.intake.commit.kick = rt.sched.kick, rt.sched.kick, rt.sched.kick
	rt.spool.stop = rt.intake.stopFor
	return rt
}

// Messenger returns the Messenger turns post through: the configured one, scrubbing
// secrets out of every text it sends (redact.go).
func (rt *Runtime) Messenger() conversation.Messenger { return rt.env.cfg.Messenger }

// Start begins the background work: it takes over the threads with pending inputs
// that no live worker holds (left by a crash, a shutdown or another replica that
// died), then renews this process's leases every LeaseTTL/10, sweeps for such threads
// every LeaseTTL/5, and moves spooled inputs into the store, until Shutdown. Errors:
// the store's, from the first sweep.
func (rt *Runtime) Start(ctx context.Context) error {
	e, ts := rt.env, rt.env.threads
	ts.mu.Lock()
	if ts.started || ts.closed {
		ts.mu.Unlock()
		return errors.New("conversation: Start called twice or after Shutdown")
	}
	ts.started = true
	ts.mu.Unlock()
	bg := e.bgCtx
	n, err := rt.sched.takeOrphans(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		e.log.Info("resuming threads with pending inputs", "threads", n)
	}
	e.bg.Add(2)
	go func() { defer e.bg.Done(); rt.leases.heartbeat(bg) }()
	go func() { defer e.bg.Done(); rt.sched.sweep(bg) }()
	rt.spool.resume(ctx)
	return nil
}

// Holds reports whether this process holds (or is taking) thread key: its worker
// runs, or is about to run, the thread's inputs.
func (rt *Runtime) Holds(key conversation.Key) bool { return rt.env.threads.holds(key) }

// Wait blocks until this process holds no thread and has nothing spooled (every
// input it took is finished), or ctx ends (its error is returned then). An input
// submitted before Wait is called is waited for.
func (rt *Runtime) Wait(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if rt.env.threads.idle() && !rt.spool.isSpooling() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Shutdown stops taking inputs and waits for the running turns, and the inputs queued
// behind them in this process, to finish. When ctx ends first, it cancels the running
// turns (they stop at their next safe point, leaving their inputs pending) and waits up
// to cancelGrace more for them to return. The threads it still holds then are handed
// over (Store.Abandon): another replica, or this one after a restart, takes them at
// once.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	ts := rt.env.threads
	ts.mu.Lock()
	ts.closed = true
	ts.mu.Unlock()

	done := make(chan struct{})
	go func() { rt.sched.wg.Wait(); close(done) }()
	defer func() {
		rt.leases.handOver()
		rt.stopBG()
		rt.env.bg.Wait()
	}()
	select {
	case <-done:
		rt.cancel(errClosing)
		return nil
	case <-ctx.Done():
	}
	rt.cancel(errClosing)
	select {
	case <-done:
		return fmt.Errorf("conversation: shutdown: turns cancelled: %w", ctx.Err())
	case <-time.After(cancelGrace):
		return fmt.Errorf("conversation: shutdown: turns did not stop within %s of being cancelled: %w", cancelGrace, ctx.Err())
	}
}
