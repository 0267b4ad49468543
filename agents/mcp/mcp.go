package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/threadwright/threadwright/agents"
)

// Errors of tool calls; test with errors.Is.
var (
	// ErrUnavailable means the tool's server could not be reached, died, or did not
	// answer in time. The message reads "MCP server NAME is not available: …".
	ErrUnavailable = errors.New("mcp: server not available")
	// ErrToolFailed means the server answered that the call failed: a result with
	// isError set (the message is the result's text) or a JSON-RPC error such as
	// unknown tool or invalid arguments.
	ErrToolFailed = errors.New("mcp: tool failed")
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

// grace lets a call's own timeout fire before the executor's (ToolSpec.Timeout), so
// the model reads an error naming the server rather than a bare "timed out".
const grace = 2 * time.Second

// pingTimeout bounds the health check after a call timed out; it takes at most a
// quarter of the call's timeout, leaving the rest to restart the server if needed.
const pingTimeout = 5 * time.Second

// codeRejected is the JSON-RPC error code with which the SDK reports a request the
// transport could not deliver, such as an HTTP server that is down (jsonrpc2's
// ErrRejected, inside the go-sdk). It is not the server's answer.
const codeRejected = -32005

// terminateDuration is how long closing a stdio server waits after closing its stdin
// before SIGTERM, and again before SIGKILL (mcp.CommandTransport).
const terminateDuration = 2 * time.Second

// inheritedEnv are the variables a stdio server gets from the bot's environment,
// besides ServerConfig.Env: enough to run a program, none of the bot's secrets
// (the MCP TypeScript SDK's getDefaultEnvironment makes the same choice).
var inheritedEnv = []string{"HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER"}

// implementation is how threadwright introduces itself in MCP's initialize request.
var implementation = &sdk.Implementation{Name: "threadwright", Version: "1"}

// Sources are the MCP servers that answered at start-up, with the tools each one
// listed. Make them with Connect, add their tools to a registry with Register, and
// stop them with Close. The methods are safe for concurrent use.
type Sources struct {
	servers []*server
}

// Connect starts or connects to every server of cfg in parallel, each within its
// ConnectTimeout, and lists its tools (tools/list). A server that fails is logged and left
// out, unless it is Required: then Connect stops the others and returns an error
// naming it. cfg is validated as LoadConfig does (errors wrap ErrConfig); logger
// nil uses slog.Default(). Stdio servers keep running after ctx ends, until Close.
func Connect(ctx context.Context, cfg Config, logger *slog.Logger) (*Sources, error) {
	cfg.Servers = slices.Clone(cfg.Servers)
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	if logger == nil {
		logger = slog.Default()
	}
	servers := make([]*server, len(cfg.Servers))
	errs := make([]error, len(cfg.Servers))
	var wg sync.WaitGroup
	for i, sc := range cfg.Servers {
		servers[i] = newServer(sc, cfg, logger)
		wg.Go(func() { errs[i] = servers[i].start(ctx) })
	}
	wg.Wait()

	srcs := &Sources{}
	var required []error
	for i, s := range servers {
		switch {
		case errs[i] == nil:
			srcs.servers = append(srcs.servers, s)
			s.log.Info("MCP server connected", slog.Any(logConfig, s.cfg), slog.Int(logTools, len(s.tools)))
		case s.cfg.Required:
			required = append(required, fmt.Errorf("required MCP server %s: %w", s.cfg.Name, errs[i]))
		default:
			s.log.Warn("MCP server not available at start-up; its tools are left out",
				slog.Any(logConfig, s.cfg), slog.Any(logErr, errs[i]), slog.String(logStderr, s.stderrTail()))
		}
		if errs[i] != nil {
			s.close() // wait for a process that failed to initialize to stop
		}
	}
	if len(required) > 0 {
		srcs.Close()
		return nil, errors.Join(required...)
	}
	return srcs, nil
}

// Register adds every tool of every connected server to r as "prefix__tool" (the
// name made to fit OpenAI's ^[a-zA-Z0-9_-]{1,64}$: other characters become "_", and
// a name too long or clashing with another of the server is cut and given a hash
// suffix), with category "MCP: NAME", the server's description (or title) and input
// schema, and Timeout the server's ConnectTimeout plus its Timeout plus 2 s, so a
// call's own timeout error (naming the server) comes before the executor's. A tool
// the registry refuses as invalid is logged and skipped; other refusals (a name
// already registered) are returned, joined. A nil Sources registers nothing.
func (s *Sources) Register(r *agents.Registry) error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, srv := range s.servers {
		for _, t := range srv.specs() {
			err := r.Register(t.spec, agents.ToolFunc(func(ctx context.Context, args json.RawMessage) (string, error) {
				return srv.call(ctx, t.tool, args)
			}))
			switch {
			case errors.Is(err, agents.ErrInvalidTool):
				srv.log.Warn("MCP tool left out", slog.String(logTool, t.tool), slog.Any(logErr, err))
			case err != nil:
				errs = append(errs, fmt.Errorf("MCP server %s: %w", srv.cfg.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Close stops the stdio servers (closing their stdin, then SIGTERM and SIGKILL after
// a few seconds each) and ends the HTTP sessions; later calls of the tools fail with
// ErrUnavailable. It waits for the servers to stop and returns nil. Close of a nil
// Sources does nothing.
func (s *Sources) Close() error {
	if s == nil {
		return nil
	}
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Go(srv.close)
	}
	wg.Wait()
	return nil
}

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

// call runs tools/call within the server's timeout (reconnecting first, within the
// connect timeout, if needed) and returns the result's text.
func (s *server) call(ctx context.Context, tool string, args json.RawMessage) (string, error) {
	sctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	sess, err := s.session(sctx)
	connectTimedOut := ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("MCP server %s: call of %s abandoned: %w", s.cfg.Name, tool, ctx.Err())
		}
		if connectTimedOut {
			err = fmt.Errorf("no connection within %s: %w", s.cfg.ConnectTimeout, err)
		}
		return "", s.unavailable(err)
	}

	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	timedOut := func() bool { return ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) }
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	res, err := sess.CallTool(cctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return "", fmt.Errorf("MCP server %s: call of %s abandoned: %w", s.cfg.Name, tool, ctx.Err())
	case timedOut():
		s.mu.Lock()
		if s.sess == sess {
			s.suspect = true
		}
		s.mu.Unlock()
		return "", s.unavailable(fmt.Errorf("%s did not answer within %s", tool, s.cfg.Timeout))
	case errors.As(err, &rpcErr) && rpcErr.Code != codeRejected:
		return "", &toolError{msg: fmt.Sprintf("MCP server %s refused the call of %s: %s", s.cfg.Name, tool, rpcErr.Message)}
	default: // the connection is closed, or the request could not be delivered
		s.drop(sess, err)
		return "", s.unavailable(err)
	}
	if res.NeedsInput() {
		return "", &toolError{msg: fmt.Sprintf("MCP server %s: %s asked for input, which threadwright cannot give", s.cfg.Name, tool)}
	}
	text := resultText(res)
	if res.IsError {
		if strings.TrimSpace(text) == "" {
			text = fmt.Sprintf("MCP server %s: %s failed without a message", s.cfg.Name, tool)
		}
		return "", &toolError{msg: text}
	}
	if res.StructuredContent != nil {
		// The tool-result contract is read from it (docs/tools.md, "The tool-result contract").
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			agents.ReportStructured(ctx, b)
		}
	}
	return text, nil
}

func (s *server) unavailable(err error) error {
	return &unavailableError{server: s.cfg.Name, err: err}
}

// unavailableError is ErrUnavailable with the server's name and the cause.
type unavailableError struct {
	server string
	err    error
}

func (e *unavailableError) Error() string {
	return fmt.Sprintf("MCP server %s is not available: %v", e.server, e.err)
}

func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// toolError is ErrToolFailed with the message the model reads.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func (e *toolError) Unwrap() error { return ErrToolFailed }

// resultText renders a tools/call result for the model: text contents joined by
// newlines, other contents described in brackets, and the structured content as JSON
// when there is no content (MCP specification, "Tools", "Tool Result"); a successful
// result without either says so.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			link := fmt.Sprintf("[resource %s: %s", c.Name, c.URI)
			if c.Description != "" {
				link += " (" + c.Description + ")"
			}
			parts = append(parts, link+"]")
		case *sdk.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
				parts = append(parts, "[empty resource]")
			case r.Blob != nil:
				parts = append(parts, fmt.Sprintf("[resource %s, %s, %d bytes, not shown]", r.URI, r.MIMEType, len(r.Blob)))
			default:
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%T content, not shown]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 && !res.IsError {
		return "(the tool returned nothing)"
	}
	return strings.Join(parts, "\n")
}

// toolSpec is a server's tool as registered: its spec and its name on the server.
type toolSpec struct {
	spec agents.ToolSpec
	tool string
}

// specs returns the server's tools as agents.ToolSpecs, sorted by the server's
// names, so the hash suffixes of clashing names are deterministic.
func (s *server) specs() []toolSpec {
	tools := slices.Clone(s.tools)
	slices.SortFunc(tools, func(a, b *sdk.Tool) int { return strings.Compare(a.Name, b.Name) })
	used := make(map[string]bool)
	var out []toolSpec
	for _, t := range tools {
		name := toolName(s.cfg.Prefix, t.Name, used)
		used[name] = true
		desc := strings.TrimSpace(t.Description)
		if desc == "" {
			desc = t.Title
		}
		if desc == "" && t.Annotations != nil {
			desc = t.Annotations.Title
		}
		if strings.TrimSpace(desc) == "" {
			desc = fmt.Sprintf("The %s tool of the MCP server %s.", t.Name, s.cfg.Name)
		}
		params, err := inputSchema(t.InputSchema)
		if err != nil {
			s.log.Warn("MCP tool left out: unusable input schema", slog.String(logTool, t.Name), slog.Any(logErr, err))
			continue
		}
		spec := agents.ToolSpec{
			Name:        name,
			Description: desc,
			Category:    "MCP: " + s.cfg.Name,
			Parameters:  params,
			Timeout:     s.cfg.ConnectTimeout + s.cfg.Timeout + grace,
		}
		classify(&spec, t.Annotations, s.cfg.Trusted)
		out = append(out, toolSpec{spec: spec, tool: t.Name})
	}
	return out
}

// classify sets the tool policy's fields of spec (docs/tools.md, "Tool policy") from a tool's
// annotations (nil: none) and whether its server is trusted (ServerConfig.Trusted):
//   - readOnlyHint: ReadOnly, it runs without confirmation;
//   - otherwise NeedsApproval when destructiveHint is true or the server is not
//     trusted (the hints of an untrusted server cannot vouch for a side effect);
//   - Untrusted output when the server is not trusted or openWorldHint is true.
//
// The MCP defaults of absent hints (destructiveHint and openWorldHint true) are not
// assumed for a trusted server: its operator vouched for it.
func classify(spec *agents.ToolSpec, a *sdk.ToolAnnotations, trusted bool) {
	if a == nil {
		a = &sdk.ToolAnnotations{}
	}
	destructive := a.DestructiveHint != nil && *a.DestructiveHint
	openWorld := a.OpenWorldHint != nil && *a.OpenWorldHint
	spec.ReadOnly = a.ReadOnlyHint
	spec.NeedsApproval = !a.ReadOnlyHint && (destructive || !trusted)
	spec.Untrusted = !trusted || openWorld
}

// toolName is prefix + "__" + tool fitted to OpenAI's function names: characters
// outside a-z, A-Z, 0-9, "_" and "-" become "_"; a name longer than 64 characters,
// or already used, is cut and ends with "_" and 8 hex digits of the raw name's hash.
func toolName(prefix, tool string, used map[string]bool) string {
	raw := prefix + "__" + tool
	name := toolChars.ReplaceAllString(raw, "_")
	if len(name) <= 64 && !used[name] {
		return name
	}
	sum := sha256.Sum256([]byte(raw))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return name[:min(len(name), 64-len(suffix))] + suffix
}

// inputSchema converts a tool's input schema as the client decoded it (a JSON
// object) to JSON, making sure it says "type":"object" and has "properties", which
// OpenAI requires of function parameters.
func inputSchema(schema any) (json.RawMessage, error) {
	m, ok := schema.(map[string]any)
	if schema == nil {
		m, ok = map[string]any{}, true
	}
	if !ok {
		return nil, fmt.Errorf("input schema is %T, not a JSON object", schema)
	}
	m = maps.Clone(m)
	if t, ok := m["type"]; ok && t != "object" {
		return nil, fmt.Errorf("input schema type is %v, not object", t)
	}
	m["type"] = "object"
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	return json.Marshal(m)
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
