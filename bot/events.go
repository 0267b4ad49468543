package bot

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slack-go/slack/slackevents"

	"github.com/threadwright/threadwright/conversation"
)

// Identity is who the bot is in its workspace, as auth.test reports it.
type Identity struct {
	TeamID   string // team_id
	UserID   string // the bot user's id (U…)
	BotID    string // bot_id (B…)
	UserName string // the bot user's name
	TeamName string
}

// Drop reasons, for debug logs and tests.
const (
	dropNotCallback   = "not an event_callback"
	dropOwnMessage    = "the bot's own message"
	dropBotMessage    = "another bot's message"
	dropSubtype       = "message subtype not handled"
	dropNoMention     = "channel message without a mention"
	dropMentionCopy   = "message event duplicating an app_mention"
	dropIncomplete    = "event lacks channel, user or ts"
	dropUnhandledType = "event type not handled"
)

// handledSubtypes are the message subtypes that carry a person's new message.
var handledSubtypes = map[string]bool{"": true, "thread_broadcast": true, "file_share": true}

// inputFromEvent turns an Events API event into a conversation input. It returns ok
// false and the reason when the event is not for the bot. teamID falls back to the
// bot's own when the event carries none.
func inputFromEvent(ev slackevents.EventsAPIEvent, me Identity) (in conversation.Input, ok bool, reason string) {
	cb, isCallback := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if ev.Type != slackevents.CallbackEvent || !isCallback {
		return in, false, dropNotCallback
	}
	team := cmp.Or(ev.TeamID, me.TeamID)
	if in, handled, ok, reason := agentInput(ev.InnerEvent.Data, team, cb.EventID); handled {
		return in, ok, reason // the agent view's events (agent.go)
	}
	var msg conversation.UserMessage
	var channel string
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AssistantThreadStartedEvent:
		return inputFromAssistantThread(conversation.AssistantThreadStarted, e.AssistantThread, e.EventTimestamp, team, cb.EventID)
	case *slackevents.AssistantThreadContextChangedEvent:
		return inputFromAssistantThread(conversation.AssistantThreadContextChanged, e.AssistantThread, e.EventTimestamp, team, cb.EventID)
	case *slackevents.AppMentionEvent:
		if e.BotID != "" || e.User == me.UserID {
			return in, false, dropBotMessage
		}
		channel = e.Channel
		// An app_mention carries the message's files array, as a message event does
		// (docs/architecture.md, "Files"); one marked upload without them is read back.
		msg = conversation.UserMessage{UserID: e.User, Text: e.Text, TS: e.TimeStamp, ThreadTS: e.ThreadTimeStamp, Mentioned: true,
			Files: fileRefs(e.Files), FileShare: e.Upload && len(e.Files) == 0}
	case *slackevents.MessageEvent:
		if e.SubType == "message_changed" || e.SubType == "message_deleted" {
			return inputFromChange(e, team, cb.EventID, me)
		}
		switch {
		case e.User == me.UserID || (me.BotID != "" && e.BotID == me.BotID):
			return in, false, dropOwnMessage
		case e.BotID != "" || e.SubType == "bot_message":
			return in, false, dropBotMessage
		case !handledSubtypes[e.SubType]:
			return in, false, dropSubtype
		}
		direct := e.ChannelType == "im"
		fileShare := e.SubType == "file_share"
		mentioned := !direct && mentions(e.Text, me.UserID)
		switch {
		case mentioned && !fileShare:
			return in, false, dropMentionCopy // Slack sends an app_mention for it too
		case !direct && !mentioned && e.ThreadTimeStamp == "":
			return in, false, dropNoMention
		}
		// A message with files that mentions the bot is taken as the mention: Slack
		// may send it with no app_mention (a file uploaded or shared with the
		// mention). When the app_mention comes too, it is the same input (the same
		// id, from the channel and ts) and the later of the two is a duplicate.
		channel = e.Channel
		var files []conversation.FileRef
		if e.Message != nil { // the message itself, which slack-go decodes with its files
			files = fileRefs(e.Message.Files)
		}
		msg = conversation.UserMessage{UserID: e.User, Text: e.Text, TS: e.TimeStamp, ThreadTS: e.ThreadTimeStamp, Mentioned: mentioned, Direct: direct,
			Files: files, FileShare: fileShare && len(files) == 0}
	default:
		return in, false, dropUnhandledType
	}
	if channel == "" || msg.UserID == "" || msg.TS == "" || team == "" {
		return in, false, dropIncomplete
	}
	if msg.ThreadTS == "" {
		msg.ThreadTS = msg.TS // a top-level message starts its own thread
	}
	msg.Text = stripMention(msg.Text, me.UserID)
	return conversation.Input{
		ID:      conversation.MessageInputID(team, channel, msg.TS),
		EventID: cb.EventID,
		Key:     conversation.Key{TeamID: team, ChannelID: channel, ThreadTS: msg.ThreadTS},
		Kind:    conversation.KindUserMessage,
		Message: &msg,
	}, true, ""
}

// mentions reports whether text @mentions userID (Slack encodes it as <@U123> or
// <@U123|name>).
func mentions(text, userID string) bool {
	_, _, ok := findMention(text, userID)
	return ok
}

// stripMention removes the bot's own mentions from text, with the spaces after each,
// and trims the result. It reads text once: a message of many mentions costs its
// length, not its length times their number.
func stripMention(text, userID string) string {
	var b strings.Builder
	for {
		i, j, ok := findMention(text, userID)
		if !ok {
			if b.Len() == 0 {
				return strings.TrimSpace(text)
			}
			b.WriteString(text)
			return strings.TrimSpace(b.String())
		}
		b.WriteString(text[:i])
		text = strings.TrimLeft(text[j:], " ")
	}
}

// findMention returns the byte range [i, j) of the first <@userID> or <@userID|name>
// in text.
func findMention(text, userID string) (i, j int, ok bool) {
	if userID == "" {
		return 0, 0, false
	}
	prefix := "<@" + userID
	for off := 0; ; {
		k := strings.Index(text[off:], prefix)
		if k < 0 {
			return 0, 0, false
		}
		i = off + k
		rest := text[i+len(prefix):]
		if strings.HasPrefix(rest, ">") || strings.HasPrefix(rest, "|") {
			if end := strings.IndexByte(rest, '>'); end >= 0 {
				return i, i + len(prefix) + end + 1, true
			}
		}
		off = i + len(prefix)
	}
}

// envelopeID reads the envelope_id of a raw Socket Mode frame, so that a frame slack-go
// could not decode can still be acked.
func envelopeID(raw json.RawMessage) (string, error) {
	var env struct {
		EnvelopeID string `json:"envelope_id"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return "", fmt.Errorf("read envelope_id: %w", err)
	}
	if env.EnvelopeID == "" {
		return "", fmt.Errorf("read envelope_id: frame has none")
	}
	return env.EnvelopeID, nil
}

// inputFromAssistantThread turns assistant_thread_started or
// assistant_thread_context_changed (https://docs.slack.dev/reference/events/assistant_thread_started)
// into a KindAssistantThread input for the thread, in the app's DM. Its ID is the
// thread and the event's event_ts, so that a redelivery is a duplicate while every
// change of context is kept.
func inputFromAssistantThread(event string, t slackevents.AssistantThread, eventTS, team, eventID string) (in conversation.Input, ok bool, reason string) {
	if t.ChannelID == "" || t.ThreadTimeStamp == "" || t.UserID == "" || team == "" {
		return in, false, dropIncomplete
	}
	return conversation.Input{
		ID:      fmt.Sprintf("assistant:%s:%s:%s:%s:%s", team, t.ChannelID, t.ThreadTimeStamp, event, cmp.Or(eventTS, eventID)),
		EventID: eventID,
		Key:     conversation.Key{TeamID: team, ChannelID: t.ChannelID, ThreadTS: t.ThreadTimeStamp},
		Kind:    conversation.KindAssistantThread,
		Thread: &conversation.AssistantThreadInput{
			Event:            event,
			UserID:           t.UserID,
			ContextChannelID: t.Context.ChannelID,
			ContextTeamID:    t.Context.TeamID,
		},
	}, true, ""
}
