package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/metrics"
	"github.com/threadwright/threadwright/prompts"
	"github.com/threadwright/threadwright/store"
	"github.com/threadwright/threadwright/webhook"
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
	// Hooks, when set, watch or replace parts of the run: threadwright eval records
	// every model call, tool call and scope verdict of a case through them.
	Hooks Hooks
	// SetDefault makes Run's logger, which scrubs the configured secrets, the
	// process's default (slog.SetDefault, through which the log package writes too).
	// The binary sets it; tests that run several Mains in one process do not.
	SetDefault bool

	// What other goroutines read while Run runs (Addr, APIAddr, Ready, Wait).
	addr    atomic.Value // string: the health server's address, once listening
	apiAddr atomic.Value // string: the HTTP API's address, once listening
	bot     atomic.Pointer[bot.Bot]
	running atomic.Bool
	store   atomic.Value // conversation.Store, once open
	service atomic.Pointer[service.Service]
	// metrics are the run's instruments, served at GET /metrics (nil: none);
	// noMetrics, set by benchmarks, runs without them.
	metrics   *metrics.Metrics
	noMetrics bool

	// The subsystems of a run: open builds them from the configuration in this
	// order, serve runs them, and close tears down what was built, in reverse.
	rc          runConfig          // the configuration, its files, the prompts, the logger
	stopTracing func()             // flushes the spans left
	mcp         *mcp.Sources       // MCP_CONFIG's servers (nil: none)
	dataLock    *store.DataDirLock // DATA_DIR, held for this process alone
	db          conversation.Store // the store (published to Ready by store)
	agents      agentSet           // the model client and the agents
	slack       slackConn          // Slack's Web API: client, identity, signer, Messengers
	spool       conversation.Spool // inputs kept on disk while Postgres is down (nil: none)
	hooks       *webhook.Deliverer // webhook delivery (nil: WEBHOOK_URLS unset)
	health      *httpServer        // HTTP_ADDR (nil: off)
	api         *httpServer        // API_ADDR (nil: off)
	debug       *httpServer        // DEBUG_ADDR (nil: off)
	// stopBackground ends the work beside the turns (retention, webhook delivery);
	// background joins it before the store closes.
	stopBackground context.CancelFunc
	background     sync.WaitGroup
}

// NewMain returns a Main with default writers.
func NewMain() *Main {
	return &Main{Stdout: os.Stdout, Stderr: os.Stderr}
}

// Run starts threadwright and blocks until ctx ends (SIGINT/SIGTERM in production) or
// the Slack connection fails for good. It then stops taking events, lets running turns
// finish for up to SHUTDOWN_TIMEOUT (cancelling them after that; their inputs resume at
// the next start), and closes the store. Start-up errors (a broken prompt template, an
// unreachable database, a rejected Slack token) are returned at once.
func (m *Main) Run(ctx context.Context) (err error) {
	defer func() {
		if cerr := m.close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	if err := m.open(ctx); err != nil {
		return err
	}
	return m.serve(ctx)
}

// open builds the subsystems from the configuration, one builder each, in the order
// they depend on each other. What it built before an error, close tears down.
func (m *Main) open(ctx context.Context) (err error) {
	if m.Stderr == nil {
		m.Stderr = os.Stderr
	}
	if err := m.openConfig(ctx); err != nil {
		return err
	}
	rc := &m.rc
	// First, before anything starts (MCP servers, connections): a second process on
	// the same directory stops at once, saying which holds it. An empty DATA_DIR (with
	// Postgres) puts the spool in the working directory, which is locked then.
	if m.dataLock, err = store.LockDataDir(cmp.Or(rc.DataDir, ".")); err != nil {
		return err
	}
	var tools *agents.Registry
	if tools, m.mcp, err = rc.buildTools(ctx, m.RegisterTools); err != nil {
		return err
	}
	if m.db, err = store.Open(ctx, rc.storeOptions(rc.log)); err != nil {
		return err
	}
	m.store.Store(m.db)
	kb, _ := m.db.(conversation.Knowledge)
	if m.Hooks.Knowledge != nil {
		kb = m.Hooks.Knowledge
	}
	if err := registerKnowledge(tools, kb); err != nil {
		return err
	}
	if m.Hooks.Tool != nil { // every tool is registered by now
		tools.Wrap(m.Hooks.Tool)
	}
	if !m.noMetrics { // every tool is registered by now
		m.metrics = newMetrics(rc.Config, rc.files.profiles, rc.files.workflows.Names(), tools)
	}
	if m.slack, err = rc.openSlack(ctx, m.db, m.metrics); err != nil {
		return err
	}
	if m.agents, err = rc.newAgents(m.Model, tools, m.metrics, m.Hooks); err != nil {
		return err
	}
	if err := m.openService(ctx); err != nil {
		return err
	}
	// Listen before the service starts: a busy HTTP_ADDR must not leave its background
	// work running on a store that is closed on the way out.
	return m.listen()
}

// openConfig reads the files the configuration names, makes the run's logger, which
// scrubs the configured secrets from every line and from the error texts shown in
// Slack (docs/operations.md, "Limits and secrets"), starts tracing, and parses the prompts.
func (m *Main) openConfig(ctx context.Context) (err error) {
	rc := &m.rc
	rc.Config = &m.Config
	if rc.files, err = loadConfigFiles(rc.Config); err != nil {
		return err
	}
	rc.scrubber = rc.redactor(rc.files.mcp, rc.files.profiles)
	rc.log = runLogger(m.Logger, m.Stderr, rc.Config, rc.scrubber)
	for _, note := range preferredProfileNotes(rc.files.workflows.All(), definedIn(rc.files.profiles), "") {
		rc.log.Warn(note)
	}
	if m.stopTracing, err = startTracing(ctx, rc.TraceConfig, rc.scrubber, rc.log); err != nil {
		return err
	}
	if m.SetDefault {
		slog.SetDefault(rc.log)
	}
	if rc.prompts, err = prompts.Parse(); err != nil {
		return fmt.Errorf("prompts: %w", err)
	}
	return nil
}

// openService opens the spool, makes the webhook deliverer, the conversation service
// and the Slack bot that submits to it.
func (m *Main) openService(ctx context.Context) (err error) {
	rc := &m.rc
	if m.spool, err = store.OpenSpool(ctx, rc.storeOptions(rc.log)); err != nil {
		return err
	}
	if m.hooks, err = rc.newDeliverer(m.db, m.slack.raw, rc.log); err != nil {
		return err
	}
	files, err := newFileReader(rc.Config, m.slack.raw, rc.log)
	if err != nil {
		return err
	}
	svc, err := rc.newService(serviceParts{
		store: m.db, spool: m.spool, metrics: m.metrics, messenger: m.slack.messenger, agents: m.agents, fetcher: m.Fetcher, agent: m.slack.agent,
		now: m.Hooks.Now, files: files,
	})
	if err != nil {
		return err
	}
	m.service.Store(svc)
	b, err := rc.newBot(m.slack, svc, m.db, m.metrics)
	if err != nil {
		return err
	}
	m.bot.Store(b)
	return nil
}

// listen starts the health server and the HTTP API.
func (m *Main) listen() (err error) {
	rc := &m.rc
	if m.health, err = serveHealth(rc.HTTPAddr, rc.MetricsToken, m.checkReady, m.metrics, rc.log); err != nil {
		return err
	}
	if m.health != nil {
		m.addr.Store(m.health.addr)
	}
	if m.debug, err = serveDebug(rc.DebugAddr, rc.log); err != nil {
		return err
	}
	m.api, err = serveAPI(rc.Config, apiParts{
		store: m.db, service: m.service.Load(), workflows: rc.files.workflows, links: m.slack.messenger, teamID: m.slack.me.TeamID,
		scrubber: rc.scrubber,
	}, rc.log)
	if err != nil {
		return err
	}
	if m.api != nil {
		m.apiAddr.Store(m.api.addr)
	}
	return nil
}

// serve starts the service's workers and the background work, runs the bot until
// ctx ends or the Slack connection fails for good, and then lets the running turns
// finish for up to SHUTDOWN_TIMEOUT.
func (m *Main) serve(ctx context.Context) error {
	rc, svc := &m.rc, m.service.Load()
	if err := svc.Start(ctx); err != nil {
		return err
	}
	m.running.Store(true)
	m.startBackground(ctx)

	rc.log.Info("threadwright running", "version", version, "model", rc.OpenAIModel, "store", storeKind(rc.StoreConfig),
		"scope_check", m.agents.scope != nil, "strategy", rc.Strategy, "workflows", rc.files.workflows.Names())
	runErr := m.bot.Load().Run(ctx) // until ctx ends or the connection fails for good

	rc.log.Info("shutting down: no new events; waiting for running turns", "timeout", rc.ShutdownTimeout)
	m.running.Store(false)
	sctx, cancel := context.WithTimeout(context.Background(), rc.ShutdownTimeout)
	defer cancel()
	if err := svc.Shutdown(sctx); err != nil {
		rc.log.Warn("shutdown cut short; unfinished inputs resume at the next start", "error", err)
	}
	rc.log.Info("stopped")
	return runErr
}

// startBackground starts the work that runs beside the turns and uses the store:
// retention (RETENTION_DAYS) and webhook delivery. close ends it and waits for it
// before the store closes.
func (m *Main) startBackground(ctx context.Context) {
	rc, st, hooks := &m.rc, m.db, m.hooks
	bgCtx, stop := context.WithCancel(ctx)
	m.stopBackground = stop
	if rc.RetentionDays > 0 {
		keep := time.Duration(rc.RetentionDays) * 24 * time.Hour
		m.background.Go(func() { retain(bgCtx, rc.log, st, keep) })
	}
	if hooks != nil {
		m.background.Go(func() { _ = hooks.Run(bgCtx) })
	}
}

// close tears down what open and serve started, in reverse: the background work,
// the HTTP API (a request after the service began to shut down gets 503), the health
// server, the spool (after the service's Shutdown), the store, the MCP servers
// (after the turns have finished), and last tracing, which flushes the spans left.
// It returns the store's close error.
func (m *Main) close() error {
	if m.stopBackground != nil {
		m.stopBackground()
		m.background.Wait()
		m.stopBackground = nil
	}
	if m.api != nil {
		m.api.Close()
		m.api = nil
	}
	if m.health != nil {
		m.health.Close()
		m.health = nil
	}
	if m.debug != nil {
		m.debug.Close()
		m.debug = nil
	}
	if m.spool != nil {
		_ = m.spool.Close()
		m.spool = nil
	}
	var err error
	if m.db != nil {
		if cerr := m.db.Close(); cerr != nil {
			err = fmt.Errorf("close store: %w", cerr)
		}
		m.db = nil
	}
	if m.mcp != nil {
		_ = m.mcp.Close()
		m.mcp = nil
	}
	if m.dataLock != nil { // last: what it started first is stopped by then
		_ = m.dataLock.Unlock()
		m.dataLock = nil
	}
	if m.stopTracing != nil {
		m.stopTracing()
		m.stopTracing = nil
	}
	return err
}

// Wait blocks until the bot has no input queued or running (see
// conversation.Service.Wait), or ctx ends.
func (m *Main) Wait(ctx context.Context) error {
	if svc := m.service.Load(); svc != nil {
		return svc.Wait(ctx)
	}
	return nil
}

// Ready reports whether the bot is running, connected to Slack, and its store answers
// (the check behind GET /readyz).
func (m *Main) Ready(ctx context.Context) bool { return m.checkReady(ctx) == nil }

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

// Addr returns the address the health server listens on ("" until it listens or when
// HTTP_ADDR is empty).
func (m *Main) Addr() string {
	s, _ := m.addr.Load().(string)
	return s
}

// APIAddr returns the address the HTTP API listens on ("" until it listens or when
// API_ADDR is empty).
func (m *Main) APIAddr() string {
	s, _ := m.apiAddr.Load().(string)
	return s
}
