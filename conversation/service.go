package conversation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// ErrClosed is returned by Service.Submit after Shutdown has begun.
var ErrClosed = errors.New("conversation: service is shutting down")

// Log attribute keys, shared so that logs can be filtered by them.
const (
	LogKeyThread = "thread"
	LogKeyInput  = "input_id"
	LogKeyEvent  = "event_id"
)

// Config configures a Service. Store, Messenger, Executor and Synthesizer are required.
type Config struct {
	Store     Store
	Messenger Messenger
	// Scope, when nil, lets every request through (SCOPE_DESCRIPTION unset).
	Scope       ScopeChecker
	Executor    Executor
	Synthesizer Synthesizer
	Logger      *slog.Logger

	// Workflows are the artifact workflows offered (nil: none); Agent writes and
	// judges their artifacts (required with Workflows).
	Workflows Workflows
	Agent     WorkflowAgent
	// Approvers, when set, are the only Slack users who may approve artifacts
	// (APPROVER_USER_IDS); otherwise a workflow's approvers setting decides.
	Approvers []string

	// Format converts the model's Markdown (artifact texts and options) to the chat's
	// markup when they are shown in cards (agents.ToMrkdwn for Slack's mrkdwn); nil
	// shows them as written. The report file keeps the Markdown.
	Format func(markdown string) string

	// Summarizer folds older messages into the conversation's summary (nil: no
	// summaries; the prompt is then bounded by HistoryMessages alone).
	Summarizer Summarizer
	// HistoryTokens bounds the history given to the model, in estimated tokens (four
	// characters a token; default 8,000). Past it, or when the unsummarized messages
	// fill three quarters of HistoryMessages, the older half is summarized.
	HistoryTokens int

	// MaxConcurrentTurns bounds the turns running at once across all threads
	// (default 8). Inputs of one thread always run one at a time, in order.
	MaxConcurrentTurns int
	// HistoryMessages is how many of the newest stored messages a turn loads into the
	// prompt (default 40).
	HistoryMessages int
	// ThreadContextMessages bounds the earlier human messages read from Slack when the
	// bot is first mentioned inside an existing thread (default 50).
	ThreadContextMessages int
	// NoStreaming turns off streaming the assistant's answer into the thread as it is
	// written; it is on by default where the Messenger is a StreamingMessenger.
	NoStreaming bool
	// MaxPromptChars bounds one message's text as given to the model (default 16,000
	// characters); longer texts are stored whole and clipped in the prompt with a note.
	MaxPromptChars int
	// TurnTimeout bounds one turn, model and tool calls included (default 5 minutes).
	// A pipeline turn starts no new item after half of it and continues in a new turn.
	TurnTimeout time.Duration
	// PipelineConcurrency bounds the items of one pipeline written at once, across its
	// running auto artifacts (default 4; an artifact's concurrency may lower it).
	PipelineConcurrency int
	// MaxAttempts is how many times an input is tried (across restarts) before it is
	// given up with a message to the user (default 3).
	MaxAttempts int
	// Now returns the current time (default time.Now).
	Now func() time.Time
}

// Service runs conversations: it accepts inputs, deduplicates and persists them, queues
// them per thread and runs one turn per input (DESIGN.md, "Data flow of one Slack
// event", steps 2-5). Create it with NewService; it is safe for concurrent use.
type Service struct {
	cfg    Config
	log    *slog.Logger
	turns  *semaphore.Weighted
	ctx    context.Context // parent of every turn; cancelled when Shutdown gives up waiting
	cancel context.CancelFunc
	wg     sync.WaitGroup // one per running thread worker
	// running holds each thread's running turn, to stop it.
	running runningTurns

	// mu guards closed and threads.
	mu     sync.Mutex
	closed bool
	// threads holds the queued inputs of every thread with work in progress; a thread
	// is present exactly while its worker goroutine runs.
	threads map[Key][]Input
}

// NewService validates cfg, fills in defaults and returns a Service ready for Submit.
func NewService(cfg Config) (*Service, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("conversation: Config.Store is required")
	case cfg.Messenger == nil:
		return nil, errors.New("conversation: Config.Messenger is required")
	case cfg.Executor == nil:
		return nil, errors.New("conversation: Config.Executor is required")
	case cfg.Synthesizer == nil:
		return nil, errors.New("conversation: Config.Synthesizer is required")
	case cfg.Workflows != nil && cfg.Agent == nil:
		return nil, errors.New("conversation: Config.Agent is required with Workflows")
	}
	if cfg.Workflows == nil {
		cfg.Workflows = noWorkflows{}
	}
	if cfg.Format == nil {
		cfg.Format = func(s string) string { return s }
	}
	setDefault(&cfg.MaxConcurrentTurns, 8)
	setDefault(&cfg.HistoryMessages, 40)
	setDefault(&cfg.ThreadContextMessages, 50)
	setDefault(&cfg.MaxPromptChars, 16000)
	setDefault(&cfg.TurnTimeout, 5*time.Minute)
	setDefault(&cfg.MaxAttempts, 3)
	setDefault(&cfg.PipelineConcurrency, 4)
	setDefault(&cfg.HistoryTokens, 8000)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{
		cfg:     cfg,
		log:     cfg.Logger,
		turns:   semaphore.NewWeighted(int64(cfg.MaxConcurrentTurns)),
		ctx:     ctx,
		cancel:  cancel,
		threads: make(map[Key][]Input),
	}, nil
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Submit accepts an input: it persists it (deduplicated by in.ID) and queues it behind
// the inputs of the same thread. It returns false when the input was a duplicate or is
// not for the bot (a thread reply, without a mention, in a thread the bot is not part
// of). It does not wait for the turn. Errors: ErrClosed after Shutdown began; store
// errors.
func (s *Service) Submit(ctx context.Context, in Input) (bool, error) {
	channelCommand := in.Kind == KindCommand && in.Key.ThreadTS == "" && in.Key.TeamID != "" && in.Key.ChannelID != ""
	if in.ID == "" || (!in.Key.Valid() && !channelCommand) {
		return false, fmt.Errorf("conversation: submit: input %q has no id or an incomplete key %q", in.ID, in.Key)
	}
	if s.isClosed() {
		return false, ErrClosed
	}
	if a := in.Action; in.Kind == KindAction && a != nil && a.Action.Name == ActionStop {
		// A Stop click cannot wait behind the turn it stops: it acts at once. A
		// pipeline between two of its turns is stopped in its turn, in order.
		if stopped := s.running.stop(in.Key, a.Action.Arg, Stopped{By: a.UserID}); stopped || !strings.HasPrefix(a.Action.Arg, runStopPrefix) {
			return stopped, nil
		}
	}
	if m := in.Message; m != nil && !m.Mentioned && !m.Direct && !s.busy(in.Key) {
		ok, err := s.cfg.Store.Exists(ctx, in.Key)
		if err != nil {
			return false, fmt.Errorf("submit %s: %w", in.ID, err)
		}
		if !ok {
			return false, nil
		}
	}
	in.Status = InputPending
	in.CreatedAt = s.cfg.Now().UTC()
	inserted, err := s.cfg.Store.Enqueue(ctx, in)
	if err != nil {
		return false, fmt.Errorf("submit %s: %w", in.ID, err)
	}
	if !inserted {
		s.log.Debug("duplicate input dropped", LogKeyInput, in.ID, LogKeyEvent, in.EventID)
		return false, nil
	}
	if m := in.Message; m != nil && s.running.stop(in.Key, "", Stopped{By: m.UserID, NewMessage: true}) {
		s.log.Info("a newer message stopped the running turn", LogKeyThread, in.Key.String(), LogKeyInput, in.ID)
	}
	return true, s.dispatch(in)
}

// Resume queues the inputs that were accepted but never finished and are not being
// worked on (unclaimed, or their claim expired): those left by a crash or a shutdown
// that gave up waiting, here or on another replica. Only inputs older than olderThan
// are taken, so a periodic sweep leaves alone the inputs that are merely queued behind
// others on a live replica. Call it at start-up with olderThan 0, before taking new
// events, and then periodically (see Sweep). An input queued twice runs once: a turn
// first claims its input (Store.Claim). It returns how many inputs were queued.
func (s *Service) Resume(ctx context.Context, olderThan time.Duration) (int, error) {
	pending, err := s.cfg.Store.Pending(ctx, s.cfg.Now().Add(-olderThan), 1000)
	if err != nil {
		return 0, fmt.Errorf("resume: %w", err)
	}
	for _, in := range pending {
		if err := s.dispatch(in); err != nil {
			return 0, err
		}
	}
	if len(pending) > 0 {
		s.log.Info("resumed pending inputs", "count", len(pending))
	}
	return len(pending), nil
}

// Wait blocks until no input is queued or running in this process, or ctx ends (its
// error is returned then). An input submitted before Wait is called is waited for.
func (s *Service) Wait(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		s.mu.Lock()
		idle := len(s.threads) == 0
		s.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Sweep calls Resume(ctx, olderThan) every interval until ctx ends, so that inputs a
// crashed replica had accepted are answered by the replicas still running. Errors are
// logged.
func (s *Service) Sweep(ctx context.Context, interval, olderThan time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Resume(ctx, olderThan); err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) {
				s.log.Error("sweep for abandoned inputs", "error", err)
			}
		}
	}
}

// Shutdown stops taking inputs and waits for queued and running turns to finish. When
// ctx ends first, it cancels the running turns (they stop at their next safe point,
// leaving their inputs pending for Resume) and waits up to cancelGrace more for them
// to return. Queued inputs that did not start stay pending too.
func (s *Service) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()

	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
	}
	s.cancel()
	select {
	case <-done:
		return fmt.Errorf("conversation: shutdown: turns cancelled: %w", ctx.Err())
	case <-time.After(cancelGrace):
		return fmt.Errorf("conversation: shutdown: turns did not stop within %s of being cancelled: %w", cancelGrace, ctx.Err())
	}
}

// cancelGrace is how long Shutdown waits for cancelled turns to return.
const cancelGrace = 5 * time.Second

func (s *Service) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// busy reports whether key has queued or running inputs in this process.
func (s *Service) busy(key Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.threads[key]
	return ok
}

// queued reports whether inputs of key wait behind its running turn in this process.
func (s *Service) queued(key Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.threads[key]) > 0
}

// dispatch appends in to its thread's queue, starting the thread's worker if idle.
func (s *Service) dispatch(in Input) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	queue, running := s.threads[in.Key]
	s.threads[in.Key] = append(queue, in)
	if !running {
		s.wg.Add(1)
		go s.work(in.Key)
	}
	return nil
}

// work runs the inputs of one thread in order until its queue is empty.
func (s *Service) work(key Key) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		queue := s.threads[key]
		if len(queue) == 0 || s.ctx.Err() != nil {
			delete(s.threads, key)
			s.mu.Unlock()
			return
		}
		in := queue[0]
		s.threads[key] = queue[1:]
		s.mu.Unlock()

		if err := s.turns.Acquire(s.ctx, 1); err != nil {
			continue // shutting down: the input stays pending in the store
		}
		s.runInput(in)
		s.turns.Release(1)
	}
}

// runInput runs the turn of one input, bounded by TurnTimeout, and logs its failure
// (the user has been told by then).
func (s *Service) runInput(in Input) {
	log := s.log.With(LogKeyThread, in.Key.String(), LogKeyInput, in.ID)
	stoppable, stop := context.WithCancelCause(s.ctx)
	defer stop(nil)
	ctx, cancel := context.WithTimeout(stoppable, s.cfg.TurnTimeout)
	defer cancel()
	s.running.start(in.Key, in.ID, stop)
	defer s.running.end(in.Key)
	start := s.cfg.Now()
	err := s.turn(ctx, log, in)
	switch {
	case err == nil:
		log.Info("turn finished", "duration", s.cfg.Now().Sub(start))
	case s.ctx.Err() != nil:
		log.Warn("turn cancelled by shutdown; input stays pending", "error", err)
	default:
		log.Error("turn failed", "error", err)
	}
}
