package emulator

import (
	"encoding/base64"
	"encoding/json"
)

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

// emitMessageLocked delivers the events Slack sends for a new message: a
// message event (https://docs.slack.dev/reference/events/message) and, when
// someone other than the bot mentions the bot outside an IM, an app_mention
// event with its own event_id.
func (s *Server) emitMessageLocked(ch *channelState, m *record) {
	w := s.wireLocked(ch, m)
	s.emitEventLocked(ch, messageEvent{wireMessage: w, Channel: ch.ID, EventTS: m.TS, ChannelType: ch.Type})

	if ch.Type == ChannelTypeIM || m.User == s.cfg.BotUserID || !mentions(m.Text, s.cfg.BotUserID) {
		return
	}
	mention := w
	mention.Type = "app_mention"
	mention.Subtype = ""
	mention.ParentUserID = ""
	mention.Username = ""
	s.emitEventLocked(ch, messageEvent{wireMessage: mention, Channel: ch.ID, EventTS: m.TS})
}

// emitEventLocked wraps an inner event in an event_callback and delivers it
// in an events_api envelope.
func (s *Server) emitEventLocked(ch *channelState, event any) {
	eventType := "message"
	switch e := event.(type) {
	case messageEvent:
		eventType = e.Type
	case changedEvent:
		eventType = e.Type
	case assistantEvent:
		eventType = e.Type
	}
	cb := eventCallback{
		Token:     s.cfg.VerificationToken,
		TeamID:    s.cfg.TeamID,
		APIAppID:  s.cfg.AppID,
		Event:     event,
		Type:      "event_callback",
		EventID:   s.nextIDLocked("Ev"),
		EventTime: s.cfg.Now().Unix(),
		Authorizations: []authorization{{
			TeamID: s.cfg.TeamID,
			UserID: s.cfg.BotUserID,
			IsBot:  true,
		}},
		EventContext: eventContext(eventType, s.cfg.TeamID, s.cfg.AppID, ch.ID),
	}
	payload, err := json.Marshal(cb)
	if err != nil {
		s.cfg.Logger.Error("emulator: encode event", "err", err)
		return
	}
	s.enqueueLocked(newEnvelope(EnvelopeEventsAPI, payload, 0))
}

// eventContext imitates Slack's opaque event_context value.
func eventContext(eventType, teamID, appID, channelID string) string {
	b, _ := json.Marshal(map[string]string{"et": eventType, "tid": teamID, "aid": appID, "cid": channelID})
	return "4-" + base64.RawURLEncoding.EncodeToString(b)
}
