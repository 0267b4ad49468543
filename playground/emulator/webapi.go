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

// method is an entry of the dispatch table.
type method struct {
	handle   func(*request) (object, error)
	appToken bool // accepts the app-level token instead of the bot token
	readOnly bool // changes nothing: a hardened emulator answers it to GET
}

// methodTable is the Web API the emulator implements.
func (s *Server) methodTable() map[string]method {
	t := map[string]method{
		"api.test":                    {handle: s.apiTest, readOnly: true},
		"auth.test":                   {handle: s.authTest, readOnly: true},
		"chat.postMessage":            {handle: s.chatPostMessage},
		"chat.update":                 {handle: s.chatUpdate},
		"chat.delete":                 {handle: s.chatDelete},
		"chat.postEphemeral":          {handle: s.chatPostEphemeral},
		"chat.startStream":            {handle: s.chatStartStream},
		"chat.appendStream":           {handle: s.chatAppendStream},
		"chat.stopStream":             {handle: s.chatStopStream},
		"chat.getPermalink":           {handle: s.chatGetPermalink, readOnly: true},
		"conversations.replies":       {handle: s.conversationsReplies, readOnly: true},
		"conversations.history":       {handle: s.conversationsHistory, readOnly: true},
		"conversations.info":          {handle: s.conversationsInfo, readOnly: true},
		"conversations.open":          {handle: s.conversationsOpen},
		"users.info":                  {handle: s.usersInfo, readOnly: true},
		"reactions.add":               {handle: s.reactionsAdd},
		"reactions.remove":            {handle: s.reactionsRemove},
		"assistant.threads.setStatus": {handle: s.assistantThreadsSetStatus},
		"files.getUploadURLExternal":  {handle: s.filesGetUploadURLExternal},
		"files.completeUploadExternal": {
			handle: s.filesCompleteUploadExternal,
		},
		"views.open":   {handle: s.viewsOpen},
		"views.push":   {handle: s.viewsPush},
		"views.update": {handle: s.viewsUpdate},
	}
	maps.Copy(t, s.socketHub.methods())
	t["assistant.threads.setSuggestedPrompts"] = method{handle: s.assistantThreadsSetSuggestedPrompts}
	t["assistant.threads.setTitle"] = method{handle: s.assistantThreadsSetTitle}
	return t
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
func (s *Server) FailNext(method, errorCode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], fault{code: errorCode})
}

// RateLimitNext makes the next call of method answer HTTP 429 with a
// Retry-After header of retryAfter rounded up to whole seconds, as Slack's
// rate limiter does (https://docs.slack.dev/apis/web-api/rate-limits).
// slack-go returns it as *slack.RateLimitedError.
func (s *Server) RateLimitNext(method string, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], fault{rateLimit: true, retryAfter: retryAfter})
}

// SetLatency delays every later answer of method by d; zero removes the delay.
func (s *Server) SetLatency(method string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d <= 0 {
		delete(s.latency, method)
		return
	}
	s.latency[method] = d
}

// Calls returns the recorded calls of method, oldest first; an empty method
// returns every call.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
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
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("method")
	m, known := s.methods[name]
	if s.cfg.Hardened && refuseHTTPMethod(w, r, name, m, known) {
		return
	}
	params, tok, parseErr := parseRequest(r)
	if s.cfg.Hardened && !tok.header {
		tok.value = "" // a token argument is ignored: answered not_authed
	}

	if known && parseErr == nil {
		s.mu.Lock()
		delay := s.latency[name]
		s.mu.Unlock()
		if delay > 0 && !sleep(r.Context(), delay) {
			return
		}
	}

	s.mu.Lock()
	rep := s.callLocked(name, m, known, tok.value, params, parseErr)
	s.mu.Unlock()

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
func (s *Server) callLocked(name string, m method, known bool, token string, params url.Values, parseErr error) reply {
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
		err = s.checkToken(m, token)
	}
	if err == nil {
		if f, ok := s.popFaultLocked(name); ok {
			if f.rateLimit {
				s.recordLocked(name, params, "ratelimited")
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
		s.recordLocked(name, params, ae.Code)
		return reply{body: resp}
	}
	if resp == nil {
		resp = object{}
	}
	resp["ok"] = true
	s.recordLocked(name, params, "")
	return reply{body: resp}
}

func (s *Server) checkToken(m method, token string) error {
	switch {
	case token == "" && s.cfg.Hardened:
		return errCode("not_authed", "[ERROR] send the token in the Authorization header (Bearer); this emulator ignores a token argument")
	case token == "":
		return errCode("not_authed")
	case sameToken(token, s.cfg.BotToken):
		if m.appToken {
			return errCode("not_allowed_token_type")
		}
	case sameToken(token, s.cfg.AppToken):
		if !m.appToken {
			return errCode("not_allowed_token_type")
		}
	default:
		return errCode("invalid_auth")
	}
	return nil
}

func (s *Server) popFaultLocked(method string) (fault, bool) {
	q := s.faults[method]
	if len(q) == 0 {
		return fault{}, false
	}
	if len(q) == 1 {
		delete(s.faults, method)
	} else {
		s.faults[method] = q[1:]
	}
	return q[0], true
}

func (s *Server) recordLocked(method string, params url.Values, code string) {
	s.calls = append(s.calls, Call{Method: method, Params: params, Error: code, Time: s.cfg.Now()})
	s.notifyLocked(Update{Kind: UpdateCall, Method: method})
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
