package conversation

import (
	"context"
	"errors"
	"strings"
)

// Slack's agent messaging experience (docs/tools.md, "Agent view"): the agent's
// conversations live in the app's Messages tab (its DM with the person), app_home_opened
// with tab "messages" takes the place of assistant_thread_started, app_context_changed
// says what the person is viewing, and every thread the bot answers is an agent session
// (https://docs.slack.dev/ai/agent-sessions).

// The agent view's events (AssistantThreadInput.Event), named as Slack names them.
const (
	// AppHomeOpened is app_home_opened with tab "messages": the person opened the
	// Messages tab, which is greeted once.
	AppHomeOpened = "app_home_opened"
	// AppContextChanged is app_context_changed: what the person views changed
	// (AssistantThreadInput.Viewed).
	AppContextChanged = "app_context_changed"
	// SessionTitleChanged is agent_session_title_changed: the person renamed the
	// thread's session (AssistantThreadInput.Title); the bot never renames it again.
	SessionTitleChanged = "agent_session_title_changed"
)

// MessagesTab is the ThreadTS of the Key that holds a person's Messages tab: its
// greeting and what the person views. It is not a Slack thread: what a turn of it
// posts goes to the top level of the DM (Key.Posting).
const MessagesTab = "messages_tab"

// Posting returns the key a turn of k posts to: k itself, or the DM's top level for
// the Messages tab (MessagesTab).
func (k Key) Posting() Key {
	if k.ThreadTS == MessagesTab {
		k.ThreadTS = ""
	}
	return k
}

// MessagesTabKey returns the Key of the Messages tab of the DM channel in team.
func MessagesTabKey(team, channel string) Key {
	return Key{TeamID: team, ChannelID: channel, ThreadTS: MessagesTab}
}

// The kinds of a ViewedItem, as app_context_changed's entity types name them
// (slack#/types/channel_id, canvas_id, list_id, message_context).
const (
	ViewedChannel = "channel"
	ViewedCanvas  = "canvas"
	ViewedList    = "list"
	ViewedMessage = "message"
)

// MaxViewedItems bounds the items of one app_context_changed kept in an input.
const MaxViewedItems = 8

// ViewedItem is one thing the person has open in Slack (app_context_changed), most
// relevant first: a channel, a canvas or a list by ID, or a message by its channel and
// ts.
type ViewedItem struct {
	Kind      string `json:"kind"`
	ID        string `json:"id,omitempty"`
	ChannelID string `json:"channel_id,omitempty"`
	TS        string `json:"ts,omitempty"`
}

// ViewedChannelID returns the channel of the first item that names one (a channel
// or a message's), "" when none does: its strategy and tool policy apply.
func ViewedChannelID(items []ViewedItem) string {
	for _, it := range items {
		switch it.Kind {
		case ViewedChannel:
			return it.ID
		case ViewedMessage:
			return it.ChannelID
		}
	}
	return ""
}

// Viewing is what the model is told of what the person views, read by a ViewReader
// only where the bot is a member of the channel (docs/tools.md, "Agent view").
type Viewing struct {
	// ChannelName and Purpose describe the channel viewed (conversations.info).
	ChannelName string `json:"channel_name,omitempty"`
	Purpose     string `json:"purpose,omitempty"`
	// Message is the text of the message viewed (conversations.replies): written by
	// anyone, it reaches the model as untrusted data and taints the turn.
	Message string `json:"message,omitempty"`
	// Names are the canvases and lists viewed, by name (files.info): named by anyone,
	// they reach the model as untrusted data and taint the turn, as Message does.
	Names []string `json:"names,omitempty"`
}

// Empty reports whether v tells nothing.
func (v Viewing) Empty() bool {
	return v.ChannelName == "" && v.Purpose == "" && v.Message == "" && len(v.Names) == 0
}

// Untrusted reports whether v holds content anyone may have written that the turn
// must treat as untrusted (a message's text, a canvas's or list's name).
func (v Viewing) Untrusted() bool { return strings.TrimSpace(v.Message) != "" || len(v.Names) > 0 }

// ViewReader is implemented by a Messenger that can read what a person views
// (bot.Messenger: conversations.info, conversations.replies, files.info). It reads
// only what lives in channels the bot is a member of, and bounds what it returns.
type ViewReader interface {
	ReadViewing(ctx context.Context, team string, items []ViewedItem) (Viewing, error)
}

// The statuses of an agent session (agents.sessions.setStatus).
const (
	// SessionProcessing: a turn runs.
	SessionProcessing = "processing"
	// SessionActive: the bot waits for the person (an answer given, a card or an
	// approval to act on).
	SessionActive = "active"
	// SessionClosed: the thread's workflow finished.
	SessionClosed = "closed"
)

// SessionStop is the Arg of the Stop an agent_session_stopped brings (the session's
// native Stop): it stops whatever runs in the thread, an assistant turn or a
// pipeline, once.
const SessionStop = "session"

// ErrSessionsOff is what Sessions' methods return, without a call, once Slack refused
// agent sessions in the workspace (docs/tools.md, "Agent view"): the thread has no
// session, so no status, title or native Stop.
var ErrSessionsOff = errors.New("agent sessions are off: Slack refused them")

// ErrNoNativeStop is what Sessions.SetSessionStatus returns when it set a session
// processing but Slack shows the person no Stop the app would hear of: the app is not
// subscribed to agent_session_stopped (agents.sessions.setStatus warns
// missing_agent_session_stopped_event_subscription). The status is set.
var ErrNoNativeStop = errors.New("agent sessions show no Stop: the app is not subscribed to agent_session_stopped")

// LoggedBySessions reports whether err, of a Sessions call, is one the Sessions logged
// once already and callers need not log again: ErrSessionsOff or ErrNoNativeStop
// (wrapped or not). A nil err is not.
func LoggedBySessions(err error) bool {
	return errors.Is(err, ErrSessionsOff) || errors.Is(err, ErrNoNativeStop)
}

// Sessions sets the agent session of a thread (bot.Agent: agents.sessions.setStatus,
// agents.sessions.rename). Where Slack refuses sessions, it says so once in the log and
// its methods return ErrSessionsOff from then on: threads work as before.
type Sessions interface {
	// SetSessionStatus sets the status of key's session, creating it with title and
	// initiator (the person who asked) when it has none.
	SetSessionStatus(ctx context.Context, key Key, status, title, initiator string) error
	// RenameSession sets the title of key's session.
	RenameSession(ctx context.Context, key Key, title string) error
}

// Session is what a thread's state keeps of its agent session (State.Session).
type Session struct {
	// Status is the status last set.
	Status string `json:"status,omitempty"`
	// Title is the session's title: the bot's (the first question, or a workflow's
	// name and subject) until the person renames it.
	Title string `json:"title,omitempty"`
	// Renamed is set once the person renamed the session: the bot never renames it
	// again.
	Renamed bool `json:"renamed,omitempty"`
}
