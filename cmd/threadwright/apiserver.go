package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
)

// APIAddr returns the address the HTTP API listens on ("" until it listens or when
// API_ADDR is empty).
func (m *Main) APIAddr() string {
	s, _ := m.apiAddr.Load().(string)
	return s
}

// serveAPI serves the HTTP API (package api) on API_ADDR, when set, and returns a
// function that stops it, letting requests in flight end for up to 5 seconds.
func (m *Main) serveAPI(log *slog.Logger, st conversation.Store, svc *service.Service, workflows conversation.Workflows,
	links conversation.Permalinker, teamID string) (stop func(), err error) {
	c := m.Config
	if c.APIAddr == "" {
		return func() {}, nil
	}
	apiStore, ok := st.(api.Store)
	if !ok {
		return nil, fmt.Errorf("API_ADDR: store %T cannot serve the API", st)
	}
	tokens, err := api.ParseTokens(c.APITokens) // validated by LoadConfig
	if err != nil {
		return nil, fmt.Errorf("API_TOKENS: %w", err)
	}
	kb, _ := st.(conversation.Knowledge)
	srv, err := api.New(api.Config{
		Store: apiStore, Submitter: svc, Workflows: workflows, Knowledge: kb, Links: links,
		Approvers: c.ApproverUserIDs, TeamID: teamID, Tokens: tokens, Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("API_ADDR: %w", err)
	}
	ln, err := net.Listen("tcp", c.APIAddr)
	if err != nil {
		return nil, fmt.Errorf("API_ADDR: listen on %s: %w", c.APIAddr, err)
	}
	m.apiAddr.Store(ln.Addr().String())
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("API server stopped", "error", err)
		}
	}()
	log.Info("HTTP API listening", "addr", ln.Addr().String(), "tokens", len(tokens))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		<-done
	}, nil
}
