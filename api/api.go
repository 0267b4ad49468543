package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Version is the version of the API's contract, in the OpenAPI document.
const Version = "1.0.0"

// Store is what the API reads: conversation.Store's Load, and the queries
// store/sqlite and store/postgres add for it.
type Store interface {
	// Load is conversation.Store.Load.
	Load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error)
	// Runs lists the conversations that have a workflow run, most recently updated
	// first.
	Runs(ctx context.Context, q conversation.RunQuery) ([]conversation.RunRef, error)
	// Messages returns up to limit messages of key with a seq below before (0: the
	// newest), oldest first, of role only when role is set. Errors:
	// conversation.ErrNotFound.
	Messages(ctx context.Context, key conversation.Key, before int64, limit int, role conversation.Role) ([]conversation.Message, error)
	// InputStatus returns the status of input id. Errors: conversation.ErrNotFound.
	InputStatus(ctx context.Context, id string) (conversation.InputStatus, error)
	// Forwarded returns the threads of the inputs forwarded from input id (a
	// channel command's forward to the thread it posted).
	Forwarded(ctx context.Context, id string) ([]conversation.Key, error)
}

// Submitter takes inputs as Slack's do (conversation.Service implements it).
type Submitter interface {
	Submit(ctx context.Context, in conversation.Input) (accepted bool, err error)
}

// Config configures the API. Store, Submitter, Workflows and Tokens are required.
type Config struct {
	Store     Store
	Submitter Submitter
	Workflows conversation.Workflows
	// Knowledge is the knowledge base (nil: its endpoints answer 404).
	Knowledge conversation.Knowledge
	// Links makes a thread's permalink (chat.getPermalink); nil: runs have none.
	Links conversation.Permalinker
	// Approvers are the deployment's approvers (APPROVER_USER_IDS), for the same
	// permission checks as the conversation service's (workflow.Machine.May).
	Approvers []string
	// TeamID is the workspace of runs started without a team_id (the bot's own,
	// from auth.test).
	TeamID string
	// Tokens are the bearer tokens (API_TOKENS).
	Tokens []Token
	// Wait bounds how long a write waits for its input's turn before it answers
	// 202 Accepted (default 60 s).
	Wait time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Server is the API: an http.Handler serving the resources and GET /openapi.json.
type Server struct {
	cfg  Config
	log  *slog.Logger
	keys *keyring
	mux  *mux
	api  huma.API
}

type actorKey struct{}

// New returns the API of cfg.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Store == nil || cfg.Submitter == nil || cfg.Workflows == nil:
		return nil, errors.New("api: Config.Store, Submitter and Workflows are required")
	case len(cfg.Tokens) == 0:
		return nil, errors.New("api: no token (API_TOKENS)")
	}
	return newServer(cfg), nil
}

// newServer returns the API of cfg, unchecked.
func newServer(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 60 * time.Second
	}
	s := &Server{cfg: cfg, log: cfg.Logger, keys: newKeyring(cfg.Tokens), mux: newMux()}
	s.api = humago.New(s.mux, apiConfig())
	s.api.UseMiddleware(s.authenticate)
	s.register()
	return s
}

// OpenAPI returns the API's OpenAPI 3.1 document, as Server.OpenAPI does, without
// a server (go generate writes it to docs/openapi.json).
func OpenAPI() ([]byte, error) { return newServer(Config{}).OpenAPI() }

// apiConfig is the huma configuration: the OpenAPI document at /openapi.json (and
// .yaml), no docs page (it loads scripts from a CDN), bodies without $schema links,
// bearer authentication on every operation.
func apiConfig() huma.Config {
	c := huma.DefaultConfig("threadwright API", Version)
	c.Info.Description = "Drive threadwright's artifact workflows from other systems: start runs, read artifacts and reports, approve. " +
		"Authenticate with `Authorization: Bearer <secret>` (API_TOKENS). Errors are RFC 9457 problem details."
	c.DocsPath = ""
	c.CreateHooks = nil
	c.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "A secret of API_TOKENS (name:secret)."},
	}
	c.Security = []map[string][]string{{"bearer": {}}}
	return c
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// OpenAPI returns the OpenAPI 3.1 document, indented, as served at /openapi.json.
func (s *Server) OpenAPI() ([]byte, error) {
	b, err := json.MarshalIndent(s.api.OpenAPI(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("api: marshal OpenAPI: %w", err)
	}
	return append(b, '\n'), nil
}

// authenticate answers 401 unless the request carries a bearer secret of a token,
// then runs the operation as the token's actor and logs it with the token's name
// (never the secret).
func (s *Server) authenticate(ctx huma.Context, next func(huma.Context)) {
	start := time.Now()
	scheme, secret, _ := strings.Cut(ctx.Header("Authorization"), " ")
	name, ok := "", false
	if strings.EqualFold(scheme, "Bearer") {
		name, ok = s.keys.match(strings.TrimSpace(secret))
	}
	if !ok {
		ctx.SetHeader("WWW-Authenticate", `Bearer realm="threadwright"`)
		_ = huma.WriteErr(s.api, ctx, http.StatusUnauthorized, "a bearer token of API_TOKENS is required")
		s.log.Info("api request refused: no valid token", "method", ctx.Method(), "path", ctx.URL().Path, "remote", ctx.RemoteAddr())
		return
	}
	next(huma.WithValue(ctx, actorKey{}, Token{Name: name}))
	s.log.Info("api request", "token", name, "method", ctx.Method(), "path", ctx.URL().Path,
		"status", ctx.Status(), "duration", time.Since(start))
}

// actor returns the token a request runs as.
func actor(ctx context.Context) Token {
	t, _ := ctx.Value(actorKey{}).(Token)
	return t
}

// machine returns the workflow machine of def with the deployment's approvers.
func (s *Server) machine(def *workflow.Definition) workflow.Machine {
	return workflow.Machine{Def: def, Approvers: s.cfg.Approvers}
}

// storeError turns a store error into a problem: 404 for conversation.ErrNotFound,
// 503 when the store is unavailable, 500 otherwise (logged).
func (s *Server) storeError(err error, what string) error {
	switch {
	case errors.Is(err, conversation.ErrNotFound):
		return huma.Error404NotFound(what + " not found")
	case errors.Is(err, conversation.ErrUnavailable):
		return huma.Error503ServiceUnavailable("the store is unavailable; try again")
	}
	s.log.Error("api: store", "what", what, "error", err)
	return huma.Error500InternalServerError("internal error")
}
