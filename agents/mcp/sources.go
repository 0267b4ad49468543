package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/threadwright/threadwright/agents"
)

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
