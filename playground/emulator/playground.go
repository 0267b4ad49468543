package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// The playground: a Slack-like page at PageURL (GET /) with its static files
// under /ui/static/, and small JSON endpoints under /ui/ that act through the
// same code as the test methods (PostUserMessage, SlashCommand, ClickButton,
// ChooseMenuItem, SubmitView, MessageShortcut). Every request names the
// acting user, a person of the workspace (not a bot). POSTs take a JSON body
// and must say Content-Type: application/json, so that another web site
// cannot post to the emulator without a CORS preflight, which it never
// grants. Answers are {"ok": true, ...}, or {"ok": false, "error": message}
// with status 400 for bad input, 404 for something that does not exist
// (a channel, user, message, button or view) and 503 once the server is
// closed. When Config.Hardened, /ui/ answers 403 to a request without the
// session cookie the page sets.
//
// This file holds what every endpoint shares; playground_state.go answers
// what the page shows, web.go the page itself and what a person does there.

// maxUIBody bounds the JSON body of a playground request.
const maxUIBody = 1 << 20

// playground serves the page and its /ui/ endpoints, acting through the
// parts of the emulator that the test methods use.
type playground struct {
	ws      *workspace
	hub     *socketHub
	modals  *modals
	files   *filesAPI
	assist  *assistantAPI
	agent   *agentAPI
	actions *blockActions
	people  *people

	port    string // names the session cookie
	session string // the session cookie's value when Hardened
}

// sessionCookieName names the playground's session cookie. Cookies do not
// keep ports apart, so the name has the port: two playgrounds on one
// machine keep their own.
func (p *playground) sessionCookieName() string { return "threadwright_playground_" + p.port }

// setSession gives the browser the session cookie of this run.
func (p *playground) setSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: p.sessionCookieName(), Value: p.session, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
}

// requireSession refuses a playground request without this run's session
// cookie when the emulator is hardened.
func (p *playground) requireSession(h http.HandlerFunc) http.HandlerFunc {
	if !p.ws.cfg.Hardened {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(p.sessionCookieName())
		if err != nil || !sameToken(c.Value, p.session) {
			writeUIError(w, &uiError{http.StatusForbidden, "no playground session; reload the page"})
			return
		}
		h(w, r)
	}
}

// uiError is a playground answer other than 200.
type uiError struct {
	status int
	msg    string
}

func (e *uiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &uiError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func writeUIError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var ue *uiError
	switch {
	case errors.As(err, &ue):
		status = ue.status
	case errors.Is(err, ErrChannelNotFound), errors.Is(err, ErrUserNotFound), errors.Is(err, ErrMessageNotFound),
		errors.Is(err, ErrActionNotFound), errors.Is(err, ErrViewNotFound):
		status = http.StatusNotFound
	case errors.Is(err, ErrAmbiguousLabel):
		status = http.StatusBadRequest
	case errors.Is(err, ErrClosed):
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, object{"ok": false, "error": err.Error()})
}

// decodeUI reads a playground request's JSON body into v.
func decodeUI(w http.ResponseWriter, r *http.Request, v any) error {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		return badRequest("Content-Type must be application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxUIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("invalid JSON body: %v", err)
	}
	return nil
}

// requireFields checks that none of the named fields (name, value, name,
// value, ...) is empty.
func requireFields(nameValues ...string) error {
	for i := 0; i+1 < len(nameValues); i += 2 {
		if strings.TrimSpace(nameValues[i+1]) == "" {
			return badRequest("%s is required", nameValues[i])
		}
	}
	return nil
}

// personLocked finds the acting user: a member who is not a bot.
func (p *playground) personLocked(id string) (User, error) {
	u, ok := p.ws.users[id]
	switch {
	case !ok:
		return u, fmt.Errorf("%s: %w", id, ErrUserNotFound)
	case u.IsBot:
		return u, badRequest("%s is a bot; act as a person", id)
	}
	return u, nil
}

// dmID is the ID of the IM between user and the bot that the playground
// opens when the configuration has none (as conversations.open names it).
func dmID(user string) string { return "D" + strings.TrimPrefix(user, "U") }

// visibleLocked reports whether user can see the conversation: every
// channel, and only their own IM.
func visibleLocked(ch *channelState, user string) bool {
	return ch.Type != ChannelTypeIM || ch.User == user
}

// conversationForLocked finds a conversation the acting user can use,
// opening their IM with the bot on first use.
func (p *playground) conversationForLocked(channel, user string) error {
	if _, err := p.personLocked(user); err != nil {
		return err
	}
	ch, ok := p.ws.channels[channel]
	switch {
	case !ok && channel == dmID(user):
		p.ws.addChannelLocked(Channel{ID: channel, Type: ChannelTypeIM, User: user})
	case !ok || !visibleLocked(ch, user):
		return fmt.Errorf("%s: %w", channel, ErrChannelNotFound)
	}
	return nil
}

// userViewLocked finds an open view of user.
func (p *playground) userViewLocked(viewID, user string) (*View, error) {
	if _, err := p.personLocked(user); err != nil {
		return nil, err
	}
	v, ok := p.modals.views[viewID]
	if !ok || !v.Open || v.User != user {
		return nil, fmt.Errorf("%s: %w", viewID, ErrViewNotFound)
	}
	return v, nil
}
