package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/agents/mrkdwn"
	"github.com/threadwright/threadwright/agents/planner"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/failure"
	"github.com/threadwright/threadwright/internal/httpclient"
	"github.com/threadwright/threadwright/internal/metrics"
	"github.com/threadwright/threadwright/internal/redact"
	"github.com/threadwright/threadwright/internal/tracing"
	"github.com/threadwright/threadwright/prompts"
	"github.com/threadwright/threadwright/store"
)

// Main is the threadwright program: Run wires the store, the model client and tools,
// the conversation service and the Slack bot, serves /healthz, /readyz and /metrics, and shuts
// everything down gracefully when its context ends. End-to-end tests run it in-process.
type Main struct {
	// Config is the configuration (see LoadConfig).
	Config Config
	// Stdout and Stderr default to os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
	// Logger, when nil, is made from LOG_LEVEL and LOG_FORMAT, writing to Stderr.
	Logger *slog.Logger
	// RegisterTools, when set, adds tools to the registry after the built-in ones.
	RegisterTools func(*agents.Registry) error
	// Model, when set, answers every model call instead of the OpenAI-compatible
	// endpoint of the configuration (threadwright dev's offline demo model).
	Model agents.Completer
	// Fetcher, when set, reads the pages of the workflows' fetch artifacts instead of
	// the network (threadwright dev's offline demo: demo.SourceFetcher).
	Fetcher conversation.SourceFetcher
	// SetDefault makes Run's logger, which scrubs the configured secrets, the
	// process's default (slog.SetDefault, through which the log package writes too).
	// The binary sets it; tests that run several Mains in one process do not.
	SetDefault bool

	addr    atomic.Value // string: the health server's address, once listening
	apiAddr atomic.Value // string: the HTTP API's address, once listening
	bot     atomic.Pointer[bot.Bot]
	running atomic.Bool
	store   atomic.Value // conversation.Store, once open
	service atomic.Pointer[conversation.Service]
	// metrics are the run's instruments, served at GET /metrics (nil: none);
	// noMetrics, set by benchmarks, runs without them.
	metrics   *metrics.Metrics
	noMetrics bool
}

// Wait blocks until the bot has no input queued or running (see
// conversation.Service.Wait), or ctx ends.
func (m *Main) Wait(ctx context.Context) error {
	if svc := m.service.Load(); svc != nil {
		return svc.Wait(ctx)
	}
	return nil
}

// NewMain returns a Main with default writers.
func NewMain() *Main {
	return &Main{Stdout: os.Stdout, Stderr: os.Stderr}
}

// Ready reports whether the bot is running, connected to Slack, and its store answers
// (the check behind GET /readyz).
func (m *Main) Ready(ctx context.Context) bool { return m.checkReady(ctx) == nil }

// Addr returns the address the health server listens on ("" until it listens or when
// HTTP_ADDR is empty).
func (m *Main) Addr() string {
	s, _ := m.addr.Load().(string)
	return s
}

// Run starts threadwright and blocks until ctx ends (SIGINT/SIGTERM in production) or
// the Slack connection fails for good. It then stops taking events, lets running turns
// finish for up to SHUTDOWN_TIMEOUT (cancelling them after that; their inputs resume at
// the next start), and closes the store. Start-up errors (a broken prompt template, an
// unreachable database, a rejected Slack token) are returned at once.
func (m *Main) Run(ctx context.Context) (err error) {
	c := m.Config
	if m.Stderr == nil {
		m.Stderr = os.Stderr
	}
	var mcpCfg mcp.Config
	if c.MCPConfig != "" {
		if mcpCfg, err = mcp.LoadConfig(c.MCPConfig); err != nil {
			return fmt.Errorf("MCP_CONFIG: %w", err)
		}
	}
	profiles, err := LoadProfiles(c.ModelProfiles, &c)
	if err != nil {
		return err
	}
	// Every logger of the run, and the error texts shown in Slack, go through the
	// scrubber of the configured secrets (README, "Limits and secrets").
	redactor := c.redactor(mcpCfg, profiles)
	log := m.Logger
	if log == nil {
		log = newLogger(m.Stderr, c.LogLevel, c.LogFormat)
	}
	log = slog.New(tracing.NewLogHandler(redact.NewHandler(log.Handler(), redactor))) // trace ids: README, "Traces"
	stopTracing, err := startTracing(ctx, c.TraceConfig, redactor, log)
	if err != nil {
		return err
	}
	defer stopTracing() // last: after the turns have ended
	if m.SetDefault {
		slog.SetDefault(log)
	}

	tmpl, err := prompts.Parse()
	if err != nil {
		return fmt.Errorf("prompts: %w", err)
	}
	registry := agents.NewRegistry()
	if err := toolbox.Register(registry); err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	if err := registry.Register(agents.Recall()); err != nil { // README "Recall"
		return fmt.Errorf("tools: %w", err)
	}
	if err := registry.Register(web.FetchURLTool(c.fetchConfig())); err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	if c.MCPConfig != "" {
		sources, err := mcp.Connect(ctx, mcpCfg, log)
		if err != nil {
			return fmt.Errorf("MCP_CONFIG: %w", err)
		}
		defer sources.Close() // after the turns have finished: defers run last-in, first-out
		if err := sources.Register(registry); err != nil {
			return fmt.Errorf("MCP_CONFIG: %w", err)
		}
	}
	if spec, tool, ok := web.SearchTool(web.SearchConfig{SearxngURL: c.SearxngURL}); ok {
		if err := registry.Register(spec, tool); err != nil {
			return fmt.Errorf("tools: %w", err)
		}
	}
	if m.RegisterTools != nil {
		if err := m.RegisterTools(registry); err != nil {
			return fmt.Errorf("tools: %w", err)
		}
	}

	var policy *agents.ToolPolicy // nil: every tool everywhere
	if c.ToolPolicy != "" {
		if policy, err = agents.LoadToolPolicy(c.ToolPolicy); err != nil {
			return fmt.Errorf("TOOL_POLICY: %w", err)
		}
	}

	instructions, err := agents.LoadInstructions(c.ExecutorInstructions, c.ExecutorInstructionsChannels)
	if err != nil {
		return fmt.Errorf("EXECUTOR_INSTRUCTIONS: %w", err)
	}

	var suggested *conversation.SuggestedPrompts // nil: the built-in ones
	if c.SuggestedPrompts != "" {
		if suggested, err = conversation.LoadSuggestedPrompts(c.SuggestedPrompts); err != nil {
			return fmt.Errorf("SUGGESTED_PROMPTS: %w", err)
		}
	}
	workflows, err := LoadWorkflows(c.WorkflowsDir)
	if err != nil {
		return err
	}
	if err := checkProfiles(workflows.All(), profiles); err != nil {
		return err
	}

	mx := m.newMetrics(c, profiles, workflows)
	storeOpts := store.Options{DatabaseURL: c.DatabaseURL, DataDir: c.DataDir, MaxConns: c.DatabaseMaxConns, Logger: log}
	st, err := store.Open(ctx, storeOpts)
	if err != nil {
		return err
	}
	m.store.Store(st)
	if kb, ok := st.(conversation.Knowledge); ok {
		if err := registry.Register(toolbox.KnowledgeTool(kb, toolbox.DefaultKnowledgeLimit)); err != nil {
			return fmt.Errorf("tools: %w", err)
		}
	}
	defer func() {
		if cerr := st.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
		}
	}()

	signer, err := actionSigner(ctx, st)
	if err != nil {
		return err
	}

	api := slack.New(c.SlackBotToken,
		// Before OptionRetryConfig, which wraps the client set so far.
		slack.OptionHTTPClient(tracing.SlackClient(mx.SlackClient(httpclient.NewSlack()))),
		slack.OptionAppLevelToken(c.SlackAppToken),
		slack.OptionAPIURL(c.SlackAPIURL),
		slack.OptionRetryConfig(slack.RetryConfig{
			MaxRetries: 3, RetryAfterDuration: 5 * time.Second, RetryAfterJitter: 500 * time.Millisecond,
			BackoffInitial: 200 * time.Millisecond, BackoffMax: 5 * time.Second, BackoffJitter: 100 * time.Millisecond,
		}),
	)
	me, err := bot.Authenticate(ctx, api)
	if err != nil {
		return fmt.Errorf("slack: %w (check SLACK_BOT_TOKEN and SLACK_API_URL)", err)
	}
	log.Info("authenticated with Slack", "team", me.TeamName, "team_id", me.TeamID, "bot_user", me.UserName, "bot_user_id", me.UserID)

	modelConfig := c.clientConfig(log)
	if mx != nil {
		modelConfig.Metrics = mx
	}
	var model agents.Completer = m.Model
	var client *agents.Client // the client of OPENAI_BASE_URL, when made here
	if model == nil {
		client = agents.NewClient(modelConfig)
		model = client
	}
	var scope conversation.ScopeChecker
	if c.ScopeDescription != "" || len(c.ScopeAllow) > 0 || len(c.ScopeDeny) > 0 {
		allow, _ := compileAll(c.ScopeAllow) // validated by LoadConfig
		deny, _ := compileAll(c.ScopeDeny)
		scope = agents.NewScopeChecker(agents.ScopeConfig{
			Client: model, Model: c.OpenAISmallModel, Description: c.ScopeDescription,
			Allow: allow, Deny: deny, Prompts: tmpl, Logger: log,
		})
	}
	mx.InstrumentTools(registry) // every tool is registered by now
	react := agents.NewExecutor(agents.ExecutorConfig{
		Client: model, Model: c.OpenAIModel, Registry: registry, Policy: policy, Instructions: instructions, Prompts: tmpl,
		MaxSteps: c.MaxSteps, ToolTimeout: c.ToolTimeout, Logger: log, HoldUnscoped: c.ScopeClassifyResults,
	})
	channels, _ := planner.ParseChannelStrategies(c.StrategyChannels) // validated by LoadConfig
	strategy, _ := planner.ParseStrategy(c.Strategy)
	executor, err := planner.NewRouter(planner.RouterConfig{
		Client: model, SmallModel: c.OpenAISmallModel, ReAct: react, Default: strategy, Channels: channels, Prompts: tmpl, Logger: log,
		Planner: planner.New(planner.Config{Client: model, Model: c.OpenAIModel, SmallModel: c.OpenAISmallModel, Executor: react, Prompts: tmpl, Logger: log}),
	})
	if err != nil {
		return fmt.Errorf("STRATEGY: %w", err)
	}
	var answerer conversation.Executor = executor
	if c.ScopeClassifyResults {
		answerer = agents.NewResultScope(executor, agents.ResultScopeConfig{
			Client: model, Model: c.OpenAISmallModel, Description: c.ScopeDescription, Logger: log})
	}
	spool, err := store.OpenSpool(ctx, storeOpts)
	if err != nil {
		return err
	}
	if spool != nil {
		defer spool.Close() // after the service's Shutdown, below
	}
	rawMessenger := bot.NewMessenger(api, me, log, bot.WithMaxReplyMessages(c.MaxReplyMessages))
	messenger := bot.NewSigningMessenger(rawMessenger, signer)
	hooks, err := c.newDeliverer(st, rawMessenger, log)
	if err != nil {
		return err
	}
	svc, err := conversation.NewService(conversation.Config{
		Store:       mx.Store(st),
		Metrics:     mx,
		Spool:       spool,
		LeaseTTL:    c.LeaseTTL,
		Messenger:   messenger,
		Scope:       scope,
		Executor:    answerer,
		Synthesizer: agents.NewSynthesizer(),
		Workflows:   workflows,
		Agent: agents.NewWorkflowAgent(agents.WorkflowAgentConfig{
			Client: model, Model: c.OpenAIModel, SmallModel: c.OpenAISmallModel, Prompts: tmpl, Logger: log,
			Tools: registry, Policy: policy, ToolTimeout: c.ToolTimeout, Profiles: modelProfiles(profiles, modelConfig, client),
		}),
		// An artifact's enhancement pass on a profile MODEL_PROFILES lacks is skipped.
		ProfileDefined:      func(name string) bool { _, ok := profiles[name]; return ok },
		PipelineConcurrency: c.PipelineConcurrency,
		Fetcher:             m.sourceFetcher(&c), // fetch artifacts: fetch_url's guard and limits, or Main.Fetcher
		FetchAllowed:        func(ch string) bool { return policy.Allows(ch, "fetch_url") },
		Approvers:           c.ApproverUserIDs,
		SuggestedPrompts:    suggested,
		Format:              mrkdwn.FromMarkdown,
		Summarizer:          agents.NewSummarizer(agents.SummarizerConfig{Client: model, Model: c.OpenAISmallModel, Prompts: tmpl, Logger: log}),
		HistoryTokens:       c.HistoryTokens,
		Logger:              log,
		MaxConcurrentTurns:  c.MaxConcurrentTurns,
		HistoryMessages:     c.HistoryMessages,
		TurnTimeout:         c.TurnTimeout,
		NoStreaming:         !c.StreamAnswers,
		MaxQueuedPerThread:  c.MaxQueuedPerThread,
		MaxQueuedPerUser:    c.MaxQueuedPerUser,
		UserRate:            c.UserRate,
		UserBurst:           c.UserBurst,
		Redact:              redactor.String,
		Classify:            failure.Classifier{ModelURLs: modelURLs(c.OpenAIBaseURL, profiles), SlackURL: c.SlackAPIURL}.Classify,
		Model:               c.OpenAIModel,

		// The usage ledger and the token budgets (README, "Usage, cost and budgets").
		Usage:                     usageStore(st),
		BudgetTokensPerUserDay:    c.BudgetTokensPerUserDay,
		BudgetTokensPerChannelDay: c.BudgetTokensPerChannelDay,
		Admins:                    c.Admins,
		WebhookEvents:             len(c.WebhookURLs) > 0,
	})
	if err != nil {
		return err
	}
	m.service.Store(svc)
	var feedback bot.FeedbackRecorder
	if fs, ok := st.(conversation.FeedbackStore); ok {
		feedback = conversation.FeedbackLog{Store: fs}
	}
	b, err := bot.New(bot.Config{API: api, Identity: me, Submitter: svc, Logger: log, Signer: signer, Feedback: feedback, Metrics: mx})
	if err != nil {
		return err
	}
	m.bot.Store(b)

	// Listen before the service starts: a busy HTTP_ADDR must not leave its background
	// work running on a store that is closed on the way out.
	stopHTTP, err := m.serveHealth(log)
	if err != nil {
		return err
	}
	defer stopHTTP()
	stopAPI, err := m.serveAPI(log, st, svc, workflows, messenger, me.TeamID)
	if err != nil {
		return err
	}
	defer stopAPI() // a request after the service began to shut down gets 503
	if err := svc.Start(ctx); err != nil {
		return err
	}
	m.running.Store(true)
	// Background work that uses the store ends before the store closes.
	var background sync.WaitGroup
	bgCtx, stopBackground := context.WithCancel(ctx)
	defer func() {
		stopBackground()
		background.Wait()
	}()
	if c.RetentionDays > 0 {
		background.Go(func() { m.retain(bgCtx, log, st, time.Duration(c.RetentionDays)*24*time.Hour) })
	}
	if hooks != nil {
		background.Go(func() { _ = hooks.Run(bgCtx) })
	}

	log.Info("threadwright running", "version", version, "model", c.OpenAIModel, "store", storeKind(c.StoreConfig),
		"scope_check", scope != nil, "strategy", c.Strategy, "workflows", workflows.Names())
	runErr := b.Run(ctx) // until ctx ends or the connection fails for good

	log.Info("shutting down: no new events; waiting for running turns", "timeout", c.ShutdownTimeout)
	m.running.Store(false)
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	if err := svc.Shutdown(sctx); err != nil {
		log.Warn("shutdown cut short; unfinished inputs resume at the next start", "error", err)
	}
	log.Info("stopped")
	return runErr
}

// serveHealth serves GET /healthz (the process is up), GET /readyz (see Ready; 503
// with a fixed reason otherwise, the detail logged) and GET /metrics on HTTP_ADDR, and returns a function that stops the server.
func (m *Main) serveHealth(log *slog.Logger) (stop func(), err error) {
	if m.Config.HTTPAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", m.Config.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("HTTP_ADDR: listen on %s: %w", m.Config.HTTPAddr, err)
	}
	m.addr.Store(ln.Addr().String())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /metrics", m.metrics.Handler(log)) // README, "Metrics"
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := m.checkReady(r.Context()); err != nil {
			// The answer names the part that is not ready, never the detail (a
			// driver's error names hosts and users): that goes to the log.
			var nr *notReady
			if errors.As(err, &nr) && nr.err != nil {
				log.Warn("not ready", "reason", nr.reason, "error", nr.err)
			}
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("health server stopped", "error", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// notReady is why threadwright is not ready: Error returns reason, a fixed text fit
// for GET /readyz's answer; err, when set, is the detail, for the log only.
type notReady struct {
	reason string
	err    error
}

func (e *notReady) Error() string { return e.reason }

func (e *notReady) Unwrap() error { return e.err }

// checkReady returns why threadwright is not ready (a *notReady), or nil.
func (m *Main) checkReady(ctx context.Context) error {
	b := m.bot.Load()
	st, _ := m.store.Load().(conversation.Store)
	switch {
	case !m.running.Load() || b == nil || st == nil:
		return &notReady{reason: "not running"}
	case !b.Connected():
		return &notReady{reason: "not connected to Slack"}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := st.Ping(ctx); err != nil {
		return &notReady{reason: "store unavailable", err: err}
	}
	return nil
}

// retain deletes conversations idle for longer than keep, once an hour, until ctx ends.
func (m *Main) retain(ctx context.Context, log *slog.Logger, st conversation.Store, keep time.Duration) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := st.DeleteIdle(ctx, time.Now().Add(-keep))
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("retention: delete idle conversations", "error", err)
		case n > 0:
			log.Info("retention: deleted idle conversations", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func storeKind(c StoreConfig) string {
	if c.DatabaseURL == "" {
		return "sqlite"
	}
	return "postgres"
}

// actionSigner returns the Signer of button values, keyed by the installation's
// secret bot.SigningKeyName, which the store makes once and every replica shares
// (README, "Buttons are signed").
func actionSigner(ctx context.Context, st conversation.Store) (*bot.Signer, error) {
	secrets, ok := st.(interface {
		Secret(ctx context.Context, name string) ([]byte, error)
	})
	if !ok {
		return nil, fmt.Errorf("store %T keeps no secrets", st)
	}
	key, err := secrets.Secret(ctx, bot.SigningKeyName)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	return bot.NewSigner(key)
}
