package bot

import (
	"cmp"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/threadwright/threadwright/conversation"
)

// Drop reasons of edits and deletions.
const (
	dropUnchanged  = "message_changed without a change of text (an unfurl, attachments, a reaction)"
	dropNotAPerson = "message_changed or message_deleted of a bot's message"
)

// inputFromChange turns a message_changed or message_deleted event
// (https://docs.slack.dev/reference/events/message/message_changed,
// https://docs.slack.dev/reference/events/message/message_deleted) into a KindEdit
// or KindDelete input for the thread of the message (docs/architecture.md, "Edits and
// deletions"). An edit that leaves the text as it was (Slack adds an unfurl, an
// attachment, a reaction, or streams into a bot's message) and a change of a bot's
// message are dropped; whether the thread is the bot's is the intake's question, as
// for a thread reply without a mention.
func inputFromChange(e *slackevents.MessageEvent, team, eventID string, me Identity) (in conversation.Input, ok bool, reason string) {
	prev := e.PreviousMessage
	var now *slack.Msg
	if e.SubType == "message_changed" {
		now = e.Message
	}
	person := func(m *slack.Msg) bool {
		return m != nil && m.User != "" && m.User != me.UserID && m.BotID == "" && m.SubType != "bot_message"
	}
	switch {
	case e.SubType == "message_changed" && (!person(now) || (prev != nil && !person(prev))):
		return in, false, dropNotAPerson
	case e.SubType == "message_deleted" && prev != nil && !person(prev):
		return in, false, dropNotAPerson
	case now != nil && prev != nil && now.Text == prev.Text:
		return in, false, dropUnchanged
	}
	msg := conversation.UserMessage{Direct: e.ChannelType == "im"}
	if now != nil {
		msg.UserID, msg.Text, msg.TS, msg.ThreadTS = now.User, stripMention(now.Text, me.UserID), now.Timestamp, now.ThreadTimestamp
	} else {
		// Slack's reference example carries no previous_message: then the author is
		// unknown, and the message is taken as the top of its thread.
		msg.TS = e.DeletedTimeStamp
		if prev != nil {
			msg.UserID, msg.TS, msg.ThreadTS = prev.User, cmp.Or(msg.TS, prev.Timestamp), prev.ThreadTimestamp
		}
	}
	if e.Channel == "" || msg.TS == "" || team == "" {
		return in, false, dropIncomplete
	}
	if msg.ThreadTS == "" {
		msg.ThreadTS = msg.TS // a top-level message is its own thread
	}
	in = conversation.Input{
		EventID: eventID,
		Key:     conversation.Key{TeamID: team, ChannelID: e.Channel, ThreadTS: msg.ThreadTS},
		Message: &msg,
	}
	if now != nil {
		edited := cmp.Or(e.EventTimeStamp, e.TimeStamp)
		if now.Edited != nil && now.Edited.Timestamp != "" {
			edited = now.Edited.Timestamp
		}
		in.ID, in.Kind = conversation.EditInputID(team, e.Channel, msg.TS, edited), conversation.KindEdit
	} else {
		in.ID, in.Kind = conversation.DeleteInputID(team, e.Channel, msg.TS), conversation.KindDelete
	}
	return in, true, ""
}
