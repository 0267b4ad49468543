package service

import (
	"errors"
	"log/slog"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/assistant"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/conversation/workflowrun"
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
	// Files reads the files people attach to their messages (docs/architecture.md,
	// "Files"); nil leaves them unread.
	Files conversation.FileReader
	Agent conversation.WorkflowAgent
	// Fetcher reads the web pages of a workflow's fetch artifacts (docs/workflows.md,
	// "Pipelines"); nil reads none: every URL is recorded as not fetched.
	Fetcher conversation.SourceFetcher
	// FetchAllowed reports whether the pages of fetch artifacts may be fetched in
	// channel channelID: whether its tool policy (TOOL_POLICY) allows fetch_url there;
	// nil: everywhere. Where it is not allowed, every URL is recorded as not fetched.
	FetchAllowed func(channelID string) bool
	// ProfileDefined reports whether the deployment defines the model profile name
	// (MODEL_PROFILES); nil: none is. An artifact's enhancement pass on an undefined
	// profile is skipped, and the thread is told (docs/workflows.md, "Pipelines").
	ProfileDefined func(name string) bool
	// ToolAvailable reports whether the tool name that an artifact names (its
	// tools:) can run in channel channelID: configured and allowed there by the tool
	// policy; nil: every tool can. The start card and the progress message say what
	// runs without (docs/workflows.md, "Pipelines").
	ToolAvailable func(channelID, name string) bool
	// Approvers, when set, are the only Slack users who may approve artifacts
	// (APPROVER_USER_IDS); otherwise a workflow's approvers setting decides.
	Approvers []string

	// AgentView says the app uses Slack's agent view (AGENT_SURFACE=agent;
	// docs/tools.md, "Agent view"); Viewing reads what the person views there, and
	// Sessions sets the agent session of every thread a turn works in (nil: none).
	AgentView bool
	Viewing   conversation.ViewReader
	Sessions  conversation.Sessions

	// Format converts the model's Markdown (artifact texts and options) to the chat's
	// markup when they are shown in cards (mrkdwn.FromMarkdown of package agents/mrkdwn for Slack's mrkdwn); nil
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
	// its author is told (docs/operations.md, "Limits and secrets"; clicks are not held to them). 0: no bound.
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
	// DoubleTexting returns the policy of thread key's channel for a person's message
	// that arrives while a turn of the thread runs or waits (nil or "":
	// turns.DefaultDoubleTexting); MergeWindow is how long the merge policy waits for
	// a person's next message (default turns.DefaultMergeWindow). See
	// docs/architecture.md, "Double texting".
	DoubleTexting func(key conversation.Key) conversation.DoubleTexting
	MergeWindow   time.Duration
	// Redact, when set, scrubs configured secret values out of every text sent to the
	// chat (replies, cards, ephemeral messages, streamed pieces, files) and out of the
	// failure reasons kept in a workflow's state (docs/operations.md, "Limits and secrets").
	Redact func(string) string
	// Classify, when set, says what a failed step's error came from (the model,
	// Slack), for its failure message (conversation/failure.go; docs/workflows.md, "Failures
	// and Retry").
	Classify conversation.Classifier
	// SuggestedPrompts are the greeting and prompts of assistant threads
	// (SUGGESTED_PROMPTS; docs/tools.md, "Assistant view"); nil: DefaultGreeting and
	// DefaultSuggestedPrompts. Where the Messenger is AssistantThreads.
	SuggestedPrompts *conversation.SuggestedPrompts
	// Owner names this process in its leases (default: host name and process id),
	// followed by a random suffix unique to the start (see turns.Config.Owner).
	Owner string
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// WebhookEvents, when true, makes every save that changes a workflow run write
	// its webhook events (conversation/events.go) to the store's outbox (Turn.Events):
	// set when WEBHOOK_URLS is.
	WebhookEvents bool
	// Model names the main model (OPENAI_MODEL), recorded with each answer for the
	// feedback on it (docs/operations.md, "Feedback").
	Model string
	// Usage reads the usage ledger for the token budgets (budget.go);
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

// Service runs conversations: the Runtime, whose turns the router (Handle) sends to
// the assistant or to the workflows. Create it with NewService, call Start, and
// Shutdown at the end; it is safe for concurrent use.
type Service struct {
	*turns.Runtime
	cfg       Config
	log       *slog.Logger
	assistant *assistant.Handler
	workflows *workflowrun.Handler
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
	if cfg.Workflows == nil {
		cfg.Workflows = workflowrun.NoWorkflows{}
	}
	if cfg.Format == nil {
		cfg.Format = func(s string) string { return s }
	}
	orDefault(&cfg.HistoryMessages, 40)
	orDefault(&cfg.ThreadContextMessages, 50)
	orDefault(&cfg.MaxPromptChars, 16000)
	orDefault(&cfg.PipelineConcurrency, 4)
	orDefault(&cfg.HistoryTokens, 8000)
	orDefault(&cfg.MaxAttempts, 3)
	orDefault(&cfg.TurnTimeout, 5*time.Minute)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	rc := turns.Config{
		Store: cfg.Store, Messenger: cfg.Messenger, Logger: cfg.Logger, Metrics: cfg.Metrics, Spool: cfg.Spool,
		MaxConcurrentTurns: cfg.MaxConcurrentTurns, HistoryMessages: cfg.HistoryMessages, TurnTimeout: cfg.TurnTimeout,
		MaxAttempts: cfg.MaxAttempts, LeaseTTL: cfg.LeaseTTL, FinalTimeout: cfg.FinalTimeout,
		MaxQueuedPerThread: cfg.MaxQueuedPerThread, MaxQueuedPerUser: cfg.MaxQueuedPerUser,
		UserRate: cfg.UserRate, UserBurst: cfg.UserBurst, NoticeInterval: cfg.NoticeInterval,
		DoubleTexting: cfg.DoubleTexting, MergeWindow: cfg.MergeWindow,
		Redact: cfg.Redact, Owner: cfg.Owner, Now: cfg.Now, Model: cfg.Model, Sessions: cfg.Sessions,
	}
	if cfg.WebhookEvents {
		rc.Events = workflowrun.Events(cfg.Workflows)
	}
	s := &Service{}
	rt := turns.New(rc, s)
	raw := cfg.Messenger
	cfg.Messenger = rt.Messenger()
	*s = Service{Runtime: rt, cfg: cfg, log: cfg.Logger,
		assistant: assistant.New(assistant.Config{
			Messenger: cfg.Messenger, Scope: cfg.Scope, Executor: cfg.Executor, Synthesizer: cfg.Synthesizer,
			Summarizer: cfg.Summarizer, HistoryTokens: cfg.HistoryTokens, HistoryMessages: cfg.HistoryMessages,
			MaxPromptChars: cfg.MaxPromptChars, NoStreaming: cfg.NoStreaming, Format: cfg.Format, Model: cfg.Model,
			SuggestedPrompts: cfg.SuggestedPrompts, Workflows: cfg.Workflows, Redact: cfg.Redact, Classify: cfg.Classify, Now: cfg.Now,
			AgentView: cfg.AgentView, Viewing: cfg.Viewing, Files: cfg.Files,
		}, cfg.Logger, raw),
		workflows: workflowrun.New(workflowrun.Config{
			Messenger: cfg.Messenger, Store: cfg.Store, Workflows: cfg.Workflows, Agent: cfg.Agent,
			Fetcher: cfg.Fetcher, FetchAllowed: cfg.FetchAllowed, ProfileDefined: cfg.ProfileDefined, ToolAvailable: cfg.ToolAvailable, Approvers: cfg.Approvers,
			Format: cfg.Format, MaxPromptChars: cfg.MaxPromptChars, PipelineConcurrency: cfg.PipelineConcurrency,
			TurnTimeout: cfg.TurnTimeout, MaxAttempts: cfg.MaxAttempts, Metrics: cfg.Metrics, Redact: cfg.Redact,
			Classify: cfg.Classify, Now: cfg.Now, Files: cfg.Files,
		}, cfg.Logger, raw),
	}
	return s, nil
}

// orDefault sets *v to def when it is not set (zero or negative).
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
