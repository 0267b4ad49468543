package emulator

import (
	"encoding/base64"
	"encoding/json"
)

// The Events API (https://docs.slack.dev/apis/events-api/): Slack tells the
// app about every new, changed or deleted message, and about assistant
// threads, in events_api envelopes.

// eventsAPI changes the workspace's messages and delivers the events Slack
// sends about each change, through the Socket Mode hub.
type eventsAPI struct {
	ws  *workspace
	hub *socketHub
}

// eventCallback is the payload of an events_api envelope: Slack's outer
// event (https://docs.slack.dev/apis/events-api/#callback-field), shaped like
// fixtures/slack/events.
type eventCallback struct {
	Token              string          `json:"token"`
	TeamID             string          `json:"team_id"`
	APIAppID           string          `json:"api_app_id"`
	Event              any             `json:"event"`
	Type               string          `json:"type"`
	EventID            string          `json:"event_id"`
	EventTime          int64           `json:"event_time"`
	Authorizations     []authorization `json:"authorizations"`
	IsExtSharedChannel bool            `json:"is_ext_shared_channel"`
	EventContext       string          `json:"event_context"`
}

type authorization struct {
	EnterpriseID        *string `json:"enterprise_id"`
	TeamID              string  `json:"team_id"`
	UserID              string  `json:"user_id"`
	IsBot               bool    `json:"is_bot"`
	IsEnterpriseInstall bool    `json:"is_enterprise_install"`
}

// messageEvent is a message or app_mention event: the message's fields plus
// where it happened.
type messageEvent struct {
	wireMessage
	Channel     string `json:"channel"`
	EventTS     string `json:"event_ts"`
	ChannelType string `json:"channel_type,omitempty"`
}

// changedEvent is a message_changed or message_deleted event.
type changedEvent struct {
	Type            string       `json:"type"`
	Subtype         string       `json:"subtype"`
	Hidden          bool         `json:"hidden"`
	Channel         string       `json:"channel"`
	ChannelType     string       `json:"channel_type"`
	TS              string       `json:"ts"`
	EventTS         string       `json:"event_ts"`
	DeletedTS       string       `json:"deleted_ts,omitempty"`
	Message         *wireMessage `json:"message,omitempty"`
	PreviousMessage *wireMessage `json:"previous_message,omitempty"`
}

// event is an inner event: it names its type for the event_context.
type event interface{ eventType() string }

func (e messageEvent) eventType() string   { return e.Type }
func (e changedEvent) eventType() string   { return e.Type }
func (e assistantEvent) eventType() string { return e.Type }

// assistantEvent is assistant_thread_started or assistant_thread_context_changed, in
// the shape of Slack's reference examples (bot/testdata/assistant).
type assistantEvent struct {
	Type    string          `json:"type"`
	Thread  assistantThread `json:"assistant_thread"`
	EventTS string          `json:"event_ts"`
}

type assistantThread struct {
	UserID    string        `json:"user_id"`
	Context   threadContext `json:"context"`
	ChannelID string        `json:"channel_id"`
	ThreadTS  string        `json:"thread_ts"`
}

type threadContext struct {
	ChannelID    string  `json:"channel_id,omitempty"`
	TeamID       string  `json:"team_id,omitempty"`
	EnterpriseID *string `json:"enterprise_id"`
}

// postLocked stores a new message, wakes waiters and, unless it is
// ephemeral, delivers its message event (and app_mention) to the bot.
func (e *eventsAPI) postLocked(ch *channelState, m *record) {
	e.ws.storeLocked(ch, m)
	if !m.Ephemeral {
		e.messageLocked(ch, m)
	}
}

// messageLocked delivers the events Slack sends for a new message: a
// message event (https://docs.slack.dev/reference/events/message) and, when
// someone other than the bot mentions the bot outside an IM, an app_mention
// event with its own event_id.
func (e *eventsAPI) messageLocked(ch *channelState, m *record) {
	cfg := &e.ws.cfg
	w := e.ws.wireLocked(ch, m)
	e.emitLocked(ch, messageEvent{wireMessage: w, Channel: ch.ID, EventTS: m.TS, ChannelType: ch.Type})

	if ch.Type == ChannelTypeIM || m.User == cfg.BotUserID || !mentions(m.Text, cfg.BotUserID) {
		return
	}
	mention := w
	mention.Type = "app_mention"
	mention.Subtype = ""
	mention.ParentUserID = ""
	mention.Username = ""
	// An app_mention carries the message's files (and upload) as its message event
	// does: Slack's payloads do, though its reference page for the event lists none.
	e.emitLocked(ch, messageEvent{wireMessage: mention, Channel: ch.ID, EventTS: m.TS})
}

// editLocked applies change to m, marks it edited by editor and delivers a
// message_changed event (https://docs.slack.dev/reference/events/message/message_changed).
func (e *eventsAPI) editLocked(ch *channelState, m *record, editor string, change func(*record)) {
	previous := e.ws.wireLocked(ch, m)
	change(m)
	m.Edited = true
	m.EditedTS = e.ws.nextTSLocked()
	snap := ch.snapshot(m)
	e.ws.notifyLocked(Update{Kind: UpdateMessageChanged, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS, Message: &snap})
	current := e.ws.wireLocked(ch, m)
	current.Edited = &edited{User: editor, TS: m.EditedTS}
	e.emitLocked(ch, changedEvent{
		Type:            "message",
		Subtype:         "message_changed",
		Hidden:          true,
		Channel:         ch.ID,
		ChannelType:     ch.Type,
		TS:              m.EditedTS,
		EventTS:         m.EditedTS,
		Message:         &current,
		PreviousMessage: &previous,
	})
}

// deleteLocked removes m (a parent with replies becomes a tombstone, as in
// Slack) and delivers a message_deleted event.
func (e *eventsAPI) deleteLocked(ch *channelState, m *record) {
	previous := e.ws.wireLocked(ch, m)
	if m.ThreadTS == "" && len(ch.replies(m.TS)) > 0 {
		m.Subtype = "tombstone"
		m.Text = "This message was deleted."
		m.Blocks, m.Attachments, m.Files, m.Reactions = nil, nil, nil, nil
		m.User, m.BotID = "USLACKBOT", ""
	} else {
		m.deleted = true
	}
	e.ws.notifyLocked(Update{Kind: UpdateMessageDeleted, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS})
	eventTS := e.ws.nextTSLocked()
	e.emitLocked(ch, changedEvent{
		Type:            "message",
		Subtype:         "message_deleted",
		Hidden:          true,
		Channel:         ch.ID,
		ChannelType:     ch.Type,
		TS:              eventTS,
		EventTS:         eventTS,
		DeletedTS:       m.TS,
		PreviousMessage: &previous,
	})
}

// assistantLocked delivers assistant_thread_started or
// assistant_thread_context_changed about the assistant thread threadTS of
// user's IM, who views contextChannel ("" for none).
func (e *eventsAPI) assistantLocked(im *channelState, eventType, user, threadTS, contextChannel string) {
	ctx := threadContext{ChannelID: contextChannel}
	if contextChannel != "" {
		ctx.TeamID = e.ws.cfg.TeamID
	}
	e.emitLocked(im, assistantEvent{Type: eventType, EventTS: e.ws.nextTSLocked(),
		Thread: assistantThread{UserID: user, Context: ctx, ChannelID: im.ID, ThreadTS: threadTS}})
}

// emitLocked wraps an inner event in an event_callback and delivers it in an
// events_api envelope.
func (e *eventsAPI) emitLocked(ch *channelState, ev event) {
	cfg := &e.ws.cfg
	cb := eventCallback{
		Token:     cfg.VerificationToken,
		TeamID:    cfg.TeamID,
		APIAppID:  cfg.AppID,
		Event:     ev,
		Type:      "event_callback",
		EventID:   e.ws.nextIDLocked("Ev"),
		EventTime: cfg.Now().Unix(),
		Authorizations: []authorization{{
			TeamID: cfg.TeamID,
			UserID: cfg.BotUserID,
			IsBot:  true,
		}},
		EventContext: eventContext(ev.eventType(), cfg.TeamID, cfg.AppID, ch.ID),
	}
	payload, err := json.Marshal(cb)
	if err != nil {
		cfg.Logger.Error("emulator: encode event", "err", err)
		return
	}
	e.hub.enqueueLocked(newEnvelope(EnvelopeEventsAPI, payload, 0))
}

// eventContext imitates Slack's opaque event_context value.
func eventContext(eventType, teamID, appID, channelID string) string {
	b, _ := json.Marshal(map[string]string{"et": eventType, "tid": teamID, "aid": appID, "cid": channelID})
	return "4-" + base64.RawURLEncoding.EncodeToString(b)
}
