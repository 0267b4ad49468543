package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/redact"
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
	// Input returns input id as stored, with its status and payload. Errors:
	// conversation.ErrNotFound.
	Input(ctx context.Context, id string) (conversation.Input, error)
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
	// Redactor scrubs the configured secrets out of every response, as the bot
	// scrubs what it shows in Slack (nil: nothing is scrubbed).
	Redactor *redact.Redactor
	// UploadsInFlight bounds the knowledge uploads handled at once, for the whole
	// server (API_UPLOADS_IN_FLIGHT; 0: DefaultUploadsInFlight); UploadsPerMinute
	// bounds each token's, with a burst of as many (API_UPLOADS_PER_MINUTE; 0:
	// DefaultUploadsPerMinute).
	UploadsInFlight, UploadsPerMinute int
	// Wait bounds how long a write waits for its input's turn before it answers
	// 202 Accepted (default 60 s).
	Wait time.Duration
	// StoreTimeout bounds a write's store calls (default DefaultStoreTimeout), so
	// that a store that hangs does not hold the request without end: its read of the
	// run before its input is kept, and the keeping itself, stored or spooled
	// (Submitter.Submit; a Slack envelope's has the ack's deadline instead,
	// docs/architecture.md, "Accepted means stored"), answer 503 past it and
	// storeGrace; its reads after the wait (Wait) answer 202 without the run. A
	// read-only request (GET) has StoreTimeout for all its work, and answers 503
	// past it; so does a knowledge source's delete, and an upload's write has six
	// times as long (uploadStoreTimes).
	StoreTimeout time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// DefaultStoreTimeout is Config.StoreTimeout's default: time for the intake to retry
// a store that fails, or to spool the input when the store hangs.
const DefaultStoreTimeout = 10 * time.Second

// Server is the API: an http.Handler serving the resources and GET /openapi.json.
type Server struct {
	cfg  Config
	log  *slog.Logger
	keys *keyring
	gate *uploadGate // bounds.go
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
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = DefaultStoreTimeout
	}
	if cfg.Store != nil {
		cfg.Store = answeringStore{next: cfg.Store}
	}
	if cfg.Knowledge != nil {
		cfg.Knowledge = answeringKnowledge{cfg.Knowledge}
	}
	s := &Server{cfg: cfg, log: cfg.Logger, keys: newKeyring(cfg.Tokens), gate: newUploadGate(cfg.UploadsInFlight, cfg.UploadsPerMinute), mux: newMux()}
	c := apiConfig()
	c.Transformers = []huma.Transformer{s.scrub}
	s.api = humago.New(s.mux, c)
	s.api.UseMiddleware(s.authenticate, s.boundReads)
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
	c.Info.Description = "Drive threadwright's artifact workflows from other systems: start runs, pick, edit, approve and regenerate their artifacts, cancel them, read artifacts and reports. " +
		"Authenticate with `Authorization: Bearer <secret>` (API_TOKENS); each operation names the scope it needs under security (403 without it). " +
		"Errors are RFC 9457 problem details. Serve it behind TLS (docs/api.md, \"Tokens\")."
	c.DocsPath = ""
	c.CreateHooks = nil
	c.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "A secret of API_TOKENS (name:secret;scope=…); the scopes listed under an operation's security are the ones it needs (docs/api.md, \"Tokens\")."},
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
// and 403 unless the token holds the operation's scope (secured); then it runs the
// operation as the token and logs it with the token's name (never the secret).
func (s *Server) authenticate(ctx huma.Context, next func(huma.Context)) {
	start := time.Now()
	scheme, secret, _ := strings.Cut(ctx.Header("Authorization"), " ")
	var (
		tok Token
		ok  bool
	)
	if strings.EqualFold(scheme, "Bearer") {
		tok, ok = s.keys.match(strings.TrimSpace(secret))
	}
	if !ok {
		ctx.SetHeader("WWW-Authenticate", `Bearer realm="threadwright"`)
		_ = huma.WriteErr(s.api, ctx, http.StatusUnauthorized, "a bearer token of API_TOKENS is required")
		s.log.Info("api request refused: no valid token", "method", ctx.Method(), "path", ctx.URL().Path, "remote", ctx.RemoteAddr())
		return
	}
	if scope := operationScope(ctx.Operation()); scope != "" && !tok.Has(scope) {
		ctx.SetHeader("WWW-Authenticate", fmt.Sprintf(`Bearer realm="threadwright", error="insufficient_scope", scope=%q`, scope))
		_ = huma.WriteErr(s.api, ctx, http.StatusForbidden, fmt.Sprintf("this token lacks the scope %s", scope))
		s.log.Info("api request refused: scope", "token", tok.Name, "scope", scope, "method", ctx.Method(), "path", ctx.URL().Path)
		return
	}
	if op := ctx.Operation(); op != nil && op.OperationID == opUpload {
		release, ok := s.gate.enter(s.api, ctx, tok.Name)
		if !ok {
			s.log.Info("api upload refused: bounds", "token", tok.Name, "status", ctx.Status())
			return
		}
		defer release()
	}
	next(huma.WithValue(ctx, actorKey{}, tok))
	s.log.Info("api request", "token", tok.Name, "method", ctx.Method(), "path", ctx.URL().Path,
		"status", ctx.Status(), "duration", time.Since(start))
}

// boundReads gives a read-only request (GET, HEAD) Config.StoreTimeout for its
// work, as a write has for each of its store calls: a store that does not answer
// in time answers 503 (storeError), not a request held while it hangs.
func (s *Server) boundReads(ctx huma.Context, next func(huma.Context)) {
	if m := ctx.Method(); m != http.MethodGet && m != http.MethodHead {
		next(ctx)
		return
	}
	c, cancel := context.WithTimeout(ctx.Context(), s.cfg.StoreTimeout)
	defer cancel()
	next(huma.WithContext(ctx, c))
}

// secured returns op needing scope: declared in its security requirement (OpenAPI
// 3.1 lets a bearer scheme list the scopes, or roles, it needs), which
// authenticate checks.
func secured(op huma.Operation, scope Scope) huma.Operation {
	op.Security = []map[string][]string{{"bearer": {string(scope)}}}
	op.Errors = append(op.Errors, http.StatusForbidden)
	slices.Sort(op.Errors)
	op.Errors = slices.Compact(op.Errors)
	return op
}

// operationScope returns the scope op needs ("" for none).
func operationScope(op *huma.Operation) Scope {
	if op == nil {
		return ""
	}
	for _, req := range op.Security {
		for _, sc := range req["bearer"] {
			return Scope(sc)
		}
	}
	return ""
}

// mayChannel returns a 403 problem unless the request's token may touch the
// threads of channel (Token.MayChannel).
func mayChannel(ctx context.Context, channel string) error {
	tok := actor(ctx)
	switch {
	case tok.MayChannel(channel):
		return nil
	case DirectMessage(channel) && (len(tok.Channels) == 0 || slices.Contains(tok.Channels, channel)):
		return huma.Error403Forbidden(fmt.Sprintf("%s is a direct message: reading or acting in it needs the scope %s", channel, ScopeConversationsReadDM))
	}
	return huma.Error403Forbidden(fmt.Sprintf("this token is limited to the channels %s", strings.Join(tok.Channels, ", ")))
}

// scrub is the transformer that runs every response body, problems included,
// through the Redactor: a body whose JSON holds a secret is decoded, each string
// scrubbed, and served as such.
func (s *Server) scrub(_ huma.Context, _ string, v any) (any, error) {
	r := s.cfg.Redactor
	if r.Len() == 0 || v == nil {
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil || !r.Contains(string(b)) {
		return v, nil
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return v, nil
	}
	return scrubValue(r, doc), nil
}

// scrubValue returns v, a decoded JSON value, with r applied to every string.
func scrubValue(r *redact.Redactor, v any) any {
	switch x := v.(type) {
	case string:
		return r.String(x)
	case []any:
		for i := range x {
			x[i] = scrubValue(r, x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = scrubValue(r, x[k])
		}
	}
	return v
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
	case errors.Is(err, context.DeadlineExceeded):
		return huma.Error503ServiceUnavailable("the store did not answer in time; try again")
	}
	s.log.Error("api: store", "what", what, "error", err)
	return huma.Error500InternalServerError("internal error")
}
