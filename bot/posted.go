package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// TurnEventType is the event_type of the message metadata that tags the bot's
// messages with the turn that posted them (conversation.Tag). Its event_payload is
// turnPayload: {"input_id": "msg:T1:C1:1700000000.000100", "n": 1, "piece": 0,
// "of": 2, "answer": true, "final": true}.
const TurnEventType = "threadwright_turn"

// maxPostedPages bounds the conversations.replies or conversations.history pages
// Posted reads.
const maxPostedPages = 20

// postedPageSize is the limit of each page Posted reads.
const postedPageSize = 200

// turnPayload is the event_payload of TurnEventType metadata.
type turnPayload struct {
	InputID string `json:"input_id"`
	// N numbers the turn's posts, from 1 (conversation.Tag.N).
	N int `json:"n"`
	// Piece (from 0) and Of place the message among the messages of its post.
	Piece  int  `json:"piece"`
	Of     int  `json:"of"`
	Answer bool `json:"answer"`
	Final  bool `json:"final"`
}

// tagMetadata returns the message metadata of piece (from 0) of of messages posted
// with tag; ok is false for an untagged post (tag.InputID empty).
func tagMetadata(tag conversation.Tag, piece, of int) (meta slack.SlackMetadata, ok bool) {
	if tag.InputID == "" {
		return slack.SlackMetadata{}, false
	}
	return slack.SlackMetadata{
		EventType: TurnEventType,
		EventPayload: map[string]any{
			"input_id": tag.InputID,
			"n":        tag.N,
			"piece":    piece,
			"of":       of,
			"answer":   tag.Answer,
			"final":    tag.Final,
		},
	}, true
}

// tagOption sets the metadata of tagMetadata (the metadata argument of chat.postMessage,
// chat.update and chat.stopStream); it does nothing for an untagged post.
func tagOption(tag conversation.Tag, piece, of int) slack.MsgOption {
	meta, ok := tagMetadata(tag, piece, of)
	if !ok {
		return slack.MsgOptionCompose()
	}
	return slack.MsgOptionMetadata(meta)
}

// readTag decodes a message's TurnEventType metadata. It returns ok false when the
// message has none, or metadata of another event type, or a payload that does not
// decode or names no input.
func readTag(meta slack.SlackMetadata) (p turnPayload, ok bool) {
	if meta.EventType != TurnEventType || meta.EventPayload == nil {
		return p, false
	}
	raw, err := json.Marshal(meta.EventPayload)
	if err != nil {
		return p, false
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.InputID == "" || p.Of < 1 || p.Piece < 0 || p.Piece >= p.Of {
		return turnPayload{}, false
	}
	return p, true
}

// Posted returns what the bot already posted for input inputID in the thread of key,
// oldest first: its messages tagged with inputID (TurnEventType metadata), and its
// untagged messages (or messages whose metadata does not decode) newer than after,
// such as a stream cut before chat.stopStream or a file share (Posted.File names its
// first file). Messages tagged for other inputs are never returned; with after
// empty, no untagged message is. Timestamps are compared as numbers.
//
// In a thread it reads the thread with conversations.replies; at the channel's top
// level (key.ThreadTS empty) the messages newer than after with
// conversations.history (oldest=after). Both ask for include_all_metadata, in pages
// of postedPageSize, at most maxPostedPages pages: in a longer thread, the messages
// past them are not looked at. The bot's messages are those with its bot_id or its
// user id. Errors: Slack's, wrapped with the method's name.
func (m *Messenger) Posted(ctx context.Context, key conversation.Key, inputID, after string) ([]conversation.Posted, error) {
	var out []conversation.Posted
	keep := func(msgs []slack.Message) {
		for _, msg := range msgs {
			if p, ok := posted(m.me, msg, inputID, after); ok {
				out = append(out, p)
			}
		}
	}
	var err error
	if key.ThreadTS != "" {
		err = m.readReplies(ctx, key, keep)
	} else {
		err = m.readHistory(ctx, key, after, keep)
	}
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b conversation.Posted) int { return conversation.CompareTS(a.TS, b.TS) })
	return out, nil
}

// readReplies reads the thread of key with conversations.replies (include_all_metadata)
// and hands each page to keep.
func (m *Messenger) readReplies(ctx context.Context, key conversation.Key, keep func([]slack.Message)) error {
	params := &slack.GetConversationRepliesParameters{
		ChannelID: key.ChannelID, Timestamp: key.ThreadTS, Limit: postedPageSize, IncludeAllMetadata: true,
	}
	for page := 0; page < maxPostedPages; page++ {
		msgs, more, cursor, err := m.api.GetConversationRepliesContext(ctx, params)
		if err != nil {
			return fmt.Errorf("conversations.replies: %w", err)
		}
		keep(msgs)
		if !more || cursor == "" {
			return nil
		}
		params.Cursor = cursor
	}
	m.log.Warn("thread too long to read whole for the bot's earlier messages", "channel", key.ChannelID, "thread_ts", key.ThreadTS, "pages", maxPostedPages)
	return nil
}

// readHistory reads the channel's top-level messages newer than after with
// conversations.history (include_all_metadata) and hands each page to keep.
func (m *Messenger) readHistory(ctx context.Context, key conversation.Key, after string, keep func([]slack.Message)) error {
	params := &slack.GetConversationHistoryParameters{
		ChannelID: key.ChannelID, Oldest: after, Limit: postedPageSize, IncludeAllMetadata: true,
	}
	for page := 0; page < maxPostedPages; page++ {
		resp, err := m.api.GetConversationHistoryContext(ctx, params)
		if err != nil {
			return fmt.Errorf("conversations.history: %w", err)
		}
		keep(resp.Messages)
		if !resp.HasMore || resp.ResponseMetaData.NextCursor == "" {
			return nil
		}
		params.Cursor = resp.ResponseMetaData.NextCursor
	}
	m.log.Warn("channel too busy to read whole for the bot's earlier messages", "channel", key.ChannelID, "oldest", after, "pages", maxPostedPages)
	return nil
}

// posted reports whether msg is one Posted returns for the bot me, and what it
// returns for it.
func posted(me Identity, msg slack.Message, inputID, after string) (conversation.Posted, bool) {
	own := (me.BotID != "" && msg.BotID == me.BotID) || (me.UserID != "" && msg.User == me.UserID)
	if !own {
		return conversation.Posted{}, false
	}
	p := conversation.Posted{TS: msg.Timestamp, Text: msg.Text}
	if len(msg.Files) > 0 {
		p.File = msg.Files[0].Name
	}
	if t, ok := readTag(msg.Metadata); ok {
		if t.InputID != inputID {
			return conversation.Posted{}, false
		}
		p.Tag = conversation.Tag{InputID: t.InputID, N: t.N, Answer: t.Answer, Final: t.Final}
		p.Piece, p.Of = t.Piece, t.Of
		return p, true
	}
	if after == "" || conversation.CompareTS(msg.Timestamp, after) <= 0 {
		return conversation.Posted{}, false
	}
	return p, true
}
