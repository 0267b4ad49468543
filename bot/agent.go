package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The agent messaging experience (docs/tools.md, "Agent view"): its events become
// inputs here (agentInput), and Agent reads what the person views and sets the agent
// sessions of threads (https://docs.slack.dev/ai/agent-sessions).

// MaxViewedMessageChars bounds the text of a viewed message given to the model.
const MaxViewedMessageChars = 2000

// agentInput turns the agent view's events into inputs: app_home_opened (the
// Messages tab only) and app_context_changed into KindAssistantThread inputs of the
// DM's Messages tab (conversation.MessagesTabKey), agent_session_title_changed into one
// of the session's thread, agent_session_stopped into a Stop of whatever runs in the
// thread (conversation.SessionStop). ok false means the event is not one of these.
func agentInput(inner any, team, eventID string) (in conversation.Input, handled, ok bool, reason string) {
	var th conversation.AssistantThreadInput
	var key conversation.Key
	var ts string
	switch e := inner.(type) {
	case *slackevents.AppHomeOpenedEvent:
		if e.Tab != "messages" {
			return in, true, false, dropUnhandledType
		}
		th = conversation.AssistantThreadInput{Event: conversation.AppHomeOpened, UserID: e.User, Viewed: viewedItems(e.Context)}
		key, ts = conversation.MessagesTabKey(team, e.Channel), e.EventTimeStamp
	case *slackevents.AppContextChangedEvent:
		th = conversation.AssistantThreadInput{Event: conversation.AppContextChanged, UserID: e.User, Viewed: viewedItems(&e.Context)}
		key, ts = conversation.MessagesTabKey(team, e.Channel), e.EventTimestamp
	case *slackevents.AgentSessionTitleChangedEvent:
		th = conversation.AssistantThreadInput{Event: conversation.SessionTitleChanged, UserID: e.User, Title: e.Title}
		key, ts = conversation.Key{TeamID: team, ChannelID: e.Channel, ThreadTS: e.ThreadTimestamp}, e.EventTimestamp
	case *slackevents.AgentSessionStoppedEvent:
		key = conversation.Key{TeamID: team, ChannelID: e.Channel, ThreadTS: e.ThreadTimestamp}
		if !key.Valid() || e.User == "" {
			return in, true, false, dropIncomplete
		}
		return conversation.Input{
			ID:      fmt.Sprintf("session_stop:%s:%s:%s:%s", team, e.Channel, e.ThreadTimestamp, cmp.Or(e.EventTimestamp, eventID)),
			EventID: eventID,
			Key:     key,
			Kind:    conversation.KindAction,
			Action: &conversation.ActionInput{UserID: e.User, Action: conversation.Action{
				Name: conversation.ActionStop, Channel: e.Channel, ThreadTS: e.ThreadTimestamp, Arg: conversation.SessionStop}},
		}, true, true, ""
	default:
		return in, false, false, ""
	}
	if !key.Valid() || th.UserID == "" {
		return in, true, false, dropIncomplete
	}
	return conversation.Input{
		ID:      fmt.Sprintf("agent:%s:%s:%s:%s:%s", team, key.ChannelID, key.ThreadTS, th.Event, cmp.Or(ts, eventID)),
		EventID: eventID,
		Key:     key,
		Kind:    conversation.KindAssistantThread,
		Thread:  &th,
	}, true, true, ""
}

// viewedItems returns the items of an app context, most relevant first, at most
// conversation.MaxViewedItems; entities of types it does not know are left out.
func viewedItems(c *slackevents.AppContext) []conversation.ViewedItem {
	if c == nil {
		return nil
	}
	var out []conversation.ViewedItem
	for _, e := range c.Entities {
		var it conversation.ViewedItem
		switch e.Type {
		case slackevents.AppContextEntityChannel:
			it = conversation.ViewedItem{Kind: conversation.ViewedChannel, ID: e.Value}
		case slackevents.AppContextEntityCanvas:
			it = conversation.ViewedItem{Kind: conversation.ViewedCanvas, ID: e.Value}
		case slackevents.AppContextEntityList:
			it = conversation.ViewedItem{Kind: conversation.ViewedList, ID: e.Value}
		case slackevents.AppContextEntityMessageContext:
			if e.Message == nil {
				continue
			}
			it = conversation.ViewedItem{Kind: conversation.ViewedMessage, ChannelID: e.Message.ChannelID, TS: e.Message.MessageTimestamp}
		default:
			continue
		}
		if it.ID == "" && it.TS == "" {
			continue
		}
		out = append(out, it)
		if len(out) == conversation.MaxViewedItems {
			break
		}
	}
	return out
}

// Agent reads what a person views (conversation.ViewReader) and sets the agent
// sessions of threads (conversation.Sessions) with the bot token. Where Slack refuses
// sessions (the app is not declared an agent, an old workspace), it says why once in
// the log and sets none after. It is safe for concurrent use.
type Agent struct {
	api *slack.Client
	log *slog.Logger

	mu  sync.Mutex
	off bool // sessions refused: none are set after
	// turning holds the sessions this Agent set processing (a turn runs in their
	// thread), at most maxStatusThreads, each with whether the thread's last stream
	// was stopped by a chat.stopStream, which set it active (streamed); a later status
	// of the thread forgets it. Made on first use.
	turning map[conversation.Key]bool
	// noStopLogged is set once the log said that Slack shows sessions without a
	// Stop (noStopWarned).
	noStopLogged bool
}

var (
	_ conversation.ViewReader = (*Agent)(nil)
	_ conversation.Sessions   = (*Agent)(nil)
)

// NewAgent returns the Agent of api.
func NewAgent(api *slack.Client, log *slog.Logger) *Agent {
	if log == nil {
		log = slog.Default()
	}
	return &Agent{api: api, log: log}
}

// ReadViewing reads what items name, only where the bot is a member of the channel:
// the first channel's name and purpose (conversations.info; scopes channels:read,
// groups:read), the first message's text (conversations.replies; channels:history,
// groups:history), cut to MaxViewedMessageChars, and the names of canvases and lists
// shared in a conversation the bot is a member of (files.info; files:read). What
// cannot be read is left out; the error is the first failure, for the log.
func (a *Agent) ReadViewing(ctx context.Context, team string, items []conversation.ViewedItem) (conversation.Viewing, error) {
	var v conversation.Viewing
	var first error
	note := func(err error) {
		if first == nil {
			first = err
		}
	}
	infos := map[string]*slack.Channel{} // nil: the bot is no member, or unknown
	in := func(id string) *slack.Channel {
		if ch, seen := infos[id]; seen {
			return ch
		}
		ch, err := a.api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: id})
		if err != nil {
			note(fmt.Errorf("conversations.info %s: %w", id, err))
		}
		if err != nil || !ch.IsMember {
			ch = nil
		}
		infos[id] = ch
		return ch
	}
	isMember := func(id string) bool { return in(id) != nil }
	// described: the first channel viewed (or a viewed message's) the bot is in.
	described := func(id string) bool {
		ch := in(id)
		if ch != nil && v.ChannelName == "" {
			v.ChannelName, v.Purpose = ch.Name, textcut.Runes(ch.Purpose.Value, 250)
		}
		return ch != nil
	}
	for _, it := range items {
		switch it.Kind {
		case conversation.ViewedChannel:
			described(it.ID)
		case conversation.ViewedMessage:
			if v.Message != "" || !described(it.ChannelID) {
				continue
			}
			msgs, _, _, err := a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: it.ChannelID, Timestamp: it.TS, Latest: it.TS, Oldest: it.TS, Inclusive: true, Limit: 1})
			if err != nil {
				note(fmt.Errorf("conversations.replies %s: %w", it.ChannelID, err))
				continue
			}
			for _, m := range msgs {
				if m.Timestamp == it.TS {
					v.Message = textcut.Runes(m.Text, MaxViewedMessageChars)
				}
			}
		case conversation.ViewedCanvas, conversation.ViewedList:
			f, _, _, err := a.api.GetFileInfoContext(ctx, it.ID, 0, 0)
			if err != nil {
				note(fmt.Errorf("files.info %s: %w", it.ID, err))
				continue
			}
			// Named only when it is shared in a conversation the bot is a member of.
			shared := slices.Concat(f.Channels, f.Groups, f.IMs)
			if !slices.ContainsFunc(shared, isMember) {
				continue
			}
			if name := textcut.Runes(cmp.Or(f.Title, f.Name), 120); name != "" {
				v.Names = append(v.Names, name)
			}
		}
	}
	return v, first
}

// sessionRefusals are the errors of agents.sessions.* that mean no session can be
// set in this workspace at all (https://docs.slack.dev/reference/methods/agents.sessions.setStatus).
var sessionRefusals = map[string]bool{"not_allowed": true, "not_allowed_token_type": true, "missing_scope": true, "unknown_method": true, "feature_not_enabled": true}

// SetSessionStatus sets the agent session of key's thread to status, creating it with
// title and initiator if needed (agents.sessions.setStatus; scope assistant:write).
// It makes no call to set active a session it set processing when the last stream
// it heard of in the thread since was stopped by the Messenger's chat.stopStream
// (WithSessions): Slack set it active then (chat.stopStream's session_status,
// "active" by default; docs/tools.md, "Agent view"). Errors: Slack's, wrapped;
// conversation.ErrSessionsOff, with no call, once sessions were refused (logged once);
// conversation.ErrNoNativeStop when it set status processing but Slack warned that
// the app is not subscribed to agent_session_stopped (logged once).
func (a *Agent) SetSessionStatus(ctx context.Context, key conversation.Key, status, title, initiator string) error {
	if a.disabled() {
		return conversation.ErrSessionsOff
	}
	a.mu.Lock()
	stopped := a.turning[key]
	delete(a.turning, key)
	a.mu.Unlock()
	if stopped && status == conversation.SessionActive && title == "" && initiator == "" {
		return nil
	}
	resp, err := a.api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{
		Status: status, ChannelID: key.ChannelID, ThreadTS: key.ThreadTS,
		Title: textcut.Runes(title, conversation.MaxTitleChars), InitiatorUserID: initiator})
	if err == nil && status == conversation.SessionProcessing {
		a.mu.Lock()
		if a.turning == nil || len(a.turning) >= maxStatusThreads {
			// Entries of turns that never set their end (a failed turn, a lost lease)
			// stay until their thread's next turn: past the bound, all are forgotten,
			// which only costs their next active its call.
			a.turning = map[conversation.Key]bool{}
		}
		a.turning[key] = false
		a.mu.Unlock()
		if resp != nil && a.noStopWarned(resp.Warn()) {
			return conversation.ErrNoNativeStop
		}
	}
	return a.check("agents.sessions.setStatus", err)
}

// noStopWarned reports whether w, the warnings of an agents.sessions.setStatus that
// succeeded (warning, or response_metadata.warnings), says that the app is not
// subscribed to agent_session_stopped, so that Slack shows the person a loading
// indicator and no Stop; the first time, it logs what to do.
func (a *Agent) noStopWarned(w *slack.Warning) bool {
	if w == nil || !slices.ContainsFunc(slices.Concat(w.Codes, w.Warnings), func(c string) bool { return strings.TrimSpace(c) == noStopWarning }) {
		return false
	}
	if a.firstTime(&a.noStopLogged) {
		a.log.Warn("Slack shows agent sessions without a Stop: the app is not subscribed to the agent_session_stopped event; add it to the app's event subscriptions (threadwright manifest has it). Until then, streamed answers carry a Stop button of their own",
			"warning", noStopWarning)
	}
	return true
}

// firstTime sets *flag, a field of a guarded by a.mu, and reports whether it was
// unset.
func (a *Agent) firstTime(flag *bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	first := !*flag
	*flag = true
	return first
}

// noStopWarning is the warning of agents.sessions.setStatus for an app not
// subscribed to agent_session_stopped
// (https://docs.slack.dev/reference/events/agent_session_stopped).
const noStopWarning = "missing_agent_session_stopped_event_subscription"

// streamed notes what became of a stream in key's thread, when this Agent set that
// thread's session processing: stopped is true when chat.stopStream stopped it, which
// set the session active; false when a stream started or its stop failed (the
// person's native Stop, an expiry, an error), which leaves the session's status
// unknown. The last stream of the turn decides. A nil Agent (no WithSessions) notes
// nothing.
func (a *Agent) streamed(key conversation.Key, stopped bool) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.turning[key]; ok {
		a.turning[key] = stopped
	}
}

// processingAgainTimeout bounds processingAgain's call, so that a slow or
// rate-limited agents.sessions.setStatus leaves the stream's append its time.
const processingAgainTimeout = 2 * time.Second

// processingAgain sets key's agent session processing again when this Agent set it
// processing for a turn that has not set its end yet, after a stream of that turn
// stopped to go on in a fresh message (rotateIfOld): chat.stopStream set the session
// active (its session_status default), which would hide Slack's Stop for the rest of
// the turn (SetSessionStatus, which keeps the session's entry in turning). A failure
// is logged at debug. A nil Agent (no WithSessions) does nothing.
func (a *Agent) processingAgain(ctx context.Context, key conversation.Key) {
	if a == nil {
		return
	}
	a.mu.Lock()
	_, turning := a.turning[key]
	a.mu.Unlock()
	if !turning {
		return
	}
	// Its own short deadline: the rotation's caller bounds the append that follows.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), processingAgainTimeout)
	defer cancel()
	err := a.SetSessionStatus(ctx, key, conversation.SessionProcessing, "", "")
	if err != nil && !conversation.LoggedBySessions(err) {
		a.log.Debug("agent session not set processing again after its stream went on in a fresh message", conversation.LogKeyThread, key.String(), "error", err)
	}
}

// RenameSession sets the title of the agent session of key's thread
// (agents.sessions.rename; scope assistant:write). Errors: as SetSessionStatus.
func (a *Agent) RenameSession(ctx context.Context, key conversation.Key, title string) error {
	if a.disabled() {
		return conversation.ErrSessionsOff
	}
	_, err := a.api.RenameAgentSessionContext(ctx, slack.AgentSessionRenameParameters{
		Title: textcut.Runes(title, conversation.MaxTitleChars), ChannelID: key.ChannelID, ThreadTS: key.ThreadTS})
	return a.check("agents.sessions.rename", err)
}

func (a *Agent) disabled() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.off
}

// check wraps err of method; a refusal of sessions as such turns them off, with one
// log line that says why, and wraps conversation.ErrSessionsOff.
func (a *Agent) check(method string, err error) error {
	if err == nil {
		return nil
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && sessionRefusals[strings.TrimSpace(se.Err)] {
		if a.firstTime(&a.off) {
			a.log.Warn("agent sessions are off: Slack refused them (is the app declared an agent, with agent_view in its manifest?); threads work as before, without a session status, title or native Stop",
				"method", method, "error", se.Err)
		}
		return fmt.Errorf("%s: %s: %w", method, se.Err, conversation.ErrSessionsOff)
	}
	return fmt.Errorf("%s: %w", method, err)
}
