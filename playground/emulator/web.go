package emulator

import (
	"bytes"
	"cmp"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The playground's page and what a person does there: the routes, GET /, and
// the POST endpoints under /ui/ (post, click, choose, submit, close,
// shortcut, assistant). playground.go describes the rules they share.

//go:embed web
var webFiles embed.FS

var pageTemplate = template.Must(template.ParseFS(webFiles, "web/index.html"))

func (p *playground) route(mux *http.ServeMux) {
	static, _ := fs.Sub(webFiles, "web") // cannot fail: the directory is embedded
	files := http.StripPrefix("/ui/static/", http.FileServerFS(static))
	mux.HandleFunc("GET /{$}", p.servePage)
	mux.HandleFunc("GET /ui/static/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
	for pattern, h := range map[string]http.HandlerFunc{
		"GET /ui/state":        p.uiState,
		"GET /ui/events":       p.uiEvents,
		"GET /ui/files/{file}": p.uiFile,
		"POST /ui/post":        p.uiPost,
		"POST /ui/click":       p.uiClick,
		"POST /ui/choose":      p.uiChoose,
		"POST /ui/submit":      p.uiSubmit,
		"POST /ui/close":       p.uiClose,
		"POST /ui/shortcut":    p.uiShortcut,
		"POST /ui/assistant":   p.uiAssistant,
		"POST /ui/messages":    p.uiMessagesTab,
		"POST /ui/session":     p.uiSession,
	} {
		mux.HandleFunc(pattern, p.requireSession(h))
	}
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		writeUIError(w, &uiError{http.StatusNotFound, "no such endpoint: " + r.Method + " " + r.URL.Path})
	})
}

// servePage answers GET /: the page, and when Hardened the session cookie
// its requests to /ui/ need. No other site may frame it.
func (p *playground) servePage(w http.ResponseWriter, _ *http.Request) {
	var buf bytes.Buffer
	data := struct{ Title, Banner string }{p.ws.cfg.Title, p.ws.cfg.Banner}
	if err := pageTemplate.Execute(&buf, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if p.ws.cfg.Hardened {
		p.setSession(w)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	_, _ = w.Write(buf.Bytes())
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
func (p *playground) uiPost(w http.ResponseWriter, r *http.Request) {
	var req uiPostRequest
	if err := decodeUI(w, r, &req); err != nil {
		writeUIError(w, err)
		return
	}
	answer, err := p.postFromUI(req)
	if err != nil {
		writeUIError(w, err)
		return
	}
	answer["ok"] = true
	writeJSON(w, http.StatusOK, answer)
}

func (p *playground) postFromUI(req uiPostRequest) (object, error) {
	text := strings.TrimSpace(req.Text)
	switch err := requireFields("user", req.User, "channel", req.Channel); {
	case err != nil:
		return nil, err
	case text == "":
		return nil, badRequest("text is empty")
	case runes(text) > MaxTextLength:
		return nil, badRequest("text is %d characters; the limit is %d", runes(text), MaxTextLength)
	}
	p.ws.mu.Lock()
	err := p.conversationForLocked(req.Channel, req.User)
	commands, users := p.ws.cfg.Commands, p.ws.membersLocked()
	p.ws.mu.Unlock()
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
		id, err := p.people.SlashCommand(req.Channel, req.User, command, args)
		if err != nil {
			return nil, err
		}
		return object{"envelope_id": id}, nil
	}
	ts, err := p.people.PostUserMessage(req.Channel, req.User, expandMentions(text, users), req.ThreadTS)
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
func (p *playground) uiClick(w http.ResponseWriter, r *http.Request) { p.uiAction(w, r, false) }

// uiChoose answers POST /ui/choose: user chooses the option with value (or
// else label) in the overflow or static select menu action_id of a message.
// Answers {"envelope_id"}.
func (p *playground) uiChoose(w http.ResponseWriter, r *http.Request) { p.uiAction(w, r, true) }

func (p *playground) uiAction(w http.ResponseWriter, r *http.Request, menu bool) {
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
		id, err = p.actFromUI(req, menu)
	}
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true, "envelope_id": id})
}

func (p *playground) actFromUI(req uiActionRequest, menu bool) (string, error) {
	p.ws.mu.Lock()
	defer p.ws.mu.Unlock()
	if err := p.conversationForLocked(req.Channel, req.User); err != nil {
		return "", err
	}
	if menu {
		return p.actions.chooseLocked(req.Channel, req.TS, req.User, req.ActionID, req.Value, req.Label)
	}
	return p.actions.clickLocked(req.Channel, req.TS, req.User, req.ActionID, req.Value)
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
func (p *playground) uiSubmit(w http.ResponseWriter, r *http.Request) {
	var req uiSubmitRequest
	err := decodeUI(w, r, &req)
	if err == nil {
		err = requireFields("user", req.User, "view_id", req.ViewID)
	}
	var id string
	if err == nil {
		id, err = p.submitFromUI(req)
	}
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true, "envelope_id": id})
}

func (p *playground) submitFromUI(req uiSubmitRequest) (string, error) {
	p.ws.mu.Lock()
	defer p.ws.mu.Unlock()
	v, err := p.userViewLocked(req.ViewID, req.User)
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
	return p.modals.submitViewLocked(v, req.User, values)
}

// uiViewRequest is the body of POST /ui/close.
type uiViewRequest struct {
	User   string `json:"user"`
	ViewID string `json:"view_id"`
}

// uiClose answers POST /ui/close: user cancels the view. A view with
// notify_on_close also sends the bot a view_closed payload
// (https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload#view_closed).
func (p *playground) uiClose(w http.ResponseWriter, r *http.Request) {
	var req uiViewRequest
	err := decodeUI(w, r, &req)
	if err == nil {
		err = requireFields("user", req.User, "view_id", req.ViewID)
	}
	if err == nil {
		err = p.closeFromUI(req)
	}
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true})
}

func (p *playground) closeFromUI(req uiViewRequest) error {
	p.ws.mu.Lock()
	defer p.ws.mu.Unlock()
	v, err := p.userViewLocked(req.ViewID, req.User)
	if err != nil {
		return err
	}
	return p.modals.closeLocked(v, p.ws.users[req.User])
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
func (p *playground) uiShortcut(w http.ResponseWriter, r *http.Request) {
	var req uiShortcutRequest
	err := decodeUI(w, r, &req)
	if err == nil {
		err = requireFields("user", req.User, "channel", req.Channel, "ts", req.TS, "callback_id", req.CallbackID)
	}
	var id string
	if err == nil {
		p.ws.mu.Lock()
		err = p.conversationForLocked(req.Channel, req.User)
		known := slices.ContainsFunc(p.ws.cfg.Shortcuts, func(sc Shortcut) bool { return sc.CallbackID == req.CallbackID })
		p.ws.mu.Unlock()
		if err == nil && !known {
			err = badRequest("the app has no message shortcut %q", req.CallbackID)
		}
	}
	if err == nil {
		id, err = p.people.MessageShortcut(req.Channel, req.TS, req.User, req.CallbackID)
	}
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true, "envelope_id": id})
}

// viewerRequest is the body of the requests that open the assistant view or the
// Messages tab: who opens it, and the channel they view ("" for none).
type viewerRequest struct {
	User    string `json:"user"`
	Context string `json:"context"`
}

// decodeViewer reads a viewerRequest, user required; on a bad one it writes the
// error and returns false.
func decodeViewer(w http.ResponseWriter, r *http.Request) (viewerRequest, bool) {
	var req viewerRequest
	err := decodeUI(w, r, &req)
	if err == nil {
		err = requireFields("user", req.User)
	}
	if err != nil {
		writeUIError(w, err)
		return req, false
	}
	return req, true
}

// uiAssistant answers POST /ui/assistant, {"user", "context"}: user opens the
// assistant view while viewing channel context ("" for none); the IM is opened on
// first use. Answers {"channel", "thread_ts"} of the new assistant thread.
func (p *playground) uiAssistant(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeViewer(w, r)
	if !ok {
		return
	}
	p.ws.mu.Lock()
	err := p.conversationForLocked(dmID(req.User), req.User)
	if err == nil && req.Context != "" {
		err = p.conversationForLocked(req.Context, req.User)
	}
	p.ws.mu.Unlock()
	if err != nil {
		writeUIError(w, err)
		return
	}
	if strings.HasPrefix(req.Context, "D") {
		req.Context = "" // Slack sends no context for a DM
	}
	channel, ts, err := p.assist.StartAssistantThread(req.User, req.Context)
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true, "channel": channel, "thread_ts": ts})
}

// uiMessagesTab answers POST /ui/messages, {"user", "context"}: user opens the app's
// Messages tab (the agent view), having viewed channel context last ("" for none):
// app_context_changed with that channel, then app_home_opened.
func (p *playground) uiMessagesTab(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeViewer(w, r)
	if !ok {
		return
	}
	p.ws.mu.Lock()
	err := p.conversationForLocked(dmID(req.User), req.User)
	p.ws.mu.Unlock()
	if err == nil && req.Context != "" && !strings.HasPrefix(req.Context, "D") {
		err = p.agent.ChangeAppContext(req.User, ContextEntity{Type: EntityChannel, Value: req.Context})
	}
	var channel string
	if err == nil {
		channel, err = p.agent.OpenMessagesTab(req.User)
	}
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true, "channel": channel})
}

// uiSession answers POST /ui/session, {"user", "channel", "thread_ts", "action",
// "title"}: user presses the native Stop of the thread's agent session (action
// "stop": agent_session_stopped) or renames it (action "rename", with title:
// agent_session_title_changed).
func (p *playground) uiSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		User     string `json:"user"`
		Channel  string `json:"channel"`
		ThreadTS string `json:"thread_ts"`
		Action   string `json:"action"`
		Title    string `json:"title"`
	}
	if err := decodeUI(w, r, &req); err != nil {
		writeUIError(w, err)
		return
	}
	if err := requireFields("user", req.User, "channel", req.Channel, "thread_ts", req.ThreadTS); err != nil {
		writeUIError(w, err)
		return
	}
	p.ws.mu.Lock()
	err := p.conversationForLocked(req.Channel, req.User)
	p.ws.mu.Unlock()
	if err == nil {
		switch req.Action {
		case "stop":
			_, err = p.agent.StopSession(req.Channel, req.ThreadTS, req.User)
		case "rename":
			if err = requireFields("title", strings.TrimSpace(req.Title)); err == nil {
				err = p.agent.RenameSessionAs(req.Channel, req.ThreadTS, req.User, strings.TrimSpace(req.Title))
			}
		default:
			err = &uiError{http.StatusBadRequest, "action must be stop or rename"}
		}
	}
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true})
}
