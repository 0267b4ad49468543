package emulator

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The agent messaging experience (https://docs.slack.dev/ai/agent-sessions): the
// person opens the app's Messages tab (app_home_opened with tab "messages"), moves
// around Slack (app_context_changed), and every thread of the app's has an agent
// session whose status and title the app sets (agents.sessions.setStatus,
// agents.sessions.rename); the person stops it with the native Stop
// (agent_session_stopped, which halts the thread's streams) and renames it
// (agent_session_title_changed).
//
// Rules of the session calls, and where they come from:
//   - status is required and one of active, processing, suspended, closed: slack-go
//     v0.35.0 agents.go ("Lifecycle statuses accepted by agents.sessions.setStatus");
//     a call without status or channel_id is refused with invalid_arguments, as
//     slack-go's own test server for the method does (agents_test.go);
//   - thread_ts names a message of the channel (the emulator's rule, as for
//     assistant.threads.*: invalid_thread_ts);
//   - title and initiator_user_id apply only when the call creates the session
//     (slack-go v0.35.0, AgentSessionSetStatusParameters);
//   - agents.sessions.rename needs a title and a session: the emulator refuses a
//     rename of a thread with none with session_not_found, and a title longer than
//     MaxSessionTitle characters (its own bound) with invalid_arguments.

// MaxSessionTitle bounds a session's title in the emulator (its own bound).
const MaxSessionTitle = 255

// sessionStatuses are the statuses agents.sessions.setStatus accepts.
var sessionStatuses = []string{"active", "processing", "suspended", "closed"}

// AgentSession is an agent session as the emulator keeps it (also the playground's
// GET /ui/state "sessions" entries).
type AgentSession struct {
	Channel  string `json:"channel"`
	ThreadTS string `json:"thread_ts"`
	Status   string `json:"status"`
	Title    string `json:"title,omitempty"`
	// Initiator is the person the session was created for.
	Initiator string `json:"initiator,omitempty"`
	// History is every status set, oldest first; Renames every title the app set
	// after the session was created.
	History []string `json:"history"`
	Renames []string `json:"renames,omitempty"`
}

// agentAPI keeps the agent sessions and answers agents.sessions.*; OpenMessagesTab,
// ChangeAppContext, StopSession and RenameSessionAs act as the person.
type agentAPI struct {
	ws *workspace
	ev *eventsAPI

	sessions map[threadKey]*AgentSession // guarded by ws.mu
	refuse   bool                        // guarded by ws.mu; see RefuseSessions
}

// RefuseSessions, when refuse is true, makes agents.sessions.* refuse every call with
// not_allowed, as Slack does for an app not declared an agent; false accepts them
// again.
func (a *agentAPI) RefuseSessions(refuse bool) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	a.refuse = refuse
}

// methods is the agents.sessions family of the Web API.
func (a *agentAPI) methods() map[string]method {
	return map[string]method{
		"agents.sessions.setStatus": {handle: a.sessionsSetStatus},
		"agents.sessions.rename":    {handle: a.sessionsRename},
	}
}

// sessionsSetStatus implements agents.sessions.setStatus
// (https://docs.slack.dev/reference/methods/agents.sessions.setStatus); see the
// rules above.
func (a *agentAPI) sessionsSetStatus(r *request) (object, error) {
	if a.refuse {
		return nil, errCode("not_allowed")
	}
	if r.get("status") == "" || r.get("channel_id") == "" {
		return nil, errCode("invalid_arguments", "[ERROR] status and channel_id are required")
	}
	status := r.get("status")
	if !slices.Contains(sessionStatuses, status) {
		return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] status %q: must be one of %s", status, strings.Join(sessionStatuses, ", ")))
	}
	k, err := a.threadLocked(r)
	if err != nil {
		return nil, err
	}
	s := a.sessions[k]
	if s == nil {
		title := r.get("title")
		if utf8.RuneCountInString(title) > MaxSessionTitle {
			return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] title: at most %d characters", MaxSessionTitle))
		}
		s = &AgentSession{Channel: k.channel, ThreadTS: k.threadTS, Title: title, Initiator: r.get("initiator_user_id")}
		a.sessions[k] = s
	}
	s.Status = status
	s.History = append(s.History, status)
	a.ws.notifyLocked(Update{Kind: UpdateSession, Channel: k.channel, ThreadTS: k.threadTS})
	return object{"status": status, "agent_status": status, "title": s.Title}, nil
}

// sessionsRename implements agents.sessions.rename
// (https://docs.slack.dev/reference/methods/agents.sessions.rename); see the rules
// above.
func (a *agentAPI) sessionsRename(r *request) (object, error) {
	if a.refuse {
		return nil, errCode("not_allowed")
	}
	title := r.get("title")
	if strings.TrimSpace(title) == "" || r.get("channel_id") == "" {
		return nil, errCode("invalid_arguments", "[ERROR] title and channel_id are required")
	}
	if utf8.RuneCountInString(title) > MaxSessionTitle {
		return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] title: at most %d characters", MaxSessionTitle))
	}
	k, err := a.threadLocked(r)
	if err != nil {
		return nil, err
	}
	s := a.sessions[k]
	if s == nil {
		return nil, errCode("session_not_found")
	}
	s.Title = title
	s.Renames = append(s.Renames, title)
	a.ws.notifyLocked(Update{Kind: UpdateSession, Channel: k.channel, ThreadTS: k.threadTS})
	return object{"title": title}, nil
}

// threadLocked resolves the thread of a session call: channel_id must exist and
// thread_ts name a message in it.
func (a *agentAPI) threadLocked(r *request) (threadKey, error) {
	ch, err := channelArg(a.ws, r.get("channel_id"))
	if err != nil {
		return threadKey{}, err
	}
	ts := r.get("thread_ts")
	if ts == "" || ch.find(ts) == nil {
		return threadKey{}, errCode("invalid_thread_ts")
	}
	return threadKey{ch.ID, ts}, nil
}

// Session returns the agent session of the thread (channel, threadTS), and whether
// there is one.
func (a *agentAPI) Session(channel, threadTS string) (AgentSession, bool) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	s := a.sessions[threadKey{channel, threadTS}]
	if s == nil {
		return AgentSession{}, false
	}
	c := *s
	c.History, c.Renames = slices.Clone(s.History), slices.Clone(s.Renames)
	return c, true
}

// sessionsLocked returns every agent session, by channel and thread.
func (a *agentAPI) sessionsLocked() []AgentSession {
	out := []AgentSession{}
	for _, s := range a.sessions {
		c := *s
		c.History, c.Renames = slices.Clone(s.History), slices.Clone(s.Renames)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b AgentSession) int {
		return cmp.Or(strings.Compare(a.Channel, b.Channel), strings.Compare(a.ThreadTS, b.ThreadTS))
	})
	return out
}

// ContextEntity is one item of an app_context_changed's context: Type is Slack's
// entity type (slack#/types/channel_id, canvas_id, list_id, message_context), Value
// the channel, canvas or list id; a message_context names Channel and TS instead.
type ContextEntity struct {
	Type    string
	Value   string
	Channel string
	TS      string
}

// The entity types of an app context.
const (
	EntityChannel = "slack#/types/channel_id"
	EntityCanvas  = "slack#/types/canvas_id"
	EntityList    = "slack#/types/list_id"
	EntityMessage = "slack#/types/message_context"
)

// OpenMessagesTab opens the app's Messages tab for user (app_home_opened with tab
// "messages", in the shape of bot/testdata/agent/app_home_opened.json) and returns
// the IM's id.
func (a *agentAPI) OpenMessagesTab(user string) (string, error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	im := a.ws.imLocked(user)
	if im == nil {
		return "", fmt.Errorf("no IM with %s: %w", user, ErrChannelNotFound)
	}
	a.ev.emitLocked(im, agentEvent{"type": "app_home_opened", "user": user, "channel": im.ID, "tab": "messages", "event_ts": a.ws.nextTSLocked()})
	return im.ID, nil
}

// ChangeAppContext tells the app that user now views entities, most relevant first
// (app_context_changed, in the shape of bot/testdata/agent/app_context_changed.json).
func (a *agentAPI) ChangeAppContext(user string, entities ...ContextEntity) error {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	im := a.ws.imLocked(user)
	if im == nil {
		return fmt.Errorf("no IM with %s: %w", user, ErrChannelNotFound)
	}
	list := []object{}
	for _, e := range entities {
		o := object{"type": e.Type, "team_id": a.ws.cfg.TeamID}
		if e.Type == EntityMessage {
			o["value"] = object{"channel_id": e.Channel, "message_ts": e.TS}
		} else {
			o["value"] = e.Value
		}
		list = append(list, o)
	}
	a.ev.emitLocked(im, agentEvent{"type": "app_context_changed", "context": object{"entities": list}, "channel": im.ID, "user": user, "event_ts": a.ws.nextTSLocked()})
	return nil
}

// StopSession is the native Stop of the session of thread (channel, threadTS),
// pressed by user: the thread's streams still streaming are halted (a later
// chat.appendStream or chat.stopStream gets message_not_in_streaming_state) and
// agent_session_stopped is sent with their ts. It returns the ts of the streams it
// halted.
func (a *agentAPI) StopSession(channel, threadTS, user string) ([]string, error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, err := a.ws.findChannelLocked(channel)
	if err != nil {
		return nil, err
	}
	if a.sessions[threadKey{ch.ID, threadTS}] == nil {
		return nil, fmt.Errorf("no agent session in %s/%s: %w", channel, threadTS, ErrMessageNotFound)
	}
	halted := []string{}
	for _, m := range ch.thread(threadTS) {
		if m.Streaming {
			a.ws.changeLocked(ch, m, func(m *record) { m.Streaming = false })
			halted = append(halted, m.TS)
		}
	}
	a.ev.emitLocked(ch, agentEvent{"type": "agent_session_stopped", "channel": ch.ID, "thread_ts": threadTS, "user": user,
		"streaming_message_ts": halted, "event_ts": a.ws.nextTSLocked()})
	return halted, nil
}

// RenameSessionAs is the person's rename of the session of thread (channel,
// threadTS) to title (agent_session_title_changed).
func (a *agentAPI) RenameSessionAs(channel, threadTS, user, title string) error {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, err := a.ws.findChannelLocked(channel)
	if err != nil {
		return err
	}
	s := a.sessions[threadKey{ch.ID, threadTS}]
	if s == nil {
		return fmt.Errorf("no agent session in %s/%s: %w", channel, threadTS, ErrMessageNotFound)
	}
	ev := agentEvent{"type": "agent_session_title_changed", "channel": ch.ID, "thread_ts": threadTS, "user": user,
		"team_id": a.ws.cfg.TeamID, "title": title, "event_ts": a.ws.nextTSLocked()}
	if s.Title != "" {
		ev["previous_title"] = s.Title
	}
	s.Title = title
	a.ws.notifyLocked(Update{Kind: UpdateSession, Channel: ch.ID, ThreadTS: threadTS})
	a.ev.emitLocked(ch, ev)
	return nil
}

// agentEvent is an event of the agent view, written as the samples in
// bot/testdata/agent show it.
type agentEvent map[string]any

func (e agentEvent) eventType() string { s, _ := e["type"].(string); return s }
