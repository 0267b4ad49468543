package emulator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The assistant view (https://docs.slack.dev/ai): a person opens the app's split view,
// Slack starts an assistant thread in the app's DM and sends assistant_thread_started
// with the channel the person views; moving to another channel sends
// assistant_thread_context_changed. The app sets the thread's suggested prompts
// (assistant.threads.setSuggestedPrompts) and title (assistant.threads.setTitle).

// MaxSuggestedPrompts is the most prompts assistant.threads.setSuggestedPrompts
// accepts ("up to four suggested prompts").
const MaxSuggestedPrompts = 4

// assistantAPI keeps the assistant threads and answers the
// assistant.threads.* methods; StartAssistantThread and
// ChangeAssistantContext act as the person in the split view.
type assistantAPI struct {
	ws *workspace
	ev *eventsAPI

	threads map[threadKey]*AssistantThread // guarded by ws.mu
}

// methods is the assistant family of the Web API.
func (a *assistantAPI) methods() map[string]method {
	return map[string]method{
		"assistant.threads.setStatus":           {handle: a.assistantThreadsSetStatus},
		"assistant.threads.setSuggestedPrompts": {handle: a.assistantThreadsSetSuggestedPrompts},
		"assistant.threads.setTitle":            {handle: a.assistantThreadsSetTitle},
	}
}

// SuggestedPrompt is a prompt of an assistant thread.
type SuggestedPrompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// AssistantThread is what the app set on an assistant thread (also the page's
// GET /ui/state "assistant" entries).
type AssistantThread struct {
	Channel  string `json:"channel"`
	ThreadTS string `json:"thread_ts"`
	// User is the person whose thread it is; Context the channel they view.
	User    string `json:"user"`
	Context string `json:"context,omitempty"`
	// Title is the thread's title (assistant.threads.setTitle), "" until set.
	Title string `json:"title,omitempty"`
	// PromptsTitle and Prompts are the last suggested prompts set.
	PromptsTitle string            `json:"prompts_title,omitempty"`
	Prompts      []SuggestedPrompt `json:"prompts,omitempty"`
}

// StartAssistantThread opens the assistant view for user, who views channel
// contextChannel ("" for none): it starts a thread in user's IM with the app (its
// root the person's message with subtype assistant_app_thread, "the root message of
// an assistant thread started by the end user" in Slack's reference, whose message
// event the app receives too) and sends assistant_thread_started. It returns the IM's id and the thread's ts.
func (a *assistantAPI) StartAssistantThread(user, contextChannel string) (channel, threadTS string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	im := a.ws.imLocked(user)
	if im == nil {
		return "", "", fmt.Errorf("no IM with %s: %w", user, ErrChannelNotFound)
	}
	if contextChannel != "" {
		if _, err := a.ws.findChannelLocked(contextChannel); err != nil {
			return "", "", err
		}
	}
	root := &record{Message: Message{Channel: im.ID, TS: a.ws.nextTSLocked(), User: user, Subtype: "assistant_app_thread", Text: "New chat"}}
	a.ev.postLocked(im, root)
	a.threads[threadKey{im.ID, root.TS}] = &AssistantThread{Channel: im.ID, ThreadTS: root.TS, User: user, Context: contextChannel}
	a.ev.assistantLocked(im, "assistant_thread_started", user, root.TS, contextChannel)
	return im.ID, root.TS, nil
}

// ChangeAssistantContext tells the app that the person of the assistant thread
// (channel, threadTS) now views contextChannel (assistant_thread_context_changed).
func (a *assistantAPI) ChangeAssistantContext(channel, threadTS, contextChannel string) error {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, err := a.ws.findChannelLocked(channel)
	if err != nil {
		return err
	}
	t := a.threads[threadKey{ch.ID, threadTS}]
	if t == nil {
		return fmt.Errorf("assistant thread %s/%s: %w", channel, threadTS, ErrMessageNotFound)
	}
	if _, err := a.ws.findChannelLocked(contextChannel); err != nil {
		return err
	}
	t.Context = contextChannel
	a.ev.assistantLocked(ch, "assistant_thread_context_changed", t.User, threadTS, contextChannel)
	return nil
}

// AssistantThread returns what the app set on the assistant thread (channel,
// threadTS), and whether there is such a thread.
func (a *assistantAPI) AssistantThread(channel, threadTS string) (AssistantThread, bool) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	t := a.threads[threadKey{channel, threadTS}]
	if t == nil {
		return AssistantThread{}, false
	}
	c := *t
	c.Prompts = slices.Clone(t.Prompts)
	return c, true
}

// assistantThreadLocked resolves the thread of an assistant.threads.* call: the
// channel must exist and thread_ts name an assistant thread in it.
func (a *assistantAPI) assistantThreadLocked(r *request) (*AssistantThread, error) {
	ch, err := channelArg(a.ws, r.get("channel_id"))
	if err != nil {
		return nil, err
	}
	t := a.threads[threadKey{ch.ID, r.get("thread_ts")}]
	if t == nil {
		return nil, errCode("invalid_thread_ts")
	}
	return t, nil
}

// assistantThreadsSetSuggestedPrompts implements assistant.threads.setSuggestedPrompts
// (https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts):
// channel_id and prompts are required, prompts a JSON array of up to four prompts,
// each with a title and a message; title is optional. The emulator asks for thread_ts
// too (Slack's default, the channel's latest message, is not emulated).
func (a *assistantAPI) assistantThreadsSetSuggestedPrompts(r *request) (object, error) {
	if err := r.require("channel_id", "thread_ts", "prompts"); err != nil {
		return nil, err
	}
	t, err := a.assistantThreadLocked(r)
	if err != nil {
		return nil, err
	}
	var prompts []SuggestedPrompt
	if err := json.Unmarshal([]byte(r.get("prompts")), &prompts); err != nil {
		return nil, errCode("invalid_arguments", "[ERROR] prompts must be a JSON array of {title, message}")
	}
	if len(prompts) == 0 || len(prompts) > MaxSuggestedPrompts {
		return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] %d prompts: between 1 and %d are allowed", len(prompts), MaxSuggestedPrompts))
	}
	for i, p := range prompts {
		if strings.TrimSpace(p.Title) == "" || strings.TrimSpace(p.Message) == "" {
			return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] prompt %d: title and message are required", i+1))
		}
	}
	t.PromptsTitle, t.Prompts = r.get("title"), prompts
	a.ws.notifyLocked(Update{Kind: UpdateAssistant, Channel: t.Channel, ThreadTS: t.ThreadTS})
	return nil, nil
}

// assistantThreadsSetTitle implements assistant.threads.setTitle
// (https://docs.slack.dev/reference/methods/assistant.threads.setTitle): channel_id,
// thread_ts and title are required.
func (a *assistantAPI) assistantThreadsSetTitle(r *request) (object, error) {
	if err := r.require("channel_id", "thread_ts", "title"); err != nil {
		return nil, err
	}
	t, err := a.assistantThreadLocked(r)
	if err != nil {
		return nil, err
	}
	t.Title = r.get("title")
	a.ws.notifyLocked(Update{Kind: UpdateAssistant, Channel: t.Channel, ThreadTS: t.ThreadTS})
	return nil, nil
}

// assistantThreadsLocked returns user's assistant threads, oldest first.
func (a *assistantAPI) assistantThreadsLocked(user string) []AssistantThread {
	var out []AssistantThread
	for _, t := range a.threads {
		if t.User == user {
			c := *t
			c.Prompts = slices.Clone(t.Prompts)
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b AssistantThread) int {
		return cmp.Or(cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.ThreadTS, b.ThreadTS))
	})
	return out
}

// assistantThreadsSetStatus implements assistant.threads.setStatus
// (https://docs.slack.dev/reference/methods/assistant.threads.setStatus):
// channel_id and thread_ts are required; an empty status clears it.
func (a *assistantAPI) assistantThreadsSetStatus(r *request) (object, error) {
	if err := r.require("channel_id", "thread_ts"); err != nil {
		return nil, err
	}
	ch, err := channelArg(a.ws, r.get("channel_id"))
	if err != nil {
		return nil, err
	}
	threadTS := r.get("thread_ts")
	if ch.find(threadTS) == nil {
		return nil, errCode("invalid_thread_ts")
	}
	a.ws.setStatusLocked(threadKey{ch.ID, threadTS}, r.get("status"))
	return nil, nil
}

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
//     v0.35.0's AgentSessionStatus constants ("Lifecycle statuses accepted by
//     agents.sessions.setStatus"); a call without status or channel_id is refused
//     with invalid_arguments, as slack-go's own test server for the method does;
//   - thread_ts names a message of the channel (the emulator's rule, as for
//     assistant.threads.*: invalid_thread_ts);
//   - title and initiator_user_id apply only when the call creates the session
//     (slack-go v0.35.0, AgentSessionSetStatusParameters);
//   - chat.stopStream sets the session of the stream's thread, when it has one, to
//     its session_status argument, "active" by default (Slack's reference of
//     chat.stopStream: "The session status to set after stopping the stream.
//     Default: active"); a value other than the four is invalid_arguments;
//   - agents.sessions.rename needs a title and a session: the emulator refuses a
//     rename of a thread with none with session_not_found (its own rule), and a
//     title longer than MaxSessionTitle characters with invalid_arguments.

// MaxSessionTitle bounds a session's title: "max 200 characters" (Slack's reference
// of agents.sessions.setStatus, argument title).
const MaxSessionTitle = 200

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
	noStop   bool                        // guarded by ws.mu; see UnsubscribeSessionStop
}

// UnsubscribeSessionStop, when on is true, answers agents.sessions.setStatus as Slack
// does for an app not subscribed to agent_session_stopped: the status is set, with
// the warning missing_agent_session_stopped_event_subscription, and the person sees
// a loading indicator, not a Stop (docs.slack.dev/reference/events/agent_session_stopped).
// False subscribes the app again.
func (a *agentAPI) UnsubscribeSessionStop(on bool) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	a.noStop = on
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
	if err := checkSessionStatus("status", status); err != nil {
		return nil, err
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
	a.setLocked(k, s, status)
	out := object{"status": status, "agent_status": status, "title": s.Title}
	if a.noStop {
		out["warning"] = "missing_agent_session_stopped_event_subscription"
	}
	return out, nil
}

// checkSessionStatus refuses status, the argument name, unless it is one of
// sessionStatuses (invalid_arguments).
func checkSessionStatus(name, status string) error {
	if !slices.Contains(sessionStatuses, status) {
		return errCode("invalid_arguments", fmt.Sprintf("[ERROR] %s %q: must be one of %s", name, status, strings.Join(sessionStatuses, ", ")))
	}
	return nil
}

// setLocked sets s, the session of thread k, to status, and tells the watchers.
func (a *agentAPI) setLocked(k threadKey, s *AgentSession, status string) {
	s.Status = status
	s.History = append(s.History, status)
	a.ws.notifyLocked(Update{Kind: UpdateSession, Channel: k.channel, ThreadTS: k.threadTS})
}

// streamStoppedLocked sets the session of the thread (channel, threadTS), when it
// has one, to status, as chat.stopStream does (see the rules above).
func (a *agentAPI) streamStoppedLocked(channel, threadTS, status string) {
	k := threadKey{channel, threadTS}
	if s := a.sessions[k]; s != nil {
		a.setLocked(k, s, status)
	}
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
