package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/internal/redact"
	"github.com/threadwright/threadwright/metrics"
)

// httpServer is an HTTP server of the run on a listener of its own, served by a
// goroutine that Close waits for.
type httpServer struct {
	name  string        // for the log: "health server", "API server"
	grace time.Duration // how long Close lets requests in flight end
	srv   *http.Server
	addr  string        // the address it listens on
	done  chan struct{} // closed when Serve has returned
}

// serveHTTP serves h on ln until Close; errors other than Close's are logged to log.
func serveHTTP(ln net.Listener, h http.Handler, name string, grace time.Duration, log *slog.Logger) *httpServer {
	s := &httpServer{
		name: name, grace: grace, addr: ln.Addr().String(), done: make(chan struct{}),
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)},
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(name+" stopped", "error", err)
		}
	}()
	return s
}

// Close stops the server, letting requests in flight end within its grace period
// (on a context of its own: the run's has ended), and waits for its goroutine.
func (s *httpServer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), s.grace)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
}

// bearer returns next guarded by token: a request without "Authorization: Bearer
// <token>" gets 401 (compared in constant time, as SHA-256 digests). An empty token
// guards nothing.
func bearer(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "a bearer token (METRICS_TOKEN) is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveHealth serves GET /healthz (the process is up), GET /readyz (ready's answer:
// 503 with a fixed reason when it returns an error, the detail logged) and GET
// /metrics (mx's instruments) on addr (HTTP_ADDR), and returns the server; nil when
// addr is empty. With metricsToken set (METRICS_TOKEN), /metrics answers 401 unless
// the request carries it as a bearer token.
func serveHealth(addr, metricsToken string, ready func(context.Context) error, mx *metrics.Metrics, log *slog.Logger) (*httpServer, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("HTTP_ADDR: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /metrics", bearer(metricsToken, mx.Handler(log))) // docs/operations.md, "Metrics"
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := ready(r.Context()); err != nil {
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
	return serveHTTP(ln, mux, "health server", 2*time.Second, log), nil
}

// serveDebug serves net/http/pprof's handlers under /debug/pprof/ on addr
// (DEBUG_ADDR; docs/operations.md, "Profiling"), and returns the server; nil when addr
// is empty. An address without a host (":6060") binds loopback; validate refuses
// another host unless DEBUG_ADDR_REMOTE is set.
func serveDebug(addr string, log *slog.Logger) (*httpServer, error) {
	if addr == "" {
		return nil, nil
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("DEBUG_ADDR: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index) // the named profiles: heap, goroutine, …
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	s := serveHTTP(ln, mux, "debug server", time.Second, log)
	log.Info("profiling endpoints served", "addr", s.addr)
	return s, nil
}

// loopbackAddr reports whether addr (host:port) binds loopback only: no host
// (serveDebug binds 127.0.0.1 then), localhost, or a loopback IP.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "" || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// notReady is why threadwright is not ready: Error returns reason, a fixed text fit
// for GET /readyz's answer; err, when set, is the detail, for the log only.
type notReady struct {
	reason string
	err    error
}

func (e *notReady) Error() string { return e.reason }

func (e *notReady) Unwrap() error { return e.err }

// apiParts are what the HTTP API serves: the store, the service its writes are
// submitted to, the workflows, and the thread links of the Slack workspace teamID.
type apiParts struct {
	store     conversation.Store
	service   *service.Service
	workflows conversation.Workflows
	links     conversation.Permalinker
	teamID    string
	scrubber  *redact.Redactor // scrubs every response (runConfig.scrubber)
}

// The service gives the API the starts its spool holds, so that a repeat of a
// start with an Idempotency-Key spooled while the database was down is one.
var _ api.SpoolReader = (*service.Service)(nil)

// serveAPI serves the HTTP API (package api) on API_ADDR, and returns the server,
// which lets requests in flight end for up to 5 seconds when closed; nil when
// API_ADDR is empty.
func serveAPI(c *Config, p apiParts, log *slog.Logger) (*httpServer, error) {
	if c.APIAddr == "" {
		return nil, nil
	}
	apiStore, ok := p.store.(api.Store)
	if !ok {
		return nil, fmt.Errorf("API_ADDR: store %T cannot serve the API", p.store)
	}
	tokens, err := api.ParseTokens(c.APITokens) // validated by LoadConfig
	if err != nil {
		return nil, fmt.Errorf("API_TOKENS: %w", err)
	}
	kb, _ := p.store.(conversation.Knowledge)
	srv, err := api.New(api.Config{
		Store: apiStore, Submitter: p.service, Workflows: p.workflows, Knowledge: kb, Links: p.links,
		Approvers: c.ApproverUserIDs, TeamID: p.teamID, Tokens: tokens, Redactor: p.scrubber, Logger: log,
		UploadsInFlight: c.APIUploadsInFlight, UploadsPerMinute: c.APIUploadsPerMinute,
	})
	if err != nil {
		return nil, fmt.Errorf("API_ADDR: %w", err)
	}
	ln, err := net.Listen("tcp", c.APIAddr)
	if err != nil {
		return nil, fmt.Errorf("API_ADDR: listen on %s: %w", c.APIAddr, err)
	}
	s := serveHTTP(ln, srv, "API server", 5*time.Second, log)
	log.Info("HTTP API listening", "addr", s.addr, "tokens", len(tokens))
	return s, nil
}
