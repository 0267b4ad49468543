package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Log attribute keys.
const (
	logConfig = "config"
	logServer = "mcp_server"
	logTool   = "tool"
	logTools  = "tools"
	logErr    = "err"
	logStderr = "stderr"
	logRetry  = "retry_in"
)

// pingTimeout bounds the health check after a call timed out; it takes at most a
// quarter of the call's timeout, leaving the rest to restart the server if needed.
const pingTimeout = 5 * time.Second

// terminateDuration is how long closing a stdio server waits after closing its stdin
// before SIGTERM, and again before SIGKILL (mcp.CommandTransport).
const terminateDuration = 2 * time.Second

// inheritedEnv are the variables a stdio server gets from the bot's environment,
// besides ServerConfig.Env: enough to run a program, none of the bot's secrets
// (the MCP TypeScript SDK's getDefaultEnvironment makes the same choice).
var inheritedEnv = []string{"HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER"}

// implementation is how threadwright introduces itself in MCP's initialize request.
var implementation = &sdk.Implementation{Name: "threadwright", Version: "1"}

// server is one configured MCP server and its current session.
type server struct {
	cfg    ServerConfig
	log    *slog.Logger
	client *sdk.Client
	// retryDelay doubles after each failed connection up to maxRetryDelay.
	retryDelay, maxRetryDelay time.Duration
	now                       func() time.Time
	tools                     []*sdk.Tool // listed at start-up

	// dialing is a one-slot semaphore: one reconnection (or health check) at a time,
	// and waiting for it honours the caller's context.
	dialing chan struct{}

	mu sync.Mutex
	// closing counts sessions being closed in the background; Add only under mu
	// and before closed is set, so that no Add races close's Wait.
	closing  sync.WaitGroup
	sess     *sdk.ClientSession // nil when not connected
	stderr   *tail              // of the current stdio process
	suspect  bool               // a call timed out: ping before the next call
	lastErr  error              // why the server is not connected
	failures int                // failed connections in a row
	retryAt  time.Time          // no connection attempt before
	closed   bool
}

func newServer(sc ServerConfig, cfg Config, logger *slog.Logger) *server {
	return &server{
		cfg:           sc,
		log:           logger.With(slog.String(logServer, sc.Name)),
		client:        sdk.NewClient(implementation, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}}),
		retryDelay:    cfg.RetryDelay,
		maxRetryDelay: cfg.MaxRetryDelay,
		now:           time.Now,
		dialing:       make(chan struct{}, 1),
	}
}

// start connects and lists the tools within the server's timeout.
func (s *server) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	sess, stderr, err := s.dial(ctx)
	s.mu.Lock()
	s.stderr = stderr
	s.mu.Unlock()
	if err != nil {
		return err
	}
	var tools []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			s.mu.Lock()
			s.closeSessionLocked(sess, nil)
			s.mu.Unlock()
			return fmt.Errorf("list tools: %w", err)
		}
		tools = append(tools, t)
	}
	s.tools = tools
	s.mu.Lock()
	s.sess = sess
	s.mu.Unlock()
	go s.watch(sess, stderr)
	return nil
}

// dial starts the stdio process or opens the HTTP session and initializes it.
func (s *server) dial(ctx context.Context) (*sdk.ClientSession, *tail, error) {
	var (
		transport sdk.Transport
		stderr    *tail
	)
	if s.cfg.URL != "" {
		transport = &sdk.StreamableClientTransport{
			Endpoint:             s.cfg.URL,
			HTTPClient:           &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: s.cfg.Headers}},
			DisableStandaloneSSE: true, // threadwright needs no server-initiated messages
		}
	} else {
		cmd := exec.Command(s.cfg.Command[0], s.cfg.Command[1:]...)
		cmd.Env = childEnv(s.cfg.Env)
		cmd.Dir = s.cfg.Dir
		stderr = &tail{}
		cmd.Stderr = stderr
		cmd.WaitDelay = time.Second // a grandchild holding stderr open cannot block Wait
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateDuration}
	}
	sess, err := s.client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, stderr, fmt.Errorf("connect: %w", err)
	}
	return sess, stderr, nil
}

// watch notices a session ending by itself (the process exited, the connection
// broke), so the next call reconnects at once.
func (s *server) watch(sess *sdk.ClientSession, stderr *tail) {
	err := sess.Wait()
	s.mu.Lock()
	lost := s.sess == sess
	if lost {
		s.sess, s.suspect = nil, false
		s.lastErr = errors.New("the connection was lost")
	}
	s.mu.Unlock()
	if lost {
		s.log.Warn("MCP server connection lost; reconnecting at the next call",
			slog.Any(logErr, err), slog.String(logStderr, stderr.String()))
	}
}

// session returns the current session, checking it first if a call timed out, or
// connects again, unless the last attempt failed less than the backoff ago.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	sess, ok := s.sess, s.sess != nil && !s.suspect && !s.closed
	s.mu.Unlock()
	if ok {
		return sess, nil
	}

	select {
	case s.dialing <- struct{}{}:
		defer func() { <-s.dialing }()
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the reconnection: %w", ctx.Err())
	}

	s.mu.Lock()
	sess, suspect, closed := s.sess, s.suspect, s.closed
	s.mu.Unlock()
	if closed {
		return nil, errors.New("closed")
	}
	if sess != nil && suspect {
		pctx, cancel := context.WithTimeout(ctx, min(s.cfg.ConnectTimeout/4, pingTimeout))
		err := sess.Ping(pctx, nil)
		cancel()
		if err == nil {
			s.mu.Lock()
			if s.sess == sess {
				s.suspect = false
			}
			s.mu.Unlock()
			return sess, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.drop(sess, fmt.Errorf("no answer to a ping after a call timed out: %w", err))
		sess = nil
	}
	if sess != nil {
		return sess, nil // another caller reconnected meanwhile
	}

	s.mu.Lock()
	if wait := s.retryAt.Sub(s.now()); wait > 0 {
		err := fmt.Errorf("%w (next attempt in %s)", s.lastErr, wait.Round(time.Millisecond))
		s.mu.Unlock()
		return nil, err
	}
	s.mu.Unlock()

	sess, stderr, err := s.dial(ctx)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		if sess != nil {
			_ = sess.Close() // close waits for the dialing slot we hold
		}
		return nil, errors.New("closed")
	}
	defer s.mu.Unlock()
	s.stderr = stderr
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, ctx.Err() // the turn was abandoned: not the server's fault
		}
		s.failures++
		delay := s.backoff()
		s.retryAt, s.lastErr = s.now().Add(delay), err
		s.log.Warn("MCP server reconnection failed", slog.Any(logErr, err),
			slog.String(logStderr, stderr.String()), slog.Duration(logRetry, delay))
		return nil, err
	}
	s.sess, s.suspect, s.failures, s.lastErr = sess, false, 0, nil
	go s.watch(sess, stderr)
	s.log.Info("MCP server reconnected")
	return sess, nil
}

// backoff is the wait after s.failures failed connections in a row; s.mu is held.
func (s *server) backoff() time.Duration {
	d := s.retryDelay
	for i := 1; i < s.failures && d < s.maxRetryDelay; i++ {
		d *= 2
	}
	return min(d, s.maxRetryDelay)
}

// drop forgets a session that failed and closes it in the background; the next call
// reconnects.
func (s *server) drop(sess *sdk.ClientSession, why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != sess {
		s.closeSessionLocked(sess, nil)
		return
	}
	s.sess, s.suspect, s.lastErr = nil, false, why
	stderr := s.stderr
	early := stderr.String()
	s.log.Warn("MCP server connection failed; reconnecting at the next call",
		slog.Any(logErr, why), slog.String(logStderr, early))
	s.closeSessionLocked(sess, func() {
		// os/exec copies a stdio server's stderr until the process has exited, which
		// Close waits for: only now is a crashed server's last word (its reason) in.
		if full := stderr.String(); full != early {
			s.log.Warn("MCP server process ended", slog.String(logStderr, full))
		}
	})
}

// closeSessionLocked closes sess in the background (a stdio server may take seconds
// to stop), then calls after, if set; counted in s.closing for close to wait; s.mu
// is held. After close began,
// nobody waits: the session closes on its own.
func (s *server) closeSessionLocked(sess *sdk.ClientSession, after func()) {
	closeThen := func() {
		_ = sess.Close()
		if after != nil {
			after()
		}
	}
	if s.closed {
		go closeThen()
		return
	}
	s.closing.Go(closeThen)
}

// close ends the session and waits for every session being closed, including one
// a reconnection is opening.
func (s *server) close() {
	s.mu.Lock()
	if sess := s.sess; sess != nil {
		s.closeSessionLocked(sess, nil)
	}
	s.sess, s.closed, s.lastErr = nil, true, errors.New("closed")
	s.mu.Unlock()
	s.dialing <- struct{}{} // a reconnection in progress finishes, and closes its session
	<-s.dialing
	s.closing.Wait()
}

func (s *server) stderrTail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// childEnv is the environment of a stdio server: inheritedEnv from the bot, then env.
func childEnv(env map[string]string) []string {
	var out []string
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			if _, override := env[k]; !override {
				out = append(out, k+"="+v)
			}
		}
	}
	for _, k := range sortedKeys(env) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// headerTransport adds the configured headers to each request of an HTTP server.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(req)
}

// tail keeps the end of a stdio server's stderr for logs.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = slices.Clone(t.buf[over:])
	}
	return len(p), nil
}

// String returns the kept stderr, trimmed; "" for a nil tail (HTTP servers).
func (t *tail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
