package turns

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"golang.org/x/sync/semaphore"
)

// DefaultMaxConcurrentTurns is the default of Config.MaxConcurrentTurns: turns wait
// on the model and Slack most of their time, so a process runs many at once.
const DefaultMaxConcurrentTurns = 100

// Runtime runs conversations' turns: it accepts inputs, deduplicates and persists
// them, and runs one turn per input through its Handler, each thread's inputs one at
// a time and in order across all replicas sharing the store (docs/architecture.md,
// "Durable turns"). Create it with New, call Start, and Shutdown at the end; it is
// safe for concurrent use.
type Runtime struct {
	cfg   Config
	log   *slog.Logger
	owner string
	turns *semaphore.Weighted
	// ctx is the parent of every turn; cancelled (with errClosing) when Shutdown
	// gives up waiting.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// bg runs the heartbeat, the sweep and the spool's drain, on bgCtx; stopBG ends
	// them.
	bg     sync.WaitGroup
	bgCtx  context.Context
	stopBG context.CancelFunc
	wg     sync.WaitGroup // one per thread worker
	// limits are this process's buckets and spool counts (limits.go).
	limits *limits
	// handler runs each input's turn (the router, Service).
	handler Handler

	// mu guards closed, threads and every thread's fields.
	mu      sync.Mutex
	closed  bool
	started bool
	threads map[conversation.Key]*thread

	// intakeMu serializes accept, so that an input never overtakes an earlier one
	// that went to the spool.
	intakeMu sync.Mutex
	// spoolMu serializes the spool's hand-over: while spooling is set, inputs go to
	// the spool, in order, and the drain moves them into the store.
	spoolMu  sync.Mutex
	spooling bool
	draining bool
}

// Handler runs one turn of an input (docs/architecture.md, "Durable turns"): it does
// what the input asks and ends the turn with Run.Finish (a save) or Run.Drop (none).
// It returns nil once the input is finished, and an error when the input stays
// pending to run again: the store did not answer, the service is shutting down, or
// the lease was lost (conversation.ErrLeaseLost).
type Handler interface {
	Handle(ctx context.Context, r *Run) error
}

// New fills in cfg's defaults and returns a Runtime; call Start before Submit.
func New(cfg Config) *Runtime {
	setDefault(&cfg.MaxConcurrentTurns, DefaultMaxConcurrentTurns)
	setDefault(&cfg.HistoryMessages, 40)
	setDefault(&cfg.TurnTimeout, 5*time.Minute)
	setDefault(&cfg.MaxAttempts, 3)
	setDefault(&cfg.LeaseTTL, DefaultLeaseTTL)
	setDefault(&cfg.FinalTimeout, DefaultFinalTimeout)
	setDefault(&cfg.NoticeInterval, DefaultNoticeInterval)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Store = tracedStore{cfg.Store} // trace.go
	// Every text also names the HTTP API's tokens as people can read them
	// (redact.go).
	rewrite := apiActors
	if redact := cfg.Redact; redact != nil {
		rewrite = func(s string) string { return redact(apiActors(s)) }
	}
	cfg.Messenger = redactMessenger(cfg.Messenger, rewrite)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Owner == "" {
		cfg.Owner = newOwner()
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	bg, stopBG := context.WithCancel(context.Background())
	return &Runtime{
		handler: cfg.Handler,
		cfg:     cfg,
		log:     cfg.Logger,
		owner:   cfg.Owner,
		turns:   semaphore.NewWeighted(int64(cfg.MaxConcurrentTurns)),
		ctx:     ctx,
		cancel:  cancel,
		bgCtx:   bg,
		stopBG:  stopBG,
		threads: make(map[conversation.Key]*thread),
		limits:  newLimits(cfg.UserRate, cfg.UserBurst),
	}
}

// Messenger returns the Messenger turns post through: the configured one, scrubbing
// secrets out of every text it sends (redact.go).
func (s *Runtime) Messenger() conversation.Messenger { return s.cfg.Messenger }

// newOwner returns a lease owner name unique to this start of this process.
func newOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%x", host, os.Getpid(), b)
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Start begins the background work: it takes over the threads with pending inputs
// that no live worker holds (left by a crash, a shutdown or another replica that
// died), then renews this process's leases every LeaseTTL/10, sweeps for such threads
// every LeaseTTL/5, and moves spooled inputs into the store, until Shutdown. Errors:
// the store's, from the first sweep.
func (s *Runtime) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return errors.New("conversation: Start called twice or after Shutdown")
	}
	s.started = true
	s.mu.Unlock()
	bg := s.bgCtx
	n, err := s.takeOrphans(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		s.log.Info("resuming threads with pending inputs", "threads", n)
	}
	s.bg.Add(2)
	go func() { defer s.bg.Done(); s.heartbeat(bg) }()
	go func() { defer s.bg.Done(); s.sweep(bg) }()
	if s.cfg.Spool != nil {
		if n, err := s.cfg.Spool.Len(ctx); err != nil {
			s.log.Error("spool not read; its inputs wait for the next start", "error", err)
		} else if n > 0 {
			s.log.Warn("moving inputs spooled while the store was unavailable into it", "count", n)
			s.spoolMu.Lock()
			s.spooling = true
			s.startDrainLocked(bg)
			s.spoolMu.Unlock()
		}
	}
	return nil
}

// Wait blocks until this process holds no thread and has nothing spooled (every
// input it took is finished), or ctx ends (its error is returned then). An input
// submitted before Wait is called is waited for.
func (s *Runtime) Wait(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		s.mu.Lock()
		idle := len(s.threads) == 0
		s.mu.Unlock()
		if idle && !s.isSpooling() {
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
func (s *Runtime) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()

	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	defer func() {
		s.handOver()
		s.stopBG()
		s.bg.Wait()
	}()
	select {
	case <-done:
		s.cancel(errClosing)
		return nil
	case <-ctx.Done():
	}
	s.cancel(errClosing)
	select {
	case <-done:
		return fmt.Errorf("conversation: shutdown: turns cancelled: %w", ctx.Err())
	case <-time.After(cancelGrace):
		return fmt.Errorf("conversation: shutdown: turns did not stop within %s of being cancelled: %w", cancelGrace, ctx.Err())
	}
}

// handOver frees the leases this process still holds, so that other workers take
// their threads at once; a turn of this process that has not returned yet can no
// longer write (its thread is marked lost first).
func (s *Runtime) handOver() {
	s.mu.Lock()
	var leases []conversation.Lease
	for _, t := range s.threads {
		if t.lease.Held() && !t.lost {
			t.lost = true
			leases = append(leases, t.lease)
		}
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, l := range leases {
		wg.Go(func() { s.abandon(l, "thread with pending inputs handed over") })
	}
	wg.Wait()
}

// cancelGrace is how long Shutdown waits for cancelled turns to return.
const cancelGrace = 5 * time.Second

// redact scrubs secrets out of text with Config.Redact, if set.
func (s *Runtime) redact(text string) string {
	if s.cfg.Redact == nil {
		return text
	}
	return s.cfg.Redact(text)
}

func (s *Runtime) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
