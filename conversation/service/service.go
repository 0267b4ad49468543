package service

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"golang.org/x/sync/semaphore"
)

// Config configures a Service. Store, Messenger, Executor and Synthesizer are required.
type Config struct {
	Store     conversation.Store
	Messenger conversation.Messenger
	// Scope, when nil, lets every request through (SCOPE_DESCRIPTION unset).
	Scope       conversation.ScopeChecker
	Executor    conversation.Executor
	Synthesizer conversation.Synthesizer
	Logger      *slog.Logger
	// Metrics, when set, is told of turns, queueing, pipelines and workflows.
	Metrics conversation.Metrics

	// Workflows are the artifact workflows offered (nil: none); Agent writes and
	// judges their artifacts (required with Workflows).
	Workflows conversation.Workflows
	Agent     conversation.WorkflowAgent
	// Fetcher reads the web pages of a workflow's fetch artifacts (README.md,
	// "Pipelines"); nil reads none: every URL is recorded as not fetched.
	Fetcher conversation.SourceFetcher
	// FetchAllowed reports whether the pages of fetch artifacts may be fetched in
	// channel channelID: whether its tool policy (TOOL_POLICY) allows fetch_url there;
	// nil: everywhere. Where it is not allowed, every URL is recorded as not fetched.
	FetchAllowed func(channelID string) bool
	// ProfileDefined reports whether the deployment defines the model profile name
	// (MODEL_PROFILES); nil: none is. An artifact's enhancement pass on an undefined
	// profile is skipped, and the thread is told (README.md, "Pipelines").
	ProfileDefined func(name string) bool
	// Approvers, when set, are the only Slack users who may approve artifacts
	// (APPROVER_USER_IDS); otherwise a workflow's approvers setting decides.
	Approvers []string

	// Format converts the model's Markdown (artifact texts and options) to the chat's
	// markup when they are shown in cards (agents.ToMrkdwn for Slack's mrkdwn); nil
	// shows them as written. The report file keeps the Markdown.
	Format func(markdown string) string

	// Summarizer folds older messages into the conversation's summary (nil: no
	// summaries; the prompt is then bounded by HistoryMessages alone).
	Summarizer conversation.Summarizer
	// HistoryTokens bounds the history given to the model, in estimated tokens (four
	// characters a token; default 8,000). Past it, or when the unsummarized messages
	// fill three quarters of HistoryMessages, the older half is summarized.
	HistoryTokens int

	// MaxConcurrentTurns bounds the turns running at once in this process, across
	// threads (default DefaultMaxConcurrentTurns). Inputs of one thread always run one
	// at a time, in order, across all replicas.
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
	// MaxAttempts is how many times an input is tried (across restarts and
	// replicas) before it is given up with a message to the user (default 3).
	MaxAttempts int
	// LeaseTTL is how long a thread's lease lives without renewal (default
	// DefaultLeaseTTL): a dead replica's threads are taken over within it plus one
	// sweep (LeaseTTL/5). Leases are renewed every LeaseTTL/10.
	LeaseTTL time.Duration
	// FinalTimeout bounds the final writes of a turn (its reply, cards and save, with
	// store retries), which run on a context detached from the turn's (default
	// DefaultFinalTimeout).
	FinalTimeout time.Duration
	// Spool, when set, keeps inputs on local disk while the Store is unavailable
	// (docs/architecture.md, "Accepted means stored"); nil: Submit fails then, and
	// the caller does not acknowledge the event.
	Spool conversation.Spool
	// MaxQueuedPerThread bounds the pending inputs of one thread, and
	// MaxQueuedPerUser those of one person across threads, counted in the store so
	// that every replica agrees: past either, a message or command is not queued and
	// its author is told (README, "Limits and secrets"; clicks are not held to them). 0: no bound.
	MaxQueuedPerThread int
	MaxQueuedPerUser   int
	// UserRate is how many messages and commands one person may send per minute,
	// per process: a token bucket of UserBurst tokens (default 1); clicks have a
	// bucket of their own, four times as fast and as deep. 0: no limit.
	UserRate  float64
	UserBurst int
	// NoticeInterval is the least time between two notices to one person that an
	// input was refused by a limit (default DefaultNoticeInterval).
	NoticeInterval time.Duration
	// Redact, when set, scrubs configured secret values out of every text sent to the
	// chat (replies, cards, ephemeral messages, streamed pieces, files) and out of the
	// failure reasons kept in a workflow's state (README, "Limits and secrets").
	Redact func(string) string
	// Classify, when set, says what a failed step's error came from (the model,
	// Slack), for its failure message (conversation/failure.go; README, "Failures
	// and Retry").
	Classify conversation.Classifier
	// SuggestedPrompts are the greeting and prompts of assistant threads
	// (SUGGESTED_PROMPTS; README, "Assistant view"); nil: DefaultGreeting and
	// DefaultSuggestedPrompts. Where the Messenger is AssistantThreads.
	SuggestedPrompts *conversation.SuggestedPrompts
	// Owner names this process in its leases (default: host name, process id and a
	// random suffix, unique per start).
	Owner string
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// WebhookEvents, when true, makes every save that changes a workflow run write
	// its webhook events (conversation/events.go) to the store's outbox (Turn.Events):
	// set when WEBHOOK_URLS is.
	WebhookEvents bool
	// Model names the main model (OPENAI_MODEL), recorded with each answer for the
	// feedback on it (README, "Feedback").
	Model string
	// Usage reads the usage ledger for the token budgets (conversation/budget.go);
	// nil turns them off.
	Usage conversation.UsageStore
	// BudgetTokensPerUserDay and BudgetTokensPerChannelDay bound the tokens one person,
	// and one channel, may use in BudgetWindow (BUDGET_TOKENS_PER_USER_DAY,
	// BUDGET_TOKENS_PER_CHANNEL_DAY); 0: no budget.
	BudgetTokensPerUserDay    int64
	BudgetTokensPerChannelDay int64
	// Admins are the Slack user ids (U…) named in a budget notice (ADMINS).
	Admins []string
}

// DefaultMaxConcurrentTurns is the default of Config.MaxConcurrentTurns: turns wait
// on the model and Slack most of their time, so a process runs many at once.
const DefaultMaxConcurrentTurns = 100

// Service runs conversations: it accepts inputs, deduplicates and persists them, and
// runs one turn per input, each thread's inputs one at a time and in order across all
// replicas sharing the store (docs/architecture.md, "Durable turns"). Create it with
// NewService, call Start, and Shutdown at the end; it is safe for concurrent use.
type Runtime struct {
	cfg   runtimeConfig
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

// Service runs conversations: the Runtime, whose turns the router (Handle) sends to
// the assistant or to the workflows. Create it with NewService, call Start, and
// Shutdown at the end; it is safe for concurrent use.
type Service struct {
	*Runtime
	cfg       Config
	log       *slog.Logger
	assistant *assistantHandler
	workflows *workflowHandler
}

// NewService validates cfg, fills in defaults and returns a Service; call Start
// before Submit.
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
	if cfg.Scope != nil {
		cfg.Scope = tracedScope{cfg.Scope} // trace.go
	}
	if cfg.Workflows == nil {
		cfg.Workflows = noWorkflows{}
	}
	if cfg.Format == nil {
		cfg.Format = func(s string) string { return s }
	}
	setDefault(&cfg.HistoryMessages, 40)
	setDefault(&cfg.ThreadContextMessages, 50)
	setDefault(&cfg.MaxPromptChars, 16000)
	setDefault(&cfg.PipelineConcurrency, 4)
	setDefault(&cfg.HistoryTokens, 8000)
	setDefault(&cfg.MaxAttempts, 3)
	setDefault(&cfg.TurnTimeout, 5*time.Minute)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	rc := runtimeConfig{
		Store: cfg.Store, Messenger: cfg.Messenger, Logger: cfg.Logger, Metrics: cfg.Metrics, Spool: cfg.Spool,
		MaxConcurrentTurns: cfg.MaxConcurrentTurns, HistoryMessages: cfg.HistoryMessages, TurnTimeout: cfg.TurnTimeout,
		MaxAttempts: cfg.MaxAttempts, LeaseTTL: cfg.LeaseTTL, FinalTimeout: cfg.FinalTimeout,
		MaxQueuedPerThread: cfg.MaxQueuedPerThread, MaxQueuedPerUser: cfg.MaxQueuedPerUser,
		UserRate: cfg.UserRate, UserBurst: cfg.UserBurst, NoticeInterval: cfg.NoticeInterval,
		Redact: cfg.Redact, Owner: cfg.Owner, Now: cfg.Now, Model: cfg.Model,
	}
	if cfg.WebhookEvents {
		rc.Events = workflowEventsOf(cfg.Workflows)
	}
	rt := newRuntime(rc)
	raw := cfg.Messenger
	threads, _ := cfg.Messenger.(conversation.AssistantThreads)
	cfg.Messenger = rt.Messenger()
	s := &Service{Runtime: rt, cfg: cfg, log: cfg.Logger,
		assistant: &assistantHandler{cfg: cfg, log: cfg.Logger, threads: threads, raw: raw},
		workflows: &workflowHandler{cfg: cfg, log: cfg.Logger, raw: raw},
	}
	rt.handler = s
	return s, nil
}

// runtimeConfig configures a Runtime. Store and Messenger are required.
type runtimeConfig struct {
	Store     conversation.Store
	Messenger conversation.Messenger
	Logger    *slog.Logger
	// Metrics, when set, is told of turns and queueing.
	Metrics conversation.Metrics
	// Spool, when set, keeps inputs on local disk while the Store is unavailable
	// (docs/architecture.md, "Accepted means stored").
	Spool conversation.Spool
	// MaxConcurrentTurns bounds the turns running at once in this process (default
	// DefaultMaxConcurrentTurns).
	MaxConcurrentTurns int
	// HistoryMessages is how many of the newest stored messages a turn loads.
	HistoryMessages int
	// TurnTimeout bounds one turn; MaxAttempts is how many times an input is tried.
	TurnTimeout time.Duration
	MaxAttempts int
	// LeaseTTL is how long a thread's lease lives without renewal (default
	// DefaultLeaseTTL); FinalTimeout bounds the final writes of a turn (default
	// DefaultFinalTimeout).
	LeaseTTL     time.Duration
	FinalTimeout time.Duration
	// The flood limits of Submit (limits.go).
	MaxQueuedPerThread int
	MaxQueuedPerUser   int
	UserRate           float64
	UserBurst          int
	NoticeInterval     time.Duration
	// Redact scrubs configured secrets out of every text sent to the chat.
	Redact func(string) string
	// Owner names this process in its leases; Now is the clock.
	Owner string
	Now   func() time.Time
	// Model names the main model, under which a turn's unmetered usage is recorded.
	Model string
	// Events, when set, returns the webhook events of a save that changes the
	// state of thread key from prev (as last loaded or saved) to next, caused by
	// actor at now; Save writes them in its transaction (Turn.Events).
	Events func(key conversation.Key, prev, next conversation.State, actor string, now time.Time) []conversation.Event
}

// newRuntime fills in cfg's defaults and returns a Runtime with no handler yet.
func newRuntime(cfg runtimeConfig) *Runtime {
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
	// (api_actor.go).
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

// assistantHandler answers people's messages with the assistant pipeline (scope
// check → executor → synthesizer), and runs the assistant view, tool approvals and a
// failed answer's Retry.
type assistantHandler struct {
	cfg Config
	log *slog.Logger
	// threads dresses assistant threads, when the Messenger can (assistant_view.go).
	threads conversation.AssistantThreads
	// raw is Config.Messenger before redaction wraps it, for its optional
	// interfaces (DirectMessages).
	raw conversation.Messenger
}

// workflowHandler runs the turns of artifact workflows: clicks, commands, replies and
// pipeline parts (docs/architecture.md, "Workflow machine").
type workflowHandler struct {
	cfg Config
	log *slog.Logger
	// raw is Config.Messenger before redaction wraps it, for its optional
	// interfaces (ModalOpener).
	raw conversation.Messenger
}

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

// Submit accepts an input: it stores it (deduplicated by in.ID), or spools it when the
// store is unavailable, and starts work on its thread. It returns nil only once the
// input is durably kept, so the caller may acknowledge it then; accepted is false when
// the input was a duplicate or is not for the bot (a thread reply, without a mention,
// in a thread the bot is not part of), or was refused by a limit (README, "Limits and secrets";
// its author is told). It does not wait for the turn. ctx's deadline
// bounds the store retries. Errors: ErrClosed after Shutdown began; the store's (and
// the spool's) when the input could not be kept.
func (s *Runtime) Submit(ctx context.Context, in conversation.Input) (accepted bool, err error) {
	return s.submit(ctx, in, true)
}

// submit is Submit; limited false skips the flood limits, for an input that continues
// one they admitted already (a channel command forwarded to its thread).
func (s *Runtime) submit(ctx context.Context, in conversation.Input, limited bool) (accepted bool, err error) {
	channelCommand := in.Kind == conversation.KindCommand && in.Key.ThreadTS == "" && in.Key.TeamID != "" && in.Key.ChannelID != ""
	if in.ID == "" || (!in.Key.Valid() && !channelCommand) {
		return false, fmt.Errorf("conversation: submit: input %q has no id or an incomplete key %q", in.ID, in.Key)
	}
	if s.isClosed() {
		return false, conversation.ErrClosed
	}
	in = storable(in)
	if a := in.Action; in.Kind == conversation.KindAction && a != nil && a.Action.Name == conversation.ActionStop {
		// A Stop click cannot wait behind the turn it stops: it acts at once, here or
		// on the replica that runs the turn. A pipeline between two of its turns is
		// stopped in its turn, in order.
		if s.stopLocal(in.Key, a.Action.Arg, conversation.Stopped{By: a.UserID}) {
			return true, nil
		}
		if err := s.cfg.Store.Signal(ctx, in.Key, conversation.StopRequest{Target: a.Action.Arg, By: a.UserID}); err != nil {
			s.log.Warn("stop request not passed on", conversation.LogKeyThread, in.Key.String(), "error", err)
		}
		if !strings.HasPrefix(a.Action.Arg, conversation.RunStopPrefix) {
			return false, nil // nothing to store: the holder stops the turn, if it runs
		}
	}
	if m := in.Message; m != nil && !m.Mentioned && !m.Direct && !s.holds(in.Key) && !s.isSpooling() {
		var ok bool
		err := s.retryStore(ctx, "check the thread", func(ctx context.Context) error {
			var err error
			ok, err = s.cfg.Store.Exists(ctx, in.Key)
			return err
		})
		switch {
		case err != nil && storeDown(err) && s.cfg.Spool != nil:
			// Spooled; the drain checks the thread when the store answers again.
		case err != nil:
			return false, fmt.Errorf("submit %s: %w", in.ID, err)
		case !ok:
			return false, nil
		}
	}
	if limited {
		if r := s.admit(ctx, in); r != nil {
			if s.enqueuedAlready(ctx, in) {
				s.log.Debug("duplicate input dropped", conversation.LogKeyInput, in.ID, conversation.LogKeyEvent, in.EventID)
				return false, nil
			}
			s.refuse(in, r)
			return false, nil
		}
	}
	in.Status = conversation.InputPending
	in.CreatedAt = s.cfg.Now().UTC()
	return s.accept(ctx, in)
}

// accept stores in, or spools it when the store is unavailable or inputs are spooled
// already (they go into the store in order), and starts work on its thread. One
// accept runs at a time, so that no input overtakes an earlier one that was spooled.
func (s *Runtime) accept(ctx context.Context, in conversation.Input) (bool, error) {
	s.intakeMu.Lock()
	defer s.intakeMu.Unlock()
	s.spoolMu.Lock()
	spooling := s.spooling
	s.spoolMu.Unlock()
	if !spooling {
		inserted, err := s.enqueue(ctx, in)
		switch {
		case err == nil:
			if !inserted {
				s.log.Debug("duplicate input dropped", conversation.LogKeyInput, in.ID, conversation.LogKeyEvent, in.EventID)
				return false, nil
			}
			s.notify(in)
			return true, nil
		case s.cfg.Spool == nil || !storeDown(err) && ctx.Err() == nil:
			return false, fmt.Errorf("submit %s: %w", in.ID, err)
		}
		s.log.Warn("store unavailable: input spooled to local disk", conversation.LogKeyInput, in.ID, "error", err)
	}
	return s.spoolPut(in)
}

// enqueue stores in, retrying while the store is unavailable until ctx's deadline,
// less the time a spool write takes.
func (s *Runtime) enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	if d, ok := ctx.Deadline(); ok && s.cfg.Spool != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-spoolReserve))
		defer cancel()
	}
	var inserted bool
	err := s.retryStore(ctx, "store an input", func(ctx context.Context) error {
		var err error
		inserted, err = s.cfg.Store.Enqueue(ctx, in)
		return err
	})
	return inserted, err
}

// storeDown reports whether err says the store is unavailable or did not answer in
// time (a hung connection ends with the deadline of the store call's context).
func storeDown(err error) bool {
	return errors.Is(err, conversation.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// notify tells this process's worker of in's thread that in was stored: a newer
// person's message stops the turn running there (unless that turn is in's own: the
// worker may have taken in between its insert and this call, having learnt of it from
// the lease's renewal), and a worker starts if none runs.
func (s *Runtime) notify(in conversation.Input) {
	if m := in.Message; m != nil && s.stopOlder(in, conversation.Stopped{By: m.UserID, NewMessage: true}) {
		s.log.Info("a newer message stopped the running turn", conversation.LogKeyThread, in.Key.String(), conversation.LogKeyInput, in.ID)
	}
	s.kick(in.Key)
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

// runInput runs the turn of in under t's lease, bounded by TurnTimeout, and logs how
// it ended. It returns the turn's error when the input stays pending.
func (s *Runtime) runInput(t *thread, in conversation.Input) error {
	log := s.log.With(conversation.LogKeyThread, in.Key.String(), conversation.LogKeyInput, in.ID)
	stoppable, stop := context.WithCancelCause(s.ctx)
	defer stop(nil)
	ctx, cancel := context.WithTimeout(stoppable, s.cfg.TurnTimeout)
	defer cancel()
	ctx, log, span := startTurn(ctx, in, log) // trace.go
	s.startRun(t, in, stop)
	defer s.endRun(t)
	r := &Run{In: in, lease: s.leaseOf(t), Log: log, th: t, meter: &conversation.UsageMeter{}, svc: s}
	ctx = conversation.WithUsageMeter(ctx, r.meter)
	r.Out = s.newOutbox(ctx, r)
	start := s.cfg.Now()
	s.turnStarted(r, start)
	err := s.runTurn(ctx, r)
	span.end(ctx, err, s.ctx.Err() != nil)
	s.turnEnded(ctx, r, start, err)
	switch {
	case err == nil:
		log.Info("turn finished", "duration", s.cfg.Now().Sub(start), "attempt", in.Attempts)
	case errors.Is(err, conversation.ErrLeaseLost):
		log.Warn("turn abandoned: its lease was lost; the new holder runs the input", "error", err)
	case s.ctx.Err() != nil:
		log.Warn("turn cancelled by shutdown; input stays pending", "error", err)
	default:
		log.Error("turn failed; input stays pending", "error", err)
	}
	return err
}
