package emulator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

// What the playground page shows: GET /ui/state, a snapshot of the workspace
// as a person sees it; GET /ui/events, a stream that tells the page when to
// reload it; GET /ui/files/{file}, a shared file's download.

// uiHeartbeat is the time between comments on the event stream, which keep
// proxies and browsers from closing an idle stream.
const uiHeartbeat = 15 * time.Second

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
		// Sessions are the agent sessions of the threads (assistant.go).
		Sessions []AgentSession `json:"sessions"`
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

// uiState answers GET /ui/state?user=U…[&channel=C…[&channel=D…]]: what the page
// shows to user (by default the first person of the workspace). With channel, the
// messages of those conversations only (the main pane's, and the DM of an assistant
// thread open beside it); otherwise of every conversation the user sees. Messages are in ts order, thread replies and the user's
// ephemeral messages included.
func (p *playground) uiState(w http.ResponseWriter, r *http.Request) {
	snap, err := p.snapshot(r.URL.Query().Get("user"), r.URL.Query()["channel"]...)
	if err != nil {
		writeUIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

func (p *playground) snapshot(user string, only ...string) (*uiSnapshot, error) {
	p.ws.mu.Lock()
	defer p.ws.mu.Unlock()
	cfg := &p.ws.cfg
	snap := &uiSnapshot{
		Title:     cfg.Title,
		Team:      cfg.TeamName,
		Banner:    cfg.Banner,
		Bot:       uiUser{ID: cfg.BotUserID, Name: cfg.BotName, RealName: cfg.BotName, IsBot: true},
		Messages:  map[string][]uiMessage{},
		Statuses:  []uiStatus{},
		Files:     []uiFile{},
		Commands:  cfg.Commands,
		Shortcuts: cfg.Shortcuts,
		Connected: len(p.hub.conns),
	}
	for _, u := range p.ws.membersLocked() {
		snap.Users = append(snap.Users, uiUser{ID: u.ID, Name: u.Name, RealName: u.RealName, IsBot: u.IsBot})
		if user == "" && !u.IsBot {
			user = u.ID
		}
	}
	if _, err := p.personLocked(user); err != nil {
		return nil, err
	}
	snap.User = user
	for _, id := range only {
		if id == dmID(user) {
			continue
		}
		if ch, ok := p.ws.channels[id]; !ok || !visibleLocked(ch, user) {
			return nil, fmt.Errorf("%s: %w", id, ErrChannelNotFound)
		}
	}
	p.addConversationsLocked(snap, user, only)
	snap.Statuses = append(snap.Statuses, p.statusesLocked()...)
	snap.Assistant = p.assist.assistantThreadsLocked(user)
	snap.Sessions = p.agent.sessionsLocked()
	for _, f := range p.files.sharedLocked() {
		snap.Files = append(snap.Files, toUIFile(*f))
	}
	if v := p.modals.openViewLocked(user); v != nil {
		snap.View = &uiView{ID: v.ID, View: slices.Clone(v.View), Submitting: p.hub.submittingLocked(v.ID), Errors: maps.Clone(v.Errors)}
	}
	return snap, nil
}

// addConversationsLocked lists the conversations user sees, with the
// messages of those in only (or of each, for none). A person without an IM with
// the bot gets one, opened on first use.
func (p *playground) addConversationsLocked(snap *uiSnapshot, user string, only []string) {
	hasDM := false
	for _, id := range p.ws.channelIDs {
		ch := p.ws.channels[id]
		if !visibleLocked(ch, user) {
			continue
		}
		hasDM = hasDM || ch.Type == ChannelTypeIM
		if len(only) == 0 || slices.Contains(only, id) {
			snap.Messages[id] = uiMessagesOf(ch, user)
		}
		snap.Channels = append(snap.Channels, uiChannel{ID: id, Name: ch.Name, Type: ch.Type, Latest: latestTS(ch)})
	}
	if !hasDM {
		snap.Channels = append(snap.Channels, uiChannel{ID: dmID(user), Type: ChannelTypeIM, New: true})
		if len(only) == 0 || slices.Contains(only, dmID(user)) {
			snap.Messages[dmID(user)] = []uiMessage{}
		}
	}
}

// uiMessagesOf returns the visible messages of ch and the ephemeral ones
// shown to user, in ts order.
func uiMessagesOf(ch *channelState, user string) []uiMessage {
	msgs := []uiMessage{}
	for _, m := range ch.messages {
		if !m.deleted {
			msgs = append(msgs, toUIMessage(ch.snapshot(m), m.streamed))
		}
	}
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
	return msgs
}

// latestTS is the ts of the newest visible message of ch, "" for none.
func latestTS(ch *channelState) string {
	latest := ""
	for _, m := range ch.messages {
		if !m.deleted {
			latest = m.TS
		}
	}
	return latest
}

// statusesLocked lists the assistant statuses showing now, by channel and
// thread.
func (p *playground) statusesLocked() []uiStatus {
	var out []uiStatus
	now := p.ws.cfg.Now()
	for key, st := range p.ws.statuses {
		if st.shows(now) {
			out = append(out, uiStatus{Channel: key.channel, ThreadTS: key.threadTS, Status: st.status})
		}
	}
	slices.SortFunc(out, func(a, b uiStatus) int {
		return cmp.Or(cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.ThreadTS, b.ThreadTS))
	})
	return out
}

// uiFile answers GET /ui/files/{file}: an uploaded file's content as an
// attachment under its name.
func (p *playground) uiFile(w http.ResponseWriter, r *http.Request) {
	name, content := p.files.download(r.PathValue("file"))
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
func (p *playground) uiEvents(w http.ResponseWriter, r *http.Request) {
	updates, cancel := p.ws.Subscribe()
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
