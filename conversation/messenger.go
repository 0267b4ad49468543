package conversation

import (
	"context"
	"errors"
)

// AssistantThreads is implemented by a Messenger that can dress an assistant thread
// (bot.Messenger, with assistant.threads.setSuggestedPrompts and
// assistant.threads.setTitle). The Service uses it when the Messenger has it.
type AssistantThreads interface {
	// SetSuggestedPrompts shows prompts (at most MaxSuggestedPrompts) under title in
	// the assistant thread of key.
	SetSuggestedPrompts(ctx context.Context, key Key, title string, prompts []SuggestedPrompt) error
	// SetTitle sets the title of the assistant thread of key.
	SetTitle(ctx context.Context, key Key, title string) error
}

// DirectMessages is implemented by a Messenger that can tell a person's first direct
// message to the bot (bot.Messenger, with conversations.history).
type DirectMessages interface {
	// FirstMessage reports whether the message ts is the first of the DM of key.
	FirstMessage(ctx context.Context, key Key, ts string) (bool, error)
}

// Messenger is the way back to the chat (implemented by bot on the Slack Web API).
// Messages a turn posts carry a Tag, so that a re-run of the turn (after a crash, a
// lost lease or a failed save) finds them with Posted and replaces them rather than
// posting a second answer (docs/architecture.md, "Exactly one answer").
type Messenger interface {
	// PostReply posts text (Slack mrkdwn) as a reply in the thread of key and returns the
	// ts of the last message posted. Text longer than one Slack message allows is split
	// into several messages, never rejected. With tag.Replace it edits those messages
	// instead (see Tag).
	PostReply(ctx context.Context, key Key, text string, tag Tag) (string, error)
	// SetStatus shows that the bot is working on the thread (assistant.threads.setStatus,
	// or a fallback where that is unavailable); an empty status clears it.
	SetStatus(ctx context.Context, key Key, status string) error
	// ThreadHistory returns up to limit human messages of the thread that were posted
	// before the message with ts before, oldest first (conversations.replies). Messages
	// from bots are left out.
	ThreadHistory(ctx context.Context, key Key, before string, limit int) ([]Message, error)
	// PostCard posts c in the thread of key, or at the channel's top level when
	// key.ThreadTS is empty (a new thread), and returns its ts. With tag.Replace it
	// edits those messages instead (see Tag).
	PostCard(ctx context.Context, key Key, c Card, tag Tag) (string, error)
	// UpdateCard replaces the message ts in key's channel with c (chat.update).
	UpdateCard(ctx context.Context, key Key, ts string, c Card) error
	// Delete deletes the bot's message ts in key's channel (chat.delete).
	Delete(ctx context.Context, key Key, ts string) error
	// PostEphemeral shows text to userID only, in the thread of key (or the channel
	// when key.ThreadTS is empty) (chat.postEphemeral).
	PostEphemeral(ctx context.Context, key Key, userID string, text string) error
	// PostEphemeralCard is PostEphemeral with a card (a menu, for example).
	PostEphemeralCard(ctx context.Context, key Key, userID string, c Card) error
	// Upload uploads f to the thread of key (files upload v2). A file share carries no
	// metadata: Posted reports it by its name. With tag.Replace set, the file was
	// shared already and nothing is uploaded.
	Upload(ctx context.Context, key Key, f File, tag Tag) error
	// UserLocale returns the Slack locale of userID, such as "en-US" or "ru-RU"
	// (users.info with include_locale); "" when unknown.
	UserLocale(ctx context.Context, userID string) (string, error)
	// Posted returns the bot's messages in the thread of key (at the channel's top
	// level, newer than after, when key.ThreadTS is empty) that are tagged with
	// inputID, and its untagged messages newer than after (a stream cut before it
	// stopped, a file share), oldest first (conversations.replies or
	// conversations.history, with include_all_metadata).
	Posted(ctx context.Context, key Key, inputID, after string) ([]Posted, error)
}

// Permalinker is implemented by a Messenger that can link to a message
// (chat.getPermalink): answers typed in a channel link to the workflow's thread.
type Permalinker interface {
	// Permalink returns the link to the message ts in key's channel.
	Permalink(ctx context.Context, key Key, ts string) (string, error)
}

// Tag ties a message to the turn that posts it, as Slack message metadata
// (event_type "threadwright_turn"; event_payload input_id, n, piece, of, answer,
// final), so that Messenger.Posted finds it again.
type Tag struct {
	// InputID is the input whose turn posts the message; "" posts it untagged.
	InputID string
	// N numbers the turn's posts, from 1, in the order it makes them.
	N int
	// Answer marks a part of the turn's reply; Final its last part: once a Final
	// post is in the thread whole, the reply is complete.
	Answer, Final bool
	// Notice marks an answer that is a notice rather than the model's answer (an
	// error reply, a stopped turn's note): it gets no feedback buttons (docs/operations.md,
	// "Feedback").
	Notice bool
	// Broadcast also shows the reply in the channel (chat.postMessage's
	// reply_broadcast): a direct message's answer outside the assistant view, which
	// would otherwise hide behind "1 reply" (docs/tools.md, "Assistant view").
	Broadcast bool
	// Replace are the messages an earlier run of the turn posted in its place (from
	// Posted): they are edited (chat.update) into the new content, more messages are
	// posted if it needs more, and those left over are deleted.
	Replace []string
}

// Posted is a message of the bot's that Messenger.Posted found.
type Posted struct {
	TS string
	// Tag is the message's tag (its InputID "" when it has none; Replace unset).
	Tag Tag
	// Piece and Of place the message among the messages of its post (a long reply is
	// split): piece Piece (from 0) of Of.
	Piece, Of int
	// Text is the message's text.
	Text string
	// File is the name of the file the message shares ("" for none).
	File string
}

// StreamingMessenger is implemented by a Messenger that can stream a reply into the
// thread as it is written (Slack's chat.startStream, chat.appendStream,
// chat.stopStream). The assistant turn uses it when the Messenger has it.
type StreamingMessenger interface {
	// StartStream starts a streamed bot message in the thread of key, addressed to
	// userID (the person who asked). An error means streaming is refused here: the
	// turn posts its reply with PostReply instead. With tag.Replace, those messages
	// (a stream cut before it stopped, an earlier run's answer) are deleted first.
	// The tag is set on the message when it stops (chat.startStream takes no
	// metadata).
	StartStream(ctx context.Context, key Key, userID string, tag Tag) (Stream, error)
}

// Stream is a message being streamed (see StreamingMessenger).
type Stream interface {
	// Append adds markdown (Markdown, not mrkdwn) to the message. An error ends the
	// streaming: the caller stops the stream and falls back.
	Append(ctx context.Context, markdown string) error
	// Stop ends the message, setting its tag with final as Tag.Final (whether the
	// streamed text completes the reply), and returns its ts (known even when Stop
	// fails, once the stream was started). Errors: ErrStreamEnded when Slack had
	// ended the stream already (it expired, or the person's native Stop): its text
	// stays, without the tag.
	Stop(ctx context.Context, final bool) (ts string, err error)
	// Messages returns the ts of the messages the stream wrote, oldest first: more
	// than one once it continued in a fresh message before Slack's stream expiry
	// (docs/operations.md, "Reply bounds"). Their texts, in order, are what was
	// appended, each piece once.
	Messages() []string
}

// TextStopper is a Stream whose stop can carry the last of its text, so that the last
// piece costs no append of its own (chat.stopStream's markdown_text).
type TextStopper interface {
	// StopWithText adds markdown to the message, as Append does, and stops it, as
	// Stop does, in one call where it can; it always stops the stream. Errors:
	// ErrStreamEnded as Stop's; any other error leaves it unknown whether markdown
	// is in the message.
	StopWithText(ctx context.Context, markdown string, final bool) (ts string, err error)
}

// StopStreamWithText stops st with markdown as its last text: in the stop's own call
// when st is a TextStopper, else with Stream.Append, then Stream.Stop, final only when
// the append succeeded. It always stops the stream. Errors: the append's and the
// stop's, joined (ErrStreamEnded among them when Slack had ended the stream).
func StopStreamWithText(ctx context.Context, st Stream, markdown string, final bool) (ts string, err error) {
	if t, ok := st.(TextStopper); ok {
		return t.StopWithText(ctx, markdown, final)
	}
	err = st.Append(ctx, markdown)
	ts, stopErr := st.Stop(ctx, final && err == nil)
	return ts, errors.Join(err, stopErr)
}

// ErrStreamEnded is Stream.Stop's error when Slack had ended the stream already
// (chat.stopStream's message_not_in_streaming_state): its text stays, but it carries
// no tag, so the caller writes the answer into it (chat.update).
var ErrStreamEnded = errors.New("conversation: stream ended by Slack")

// ModalOpener is a Messenger that opens a modal (Slack's views.open) for the
// trigger_id of a slash command or a click, which Slack accepts for 3 seconds. The
// modal's submission carries a (signed, as the Messenger's buttons are).
type ModalOpener interface {
	OpenModal(ctx context.Context, triggerID string, a Action, m Modal) error
}
