package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Call is one recorded Web API call.
type Call struct {
	Method string
	// Params holds the request's arguments without the token: form fields,
	// query parameters, or a JSON body's top-level fields (strings as they
	// are, other values as their JSON text).
	Params url.Values
	// Error is the error code answered ("" when ok): "ratelimited" for an
	// injected HTTP 429, the method's own code otherwise.
	Error string
	Time  time.Time
}

// object is a JSON object answered by a Web API method.
type object = map[string]any

// apiError is an ok:false answer.
type apiError struct {
	Code     string
	Messages []string // response_metadata.messages, Slack's explanation of invalid arguments
	Errors   []string // top-level "errors", as Slack sends for invalid_blocks
}

func (e *apiError) Error() string { return e.Code }

func errCode(code string, messages ...string) *apiError {
	return &apiError{Code: code, Messages: messages}
}

// request holds the arguments of a Web API call, the token removed.
type request struct {
	params url.Values
}

func (r *request) get(name string) string { return r.params.Get(name) }

// bool reads a boolean argument the way Slack does ("true" or "1").
func (r *request) bool(name string) bool {
	v := r.params.Get(name)
	return v == "true" || v == "1"
}

// require answers invalid_arguments, like Slack, when a required argument is
// missing or empty.
func (r *request) require(names ...string) error {
	var missing []string
	for _, n := range names {
		if r.params.Get(n) == "" {
			missing = append(missing, "[ERROR] missing required field: "+n)
		}
	}
	if missing != nil {
		return errCode("invalid_arguments", missing...)
	}
	return nil
}

// channelArg finds the conversation a channel argument names (a channel ID,
// or a user ID for their IM with the bot, as chat.postMessage accepts), or
// answers channel_not_found.
func channelArg(ws *workspace, id string) (*channelState, error) {
	if ch, ok := ws.channelLocked(id); ok {
		return ch, nil
	}
	return nil, errCode("channel_not_found")
}

// ownMessageArg finds the message that the channel and ts arguments name,
// which the bot may change: message_not_found, or notOwned when it is not
// the bot's.
func ownMessageArg(ws *workspace, r *request, notOwned string) (*channelState, *record, error) {
	ch, err := channelArg(ws, r.get("channel"))
	if err != nil {
		return nil, nil, err
	}
	ts := r.get("ts")
	if ts == "" {
		return nil, nil, errCode("message_not_found")
	}
	m := ch.find(ts)
	if m == nil {
		return nil, nil, errCode("message_not_found")
	}
	if m.BotID != ws.cfg.BotID {
		return nil, nil, errCode(notOwned)
	}
	return ch, m, nil
}

// method is an entry of the dispatch table.
type method struct {
	handle   func(*request) (object, error)
	appToken bool // accepts the app-level token instead of the bot token
	readOnly bool // changes nothing: a hardened emulator answers it to GET
}

// webAPI answers the Web API (https://docs.slack.dev/apis/web-api/): it
// parses a call, checks its token, applies injected faults and latency, runs
// the method's handler with the lock held and records the call. The
// handlers are the method families' (chat, stream, conversations, files,
// views, assistant, apps.connections.open).
type webAPI struct {
	ws      *workspace
	methods map[string]method

	// Guarded by ws.mu.
	calls   []Call
	faults  map[string][]fault
	latency map[string]time.Duration
}

// newWebAPI answers the methods of the given tables.
func newWebAPI(ws *workspace, tables ...map[string]method) *webAPI {
	api := &webAPI{
		ws:      ws,
		methods: make(map[string]method),
		faults:  make(map[string][]fault),
		latency: make(map[string]time.Duration, len(ws.cfg.Latency)),
	}
	maps.Copy(api.latency, ws.cfg.Latency)
	for _, t := range tables {
		maps.Copy(api.methods, t)
	}
	return api
}

// fault is an injected failure for the next call of a method.
type fault struct {
	code       string        // answer ok:false with this error
	rateLimit  bool          // answer HTTP 429 instead
	retryAfter time.Duration // the Retry-After of a 429
}

// FailNext makes the next call of method (for example "chat.postMessage")
// answer {"ok":false,"error":errorCode}. Calls queue: FailNext twice fails
// the next two calls. Calls with a wrong token do not consume it.
func (a *webAPI) FailNext(method, errorCode string) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	a.faults[method] = append(a.faults[method], fault{code: errorCode})
}

// RateLimitNext makes the next call of method answer HTTP 429 with a
// Retry-After header of retryAfter rounded up to whole seconds, as Slack's
// rate limiter does (https://docs.slack.dev/apis/web-api/rate-limits).
// slack-go returns it as *slack.RateLimitedError.
func (a *webAPI) RateLimitNext(method string, retryAfter time.Duration) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	a.faults[method] = append(a.faults[method], fault{rateLimit: true, retryAfter: retryAfter})
}

// SetLatency delays every later answer of method by d; zero removes the delay.
func (a *webAPI) SetLatency(method string, d time.Duration) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	if d <= 0 {
		delete(a.latency, method)
		return
	}
	a.latency[method] = d
}

// Calls returns the recorded calls of method, oldest first; an empty method
// returns every call.
func (a *webAPI) Calls(method string) []Call {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	var out []Call
	for _, c := range a.calls {
		if method == "" || c.Method == method {
			c.Params = cloneValues(c.Params)
			out = append(out, c)
		}
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// serveAPI answers <base>/api/<method>. Every answer is HTTP 200, ok or not,
// as Slack's are, except an injected rate limit (HTTP 429) and, when
// Hardened, an HTTP method refused (405).
func (a *webAPI) serveAPI(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("method")
	m, known := a.methods[name]
	if a.ws.cfg.Hardened && refuseHTTPMethod(w, r, name, m, known) {
		return
	}
	params, tok, parseErr := parseRequest(r)
	if a.ws.cfg.Hardened && !tok.header {
		tok.value = "" // a token argument is ignored: answered not_authed
	}

	if known && parseErr == nil {
		a.ws.mu.Lock()
		delay := a.latency[name]
		a.ws.mu.Unlock()
		if delay > 0 && !sleep(r.Context(), delay) {
			return
		}
	}

	a.ws.mu.Lock()
	rep := a.callLocked(name, m, known, tok.value, params, parseErr)
	a.ws.mu.Unlock()

	if rep.rateLimited {
		secs := int64(math.Ceil(rep.retryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		writeJSON(w, http.StatusTooManyRequests, rep.body)
		return
	}
	writeJSON(w, http.StatusOK, rep.body)
}

// refuseHTTPMethod answers 405, and reports true, for an HTTP method other
// than GET and POST, and for GET of a method that changes something: a page
// of another site can make the browser send a GET (an image, a link).
func refuseHTTPMethod(w http.ResponseWriter, r *http.Request, name string, m method, known bool) bool {
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodPost:
		w.Header().Set("Allow", "GET, POST")
		writeJSON(w, http.StatusMethodNotAllowed, object{"ok": false, "error": "method_not_allowed"})
		return true
	case r.Method == http.MethodGet && known && !m.readOnly:
		w.Header().Set("Allow", "POST")
		writeJSON(w, http.StatusMethodNotAllowed, object{"ok": false, "error": "method_not_allowed",
			"response_metadata": object{"messages": []string{"[ERROR] " + name + " changes the workspace: use POST"}}})
		return true
	}
	return false
}

// reply is the answer to one Web API call.
type reply struct {
	body        object
	rateLimited bool
	retryAfter  time.Duration
}

// callLocked authenticates, applies injected faults, runs the method's
// handler and records the call.
func (a *webAPI) callLocked(name string, m method, known bool, token string, params url.Values, parseErr error) reply {
	var (
		resp object
		err  error
	)
	switch {
	case parseErr != nil:
		err = errCode("invalid_form_data", parseErr.Error())
	case !known:
		err = errCode("unknown_method")
	default:
		err = a.checkToken(m, token)
	}
	if err == nil {
		if f, ok := a.popFaultLocked(name); ok {
			if f.rateLimit {
				a.recordLocked(name, params, "ratelimited")
				return reply{body: object{"ok": false, "error": "ratelimited"}, rateLimited: true, retryAfter: f.retryAfter}
			}
			err = errCode(f.code)
		}
	}
	if err == nil {
		resp, err = m.handle(&request{params: params})
	}

	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = errCode("internal_error", err.Error())
		}
		resp = object{"ok": false, "error": ae.Code}
		if len(ae.Messages) > 0 {
			resp["response_metadata"] = object{"messages": ae.Messages}
		}
		if len(ae.Errors) > 0 {
			resp["errors"] = ae.Errors
		}
		if ae.Code == "unknown_method" {
			resp["req_method"] = name
		}
		a.recordLocked(name, params, ae.Code)
		return reply{body: resp}
	}
	if resp == nil {
		resp = object{}
	}
	resp["ok"] = true
	a.recordLocked(name, params, "")
	return reply{body: resp}
}

func (a *webAPI) checkToken(m method, token string) error {
	switch {
	case token == "" && a.ws.cfg.Hardened:
		return errCode("not_authed", "[ERROR] send the token in the Authorization header (Bearer); this emulator ignores a token argument")
	case token == "":
		return errCode("not_authed")
	case sameToken(token, a.ws.cfg.BotToken):
		if m.appToken {
			return errCode("not_allowed_token_type")
		}
	case sameToken(token, a.ws.cfg.AppToken):
		if !m.appToken {
			return errCode("not_allowed_token_type")
		}
	default:
		return errCode("invalid_auth")
	}
	return nil
}

func (a *webAPI) popFaultLocked(method string) (fault, bool) {
	q := a.faults[method]
	if len(q) == 0 {
		return fault{}, false
	}
	if len(q) == 1 {
		delete(a.faults, method)
	} else {
		a.faults[method] = q[1:]
	}
	return q[0], true
}

func (a *webAPI) recordLocked(method string, params url.Values, code string) {
	a.calls = append(a.calls, Call{Method: method, Params: params, Error: code, Time: a.ws.cfg.Now()})
	a.ws.notifyLocked(Update{Kind: UpdateCall, Method: method})
}

// sleep waits for d or until ctx ends, and reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to do
}

// maxBody bounds a request body.
const maxBody = 32 << 20

// callToken is a Web API call's token and where it came from.
type callToken struct {
	value  string
	header bool // from "Authorization: Bearer", not the token argument
}

// parseRequest reads a Web API request the ways Slack accepts one: a query
// string, an application/x-www-form-urlencoded or multipart/form-data body,
// or an application/json body; the token from "Authorization: Bearer" or the
// token argument (https://docs.slack.dev/apis/web-api/#basics).
func parseRequest(r *http.Request) (params url.Values, tok callToken, err error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case r.Method == http.MethodGet:
		params = r.URL.Query()
	case ct == "application/json":
		params = r.URL.Query()
		if err := parseJSONBody(r.Body, params); err != nil {
			return params, tok, fmt.Errorf("invalid JSON body: %w", err)
		}
	case ct == "multipart/form-data":
		if err := r.ParseMultipartForm(maxBody); err != nil {
			return url.Values{}, tok, err
		}
		params = r.Form
		for k, vs := range r.MultipartForm.Value {
			params[k] = vs
		}
	default:
		if err := r.ParseForm(); err != nil {
			return url.Values{}, tok, err
		}
		params = r.Form
	}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		tok = callToken{value: strings.TrimSpace(auth), header: true}
	}
	if tok.value == "" {
		tok = callToken{value: params.Get("token")}
	}
	params.Del("token")
	return params, tok, nil
}

// parseJSONBody adds a JSON object's top-level fields to params: strings as
// they are, other values as their JSON text (so "blocks" reads the same from
// a form or a JSON body).
func parseJSONBody(body io.Reader, params url.Values) error {
	data, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(data))) == 0 || string(data) == "null\n" || string(data) == "null" {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	for k, raw := range fields {
		var str string
		switch {
		case string(raw) == "null":
			continue
		case json.Unmarshal(raw, &str) == nil:
			params.Set(k, str)
		default:
			params.Set(k, string(raw))
		}
	}
	return nil
}
