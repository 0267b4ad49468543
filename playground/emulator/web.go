package emulator

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"mime"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
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
// session cookie the page sets (see guard.go).

//go:embed web
var webFiles embed.FS

var pageTemplate = template.Must(template.ParseFS(webFiles, "web/index.html"))

// maxUIBody bounds the JSON body of a playground request.
const maxUIBody = 1 << 20

// uiHeartbeat is the time between comments on the event stream, which keep
// proxies and browsers from closing an idle stream.
const uiHeartbeat = 15 * time.Second

// PageURL returns the address of the browser playground,
// "http://127.0.0.1:port/": a Slack-like channel view of the workspace
// where a person can talk to the bot, click its buttons and fill its modals.
// Add "?user=U0BOB" to act as another member.
func (s *Server) PageURL() string { return s.base + "/" }

func (s *Server) routeWeb(mux *http.ServeMux) {
	static, _ := fs.Sub(webFiles, "web") // cannot fail: the directory is embedded
	files := http.StripPrefix("/ui/static/", http.FileServerFS(static))
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /ui/static/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
	for pattern, h := range map[string]http.HandlerFunc{
		"GET /ui/state":        s.uiState,
		"GET /ui/events":       s.uiEvents,
		"GET /ui/files/{file}": s.uiFile,
		"POST /ui/post":        s.uiPost,
		"POST /ui/click":       s.uiClick,
		"POST /ui/choose":      s.uiChoose,
		"POST /ui/submit":      s.uiSubmit,
		"POST /ui/close":       s.uiClose,
		"POST /ui/shortcut":    s.uiShortcut,
		"POST /ui/assistant":   s.uiAssistant,
	} {
		mux.HandleFunc(pattern, s.requireSession(h))
	}
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		writeUIError(w, &uiError{http.StatusNotFound, "no such endpoint: " + r.Method + " " + r.URL.Path})
	})
}

// servePage answers GET /: the page, and when Hardened the session cookie
// its requests to /ui/ need. No other site may frame it.
func (s *Server) servePage(w http.ResponseWriter, _ *http.Request) {
	var buf bytes.Buffer
	data := struct{ Title, Banner string }{s.cfg.Title, s.cfg.Banner}
	if err := pageTemplate.Execute(&buf, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if s.cfg.Hardened {
		s.setSession(w)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	_, _ = w.Write(buf.Bytes())
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
func (s *Server) personLocked(id string) (User, error) {
	u, ok := s.users[id]
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
func (s *Server) conversationForLocked(channel, user string) error {
	if _, err := s.personLocked(user); err != nil {
		return err
	}
	ch, ok := s.channels[channel]
	switch {
	case !ok && channel == dmID(user):
		s.addChannelLocked(Channel{ID: channel, Type: ChannelTypeIM, User: user})
	case !ok || !visibleLocked(ch, user):
		return fmt.Errorf("%s: %w", channel, ErrChannelNotFound)
	}
	return nil
}

// The state snapshot, as GET /ui/state answers it.
type (
	uiSnapshot struct {
		Title     string                 `json:"title"`
		Team      string                 `json:"team"`
		Banner    string                 `json:"banner,omitempty"`
		Bot       uiUser                 `json:"bot"`
		User      string                 `json:"user"`
		Users     []uiUser               `json:"users"`
		Channels  []uiChannel            `json:"channels"`
		Messages  map[string][]uiMessage `json:"messages"`
		Statuses  []uiStatus             `json:"statuses"`
		View      *uiView                `json:"view"`
		Files     []uiFile               `json:"files"`
		Commands  []string               `json:"commands"`
		Shortcuts []Shortcut             `json:"shortcuts"`
		Connected int                    `json:"connected"`
		// Assistant are the person's assistant threads (assistant.go).
		Assistant []AssistantThread `json:"assistant"`
	}
	uiUser struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		RealName string `json:"real_name"`
		IsBot    bool   `json:"is_bot"`
	}
	uiChannel struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Type   string `json:"type"`
		Latest string `json:"latest,omitempty"` // ts of the newest visible message
		New    bool   `json:"new,omitempty"`    // an IM opened on first use
	}
	uiMessage struct {
		TS          string          `json:"ts"`
		ThreadTS    string          `json:"thread_ts,omitempty"`
		User        string          `json:"user,omitempty"`
		BotID       string          `json:"bot_id,omitempty"`
		Username    string          `json:"username,omitempty"`
		Subtype     string          `json:"subtype,omitempty"`
		Text        string          `json:"text"`
		Blocks      json.RawMessage `json:"blocks,omitempty"`
		Attachments json.RawMessage `json:"attachments,omitempty"`
		Files       []uiFile        `json:"files,omitempty"`
		Reactions   []uiReaction    `json:"reactions,omitempty"`
		ReplyCount  int             `json:"reply_count,omitempty"`
		Broadcast   bool            `json:"broadcast,omitempty"`
		Edited      bool            `json:"edited,omitempty"`
		Streaming   bool            `json:"streaming,omitempty"`
		Markdown    bool            `json:"markdown,omitempty"` // Text is markdown (a chat.startStream message)
		Ephemeral   bool            `json:"ephemeral,omitempty"`
		// Tasks are the streamed message's task cards, shown as a plan titled
		// PlanTitle when TaskDisplayMode is "plan".
		Tasks           []Task `json:"tasks,omitempty"`
		TaskDisplayMode string `json:"task_display_mode,omitempty"`
		PlanTitle       string `json:"plan_title,omitempty"`
	}
	uiReaction struct {
		Name  string   `json:"name"`
		Users []string `json:"users"`
	}
	uiFile struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Title    string `json:"title"`
		Size     int    `json:"size"`
		Channel  string `json:"channel,omitempty"`
		ThreadTS string `json:"thread_ts,omitempty"`
	}
	uiStatus struct {
		Channel  string `json:"channel"`
		ThreadTS string `json:"thread_ts"`
		Status   string `json:"status"`
	}
	uiView struct {
		ID   string          `json:"id"`
		View json.RawMessage `json:"view"`
		// Submitting is true while the bot has not acknowledged its submission.
		Submitting bool `json:"submitting"`
		// Errors are the bot's messages under the view's inputs (View.Errors).
		Errors map[string]string `json:"errors,omitempty"`
	}
)

func toUIFile(f File) uiFile {
	return uiFile{ID: f.ID, Name: f.Name, Title: f.Title, Size: len(f.Content), Channel: f.Channel, ThreadTS: f.ThreadTS}
}

func toUIMessage(m Message, markdown bool) uiMessage {
	out := uiMessage{
		TS: m.TS, ThreadTS: m.ThreadTS, User: m.User, BotID: m.BotID, Username: m.Username, Subtype: m.Subtype,
		Text: m.Text, Blocks: m.Blocks, Attachments: m.Attachments, ReplyCount: m.ReplyCount,
		Broadcast: m.ReplyBroadcast, Edited: m.Edited, Streaming: m.Streaming, Markdown: markdown, Ephemeral: m.Ephemeral,
		Tasks: m.Tasks, TaskDisplayMode: m.TaskDisplayMode, PlanTitle: m.PlanTitle,
	}
	for _, f := range m.Files {
		out.Files = append(out.Files, toUIFile(f))
	}
	for _, r := range m.Reactions {
		out.Reactions = append(out.Reactions, uiReaction(r))
	}
	return out
}

// uiState answers GET /ui/state?user=U…[&channel=C…]: what the page shows
// to user (by default the first person of the workspace). With channel, the
// messages of that conversation only; otherwise of every conversation the
// user sees. Messages are in ts order, thread replies and the user's
// ephemeral messages included.
func (s *Server) uiState(w http.ResponseWriter, r *http.Request) {
	snap, err := s.snapshotForUI(r.URL.Query().Get("user"), r.URL.Query().Get("channel"))
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

func (s *Server) snapshotForUI(user, only string) (*uiSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := &uiSnapshot{
		Title:     s.cfg.Title,
		Team:      s.cfg.TeamName,
		Banner:    s.cfg.Banner,
		Bot:       uiUser{ID: s.cfg.BotUserID, Name: s.cfg.BotName, RealName: s.cfg.BotName, IsBot: true},
		Messages:  map[string][]uiMessage{},
		Statuses:  []uiStatus{},
		Files:     []uiFile{},
		Commands:  s.cfg.Commands,
		Shortcuts: s.cfg.Shortcuts,
		Connected: len(s.conns),
	}
	for _, id := range s.userIDs {
		u := s.users[id]
		snap.Users = append(snap.Users, uiUser{ID: u.ID, Name: u.Name, RealName: u.RealName, IsBot: u.IsBot})
		if user == "" && !u.IsBot {
			user = u.ID
		}
	}
	if _, err := s.personLocked(user); err != nil {
		return nil, err
	}
	snap.User = user
	if only != "" && only != dmID(user) {
		if ch, ok := s.channels[only]; !ok || !visibleLocked(ch, user) {
			return nil, fmt.Errorf("%s: %w", only, ErrChannelNotFound)
		}
	}

	hasDM := false
	for _, id := range s.channelIDs {
		ch := s.channels[id]
		if !visibleLocked(ch, user) {
			continue
		}
		hasDM = hasDM || ch.Type == ChannelTypeIM
		var msgs []uiMessage
		latest := ""
		for _, m := range ch.messages {
			if m.deleted {
				continue
			}
			latest = m.TS
			if only == "" || only == id {
				msgs = append(msgs, toUIMessage(ch.snapshot(m), m.streamed))
			}
		}
		if only == "" || only == id {
			for _, m := range ch.ephemerals {
				if !m.deleted && m.Recipient == user {
					msgs = append(msgs, toUIMessage(m.clone(), false))
				}
			}
			slices.SortStableFunc(msgs, func(a, b uiMessage) int {
				ta, _ := tsMicros(a.TS)
				tb, _ := tsMicros(b.TS)
				return cmp.Compare(ta, tb)
			})
			if msgs == nil {
				msgs = []uiMessage{}
			}
			snap.Messages[id] = msgs
		}
		snap.Channels = append(snap.Channels, uiChannel{ID: id, Name: ch.Name, Type: ch.Type, Latest: latest})
	}
	if !hasDM {
		snap.Channels = append(snap.Channels, uiChannel{ID: dmID(user), Type: ChannelTypeIM, New: true})
		if only == "" || only == dmID(user) {
			snap.Messages[dmID(user)] = []uiMessage{}
		}
	}

	now := s.cfg.Now()
	for key, st := range s.statuses {
		if st.status != "" && now.Sub(st.setAt) < statusLifetime {
			snap.Statuses = append(snap.Statuses, uiStatus{Channel: key.channel, ThreadTS: key.threadTS, Status: st.status})
		}
	}
	slices.SortFunc(snap.Statuses, func(a, b uiStatus) int {
		return cmp.Or(cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.ThreadTS, b.ThreadTS))
	})
	snap.Assistant = s.assistantThreadsLocked(user)
	for _, id := range s.fileOrder {
		if f := s.files[id]; f.Complete && f.Content != nil {
			snap.Files = append(snap.Files, toUIFile(*f))
		}
	}
	if v := s.openViewLocked(user); v != nil {
		snap.View = &uiView{ID: v.ID, View: slices.Clone(v.View), Submitting: s.submittingLocked(v.ID), Errors: maps.Clone(v.Errors)}
	}
	return snap, nil
}

// uiPostRequest is the body of POST /ui/post.
type uiPostRequest struct {
	User     string `json:"user"`
	Channel  string `json:"channel"`
	Text     string `json:"text"`
	ThreadTS string `json:"thread_ts"`
}

// uiPost answers POST /ui/post: a message typed by user, where "@name"
// becomes a mention of that member (<@U…>), or, for text that starts with
// one of Config.Commands, that slash command. Like Slack, it refuses other
// commands and commands in threads. Answers {"ts"} or {"envelope_id"}.
func (s *Server) uiPost(w http.ResponseWriter, r *http.Request) {
	var req uiPostRequest
	if err := decodeUI(w, r, &req); err != nil {
		writeUIError(w, err)
		return
	}
	answer, err := s.postFromUI(req)
	if err != nil {
		writeUIError(w, err)
		return
	}
	answer["ok"] = true
	writeJSON(w, http.StatusOK, answer)
}

func (s *Server) postFromUI(req uiPostRequest) (object, error) {
	text := strings.TrimSpace(req.Text)
	switch err := requireFields("user", req.User, "channel", req.Channel); {
	case err != nil:
		return nil, err
	case text == "":
		return nil, badRequest("text is empty")
	case runes(text) > MaxTextLength:
		return nil, badRequest("text is %d characters; the limit is %d", runes(text), MaxTextLength)
	}
	s.mu.Lock()
	err := s.conversationForLocked(req.Channel, req.User)
	commands, users := s.cfg.Commands, make([]User, 0, len(s.userIDs))
	for _, id := range s.userIDs {
		users = append(users, s.users[id])
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}

	if command, args, ok := slashCommand(text); ok {
		switch {
		case !slices.Contains(commands, command):
			return nil, badRequest("%s is not a valid command. In Slack, all messages that start with \"/\" are interpreted as commands.", command)
		case req.ThreadTS != "":
			return nil, badRequest("%s is not supported in threads. Sorry!", command)
		}
		id, err := s.SlashCommand(req.Channel, req.User, command, args)
		if err != nil {
			return nil, err
		}
		return object{"envelope_id": id}, nil
	}
	ts, err := s.PostUserMessage(req.Channel, req.User, expandMentions(text, users), req.ThreadTS)
	if err != nil {
		return nil, err
	}
	return object{"ts": ts}, nil
}

// slashCommand splits "/command args" as Slack's client does.
func slashCommand(text string) (command, args string, ok bool) {
	if !strings.HasPrefix(text, "/") || strings.HasPrefix(text, "//") {
		return "", "", false
	}
	end := strings.IndexFunc(text, unicode.IsSpace)
	if end < 0 {
		return text, "", len(text) > 1
	}
	return text[:end], strings.TrimSpace(text[end:]), end > 1
}

// atName matches "@name" at the start of the text or after a space or an
// opening bracket or quote (so that e-mail addresses stay as they are).
var atName = regexp.MustCompile(`(^|[\s(\[{"'])@([A-Za-z0-9][A-Za-z0-9._-]*)`)

// expandMentions turns "@name" into <@U…> for each member named name
// (case-insensitive), the way Slack's composer does when a name is chosen.
// Trailing dots, dashes and underscores are punctuation, not the name.
func expandMentions(text string, users []User) string {
	return atName.ReplaceAllStringFunc(text, func(match string) string {
		sub := atName.FindStringSubmatch(match)
		name, trail := sub[2], ""
		for name != "" {
			for _, u := range users {
				if strings.EqualFold(u.Name, name) {
					return sub[1] + "<@" + u.ID + ">" + trail
				}
			}
			last := name[len(name)-1]
			if last != '.' && last != '-' && last != '_' {
				break
			}
			name, trail = name[:len(name)-1], string(last)+trail
		}
		return match
	})
}

// uiActionRequest is the body of POST /ui/click and POST /ui/choose.
type uiActionRequest struct {
	User     string `json:"user"`
	Channel  string `json:"channel"`
	TS       string `json:"ts"`
	ActionID string `json:"action_id"`
	// Value picks among elements with the same action_id (click) or names
	// the option (choose); Label names the option by its text instead.
	Value string `json:"value"`
	Label string `json:"label"`
}

// uiClick answers POST /ui/click: user clicks the button action_id (and
// value, when given) of a message or of an ephemeral message shown to them.
// Answers {"envelope_id"}.
func (s *Server) uiClick(w http.ResponseWriter, r *http.Request) { s.uiAction(w, r, false) }

// uiChoose answers POST /ui/choose: user chooses the option with value (or
// else label) in the overflow or static select menu action_id of a message.
// Answers {"envelope_id"}.
func (s *Server) uiChoose(w http.ResponseWriter, r *http.Request) { s.uiAction(w, r, true) }

func (s *Server) uiAction(w http.ResponseWriter, r *http.Request, menu bool) {
	var req uiActionRequest
	err := decodeUI(w, r, &req)
	if err == nil {
		err = requireFields("user", req.User, "channel", req.Channel, "ts", req.TS, "action_id", req.ActionID)
	}
	if err == nil && menu && req.Value == "" && req.Label == "" {
		err = badRequest("value or label is required")
	}
	var id string
	if err == nil {
		id, err = s.actFromUI(req, menu)
	}
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true, "envelope_id": id})
}

func (s *Server) actFromUI(req uiActionRequest, menu bool) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.conversationForLocked(req.Channel, req.User); err != nil {
		return "", err
	}
	ch, u, m, ephemeral, err := s.messageForLocked(req.Channel, req.TS, req.User)
	if err != nil {
		return "", err
	}
	for _, el := range elementsOf(m.Blocks) {
		if el.ActionID != req.ActionID {
			continue
		}
		if !menu && el.Type == "button" && (req.Value == "" || req.Value == el.Value) {
			return s.blockActionLocked(ch, u, m, ephemeral, el.buttonAction(), nil)
		}
		if menu && (el.Type == "overflow" || el.Type == "static_select") {
			for _, opt := range el.options() {
				if req.Value != "" && opt.Value == req.Value || req.Value == "" && strings.TrimSpace(opt.Text.Text) == strings.TrimSpace(req.Label) {
					action, state := el.menuAction(opt)
					return s.blockActionLocked(ch, u, m, ephemeral, action, state)
				}
			}
		}
	}
	if !menu {
		if id, ok, err := s.clickFeedbackLocked(ch, u, m, ephemeral, req.ActionID, req.Value); ok {
			return id, err
		}
	}
	kind := "button"
	if menu {
		kind = "menu option"
	}
	return "", fmt.Errorf("%s %s in %s/%s: %w", kind, req.ActionID, req.Channel, req.TS, ErrActionNotFound)
}

// uiSubmitRequest is the body of POST /ui/submit.
type uiSubmitRequest struct {
	User   string `json:"user"`
	ViewID string `json:"view_id"`
	// Values holds the text typed into each plain_text_input:
	// block_id -> action_id -> text.
	Values map[string]map[string]string `json:"values"`
}

// uiSubmit answers POST /ui/submit: user submits the view they have open,
// with the text of its inputs; a required input left empty is refused, as
// Slack's client does. Answers {"envelope_id"}.
func (s *Server) uiSubmit(w http.ResponseWriter, r *http.Request) {
	var req uiSubmitRequest
	err := decodeUI(w, r, &req)
	if err == nil {
		err = requireFields("user", req.User, "view_id", req.ViewID)
	}
	var id string
	if err == nil {
		id, err = s.submitFromUI(req)
	}
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true, "envelope_id": id})
}

func (s *Server) submitFromUI(req uiSubmitRequest) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.userViewLocked(req.ViewID, req.User)
	if err != nil {
		return "", err
	}
	values := object{}
	for _, in := range textInputs(v.View) {
		text := req.Values[in.blockID][in.actionID]
		limit := cmp.Or(in.maxLength, maxPlainTextInputLength)
		switch {
		case strings.TrimSpace(text) == "" && !in.optional:
			return "", badRequest("%q is required", cmp.Or(in.label, in.blockID))
		case runes(text) > limit:
			return "", badRequest("%q is %d characters; the limit is %d", cmp.Or(in.label, in.blockID), runes(text), limit)
		}
		state := object{"type": "plain_text_input", "value": text}
		if text == "" {
			state["value"] = nil // as Slack sends an empty optional input
		}
		values[in.blockID] = object{in.actionID: state}
	}
	return s.submitViewLocked(v, req.User, values)
}

// userViewLocked finds an open view of user.
func (s *Server) userViewLocked(viewID, user string) (*View, error) {
	if _, err := s.personLocked(user); err != nil {
		return nil, err
	}
	v, ok := s.views[viewID]
	if !ok || !v.Open || v.User != user {
		return nil, fmt.Errorf("%s: %w", viewID, ErrViewNotFound)
	}
	return v, nil
}

// uiViewRequest is the body of POST /ui/close.
type uiViewRequest struct {
	User   string `json:"user"`
	ViewID string `json:"view_id"`
}

// uiClose answers POST /ui/close: user cancels the view. A view with
// notify_on_close also sends the bot a view_closed payload
// (https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload#view_closed).
func (s *Server) uiClose(w http.ResponseWriter, r *http.Request) {
	var req uiViewRequest
	err := decodeUI(w, r, &req)
	if err == nil {
		err = requireFields("user", req.User, "view_id", req.ViewID)
	}
	if err == nil {
		err = s.closeFromUI(req)
	}
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true})
}

func (s *Server) closeFromUI(req uiViewRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.userViewLocked(req.ViewID, req.User)
	if err != nil {
		return err
	}
	v.Open = false
	s.notifyLocked(Update{Kind: UpdateView})
	var flags struct {
		NotifyOnClose bool `json:"notify_on_close"`
	}
	if json.Unmarshal(v.View, &flags) != nil || !flags.NotifyOnClose {
		return nil
	}
	payload := object{
		"type":                  "view_closed",
		"team":                  s.in.teamObject(),
		"user":                  s.in.userObject(s.users[req.User]),
		"api_app_id":            s.cfg.AppID,
		"token":                 s.cfg.VerificationToken,
		"view":                  s.wireView(v, nil),
		"is_cleared":            false,
		"enterprise":            nil,
		"is_enterprise_install": false,
	}
	_, err = s.in.sendLocked(EnvelopeInteractive, payload, nil)
	return err
}

// uiShortcutRequest is the body of POST /ui/shortcut.
type uiShortcutRequest struct {
	User       string `json:"user"`
	Channel    string `json:"channel"`
	TS         string `json:"ts"`
	CallbackID string `json:"callback_id"`
}

// uiShortcut answers POST /ui/shortcut: user runs the message shortcut
// callback_id (one of Config.Shortcuts) on a message. Answers {"envelope_id"}.
func (s *Server) uiShortcut(w http.ResponseWriter, r *http.Request) {
	var req uiShortcutRequest
	err := decodeUI(w, r, &req)
	if err == nil {
		err = requireFields("user", req.User, "channel", req.Channel, "ts", req.TS, "callback_id", req.CallbackID)
	}
	var id string
	if err == nil {
		s.mu.Lock()
		err = s.conversationForLocked(req.Channel, req.User)
		known := slices.ContainsFunc(s.cfg.Shortcuts, func(sc Shortcut) bool { return sc.CallbackID == req.CallbackID })
		s.mu.Unlock()
		if err == nil && !known {
			err = badRequest("the app has no message shortcut %q", req.CallbackID)
		}
	}
	if err == nil {
		id, err = s.MessageShortcut(req.Channel, req.TS, req.User, req.CallbackID)
	}
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true, "envelope_id": id})
}

// uiFile answers GET /ui/files/{file}: an uploaded file's content as an
// attachment under its name.
func (s *Server) uiFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.files[r.PathValue("file")]
	var name string
	var content []byte
	if ok && f.Complete {
		name, content = f.Name, f.Content
	}
	s.mu.Unlock()
	if content == nil {
		writeUIError(w, &uiError{http.StatusNotFound, "file " + r.PathValue("file") + " not found"})
		return
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown":
		ctype = "text/markdown; charset=utf-8"
	case ".txt":
		ctype = "text/plain; charset=utf-8"
	case "":
		ctype = http.DetectContentType(content)
	}
	disposition := mime.FormatMediaType("attachment", map[string]string{"filename": name})
	if disposition == "" {
		disposition = "attachment"
	}
	w.Header().Set("Content-Type", cmp.Or(ctype, "application/octet-stream"))
	w.Header().Set("Content-Disposition", disposition)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(content) // content is never changed after upload
}

// uiEvent is what the event stream sends for a change: the page reloads its
// state in answer.
type uiEvent struct {
	Kind     string `json:"kind"`
	Channel  string `json:"channel,omitempty"`
	TS       string `json:"ts,omitempty"`
	ThreadTS string `json:"thread_ts,omitempty"`
}

// uiKinds are the kinds of Update the page shows.
var uiKinds = map[string]bool{
	UpdateMessage: true, UpdateMessageChanged: true, UpdateMessageDeleted: true, UpdateEphemeral: true,
	UpdateStatus: true, UpdateView: true, UpdateConnection: true, UpdateClosed: true,
}

// uiEvents answers GET /ui/events with server-sent events
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): one
// "data: {kind, channel, ts, thread_ts}" event per change the page shows,
// from Subscribe, and a comment every 15 s. It ends when the client goes or
// the server closes (after a "closed" event).
func (s *Server) uiEvents(w http.ResponseWriter, r *http.Request) {
	updates, cancel := s.Subscribe()
	defer cancel()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 1000\n: connected\n\n"); err != nil || rc.Flush() != nil {
		return
	}
	heartbeat := time.NewTicker(uiHeartbeat)
	defer heartbeat.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-heartbeat.C:
			_, err = fmt.Fprint(w, ": ping\n\n")
		case u, ok := <-updates:
			if !ok {
				return
			}
			if !uiKinds[u.Kind] {
				continue
			}
			data, _ := json.Marshal(uiEvent{Kind: u.Kind, Channel: u.Channel, TS: u.TS, ThreadTS: u.ThreadTS}) // strings only
			_, err = fmt.Fprintf(w, "data: %s\n\n", data)
		}
		if err != nil || rc.Flush() != nil {
			return
		}
	}
}
