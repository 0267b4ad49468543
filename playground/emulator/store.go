package emulator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Errors of the Server's own methods (the Web API answers Slack's codes).
var (
	ErrChannelNotFound = errors.New("emulator: channel not found")
	ErrUserNotFound    = errors.New("emulator: user not found")
	ErrMessageNotFound = errors.New("emulator: message not found")
	ErrNoConnection    = errors.New("emulator: no socket-mode connection")
	ErrClosed          = errors.New("emulator: server closed")
)

// statusLifetime is how long an assistant thread status shows without a
// reply (assistant.threads.setStatus: "A two minute timeout applies").
const statusLifetime = 2 * time.Minute

type threadStatus struct {
	status  string
	setAt   time.Time
	history []string
}

// resolveChannelLocked finds a conversation by ID. Like chat.postMessage, it
// also accepts a user ID and answers the IM between that user and the bot.
func (s *Server) resolveChannelLocked(id string) (*channelState, error) {
	if ch, ok := s.channels[id]; ok {
		return ch, nil
	}
	if _, ok := s.users[id]; ok {
		for _, cid := range s.channelIDs {
			if ch := s.channels[cid]; ch.Type == ChannelTypeIM && ch.User == id {
				return ch, nil
			}
		}
	}
	return nil, errCode("channel_not_found")
}

// findLocked returns the visible message with ts in ch, or nil.
func findLocked(ch *channelState, ts string) *record {
	for _, m := range ch.messages {
		if m.TS == ts && !m.deleted {
			return m
		}
	}
	return nil
}

// threadRootLocked maps a thread_ts argument to the thread's parent: the
// message itself, or its parent when it is a reply. It answers nil when the
// message does not exist.
func threadRootLocked(ch *channelState, threadTS string) *record {
	m := findLocked(ch, threadTS)
	if m == nil {
		return nil
	}
	if m.ThreadTS != "" && m.ThreadTS != m.TS {
		return findLocked(ch, m.ThreadTS)
	}
	return m
}

// threadLocked returns the visible messages of a thread, parent first; for
// threadTS "" the channel's top-level messages (and broadcast replies).
func threadLocked(ch *channelState, threadTS string) []*record {
	var out []*record
	for _, m := range ch.messages {
		if m.deleted {
			continue
		}
		if threadTS == "" {
			if m.ThreadTS == "" || m.ReplyBroadcast {
				out = append(out, m)
			}
			continue
		}
		if m.TS == threadTS || m.ThreadTS == threadTS {
			out = append(out, m)
		}
	}
	return out
}

// repliesLocked returns the visible replies to parent.
func repliesLocked(ch *channelState, parent *record) []*record {
	var out []*record
	for _, m := range ch.messages {
		if !m.deleted && m.ThreadTS == parent.TS && m != parent {
			out = append(out, m)
		}
	}
	return out
}

// snapshotLocked returns the exported view of a stored message.
func snapshotLocked(ch *channelState, m *record) Message {
	c := m.clone()
	if c.ThreadTS == "" {
		if n := len(repliesLocked(ch, m)); n > 0 {
			c.ThreadTS = c.TS
			c.ReplyCount = n
		}
	}
	return c
}

// insertLocked stores a new message, wakes waiters and, unless it is
// ephemeral, delivers its message event (and app_mention) to the bot.
func (s *Server) insertLocked(ch *channelState, m *record) {
	if m.Ephemeral {
		ch.ephemerals = append(ch.ephemerals, m)
		snap := m.clone()
		s.notifyLocked(Update{Kind: UpdateEphemeral, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS, Message: &snap})
		return
	}
	ch.messages = append(ch.messages, m) // timestamps increase, so the slice stays sorted
	if m.BotID == s.cfg.BotID && m.ThreadTS != "" {
		// Slack clears the thread's status when the app replies.
		if st := s.statuses[threadKey{ch.ID, m.ThreadTS}]; st != nil && st.status != "" {
			st.status = ""
			st.history = append(st.history, "")
			s.notifyLocked(Update{Kind: UpdateStatus, Channel: ch.ID, ThreadTS: m.ThreadTS})
		}
	}
	snap := snapshotLocked(ch, m)
	s.notifyLocked(Update{Kind: UpdateMessage, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS, Message: &snap})
	s.emitMessageLocked(ch, m)
}

// newReplyLocked fills the thread fields of m from a thread_ts argument.
// A thread_ts that names no message posts m to the channel, as Slack does
// when a thread's parent was deleted.
func newReplyLocked(ch *channelState, m *record, threadTS string, broadcast bool) {
	if threadTS == "" {
		return
	}
	root := threadRootLocked(ch, threadTS)
	if root == nil {
		return
	}
	m.ThreadTS = root.TS
	m.parentUserID = root.User
	if broadcast {
		m.ReplyBroadcast = true
		m.Subtype = "thread_broadcast"
	}
}

// PostUserMessage posts text as user, the way a person types a message in
// Slack's client: the message gets a client_msg_id and rich_text blocks, and
// the bot receives a message event and, when text mentions the bot
// (<@BotUserID>) outside an IM, an app_mention event with the same ts
// (https://docs.slack.dev/reference/events/app_mention). threadTS "" posts
// to the channel; otherwise the message is a reply in that thread.
// Each event goes to one socket-mode connection, or waits for one.
func (s *Server) PostUserMessage(channel, user, text, threadTS string) (ts string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, u, err := s.channelAndUserLocked(channel, user)
	if err != nil {
		return "", err
	}
	m := &record{Message: Message{
		Channel:     ch.ID,
		TS:          s.nextTSLocked(),
		User:        u.ID,
		Text:        text,
		ClientMsgID: newUUID(),
	}}
	m.Blocks = richTextBlocks(text, blockIDFor(m.TS))
	if threadTS != "" {
		if threadRootLocked(ch, threadTS) == nil {
			return "", fmt.Errorf("post in thread %s: %w", threadTS, ErrMessageNotFound)
		}
		newReplyLocked(ch, m, threadTS, false)
	}
	s.insertLocked(ch, m)
	return m.TS, nil
}

// PostBotMessage posts text as another bot (the member of Users with that
// BotID): the message has subtype bot_message, bot_id and username but no
// user, like Slack's sample (fixtures/slack/events/MessageBotPayload.json),
// so tests can check that the bot ignores other bots. A mention of the bot
// outside an IM also delivers an app_mention event, as for users.
func (s *Server) PostBotMessage(channel, botID, text, threadTS string) (ts string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, err := s.resolveChannelLocked(channel)
	if err != nil {
		return "", fmt.Errorf("%s: %w", channel, ErrChannelNotFound)
	}
	var bot *User
	for _, u := range s.users {
		if u.BotID == botID {
			bot = &u
			break
		}
	}
	if bot == nil {
		return "", fmt.Errorf("bot %s: %w", botID, ErrUserNotFound)
	}
	m := &record{Message: Message{
		Channel:  ch.ID,
		TS:       s.nextTSLocked(),
		BotID:    botID,
		Username: bot.Name,
		Subtype:  "bot_message",
		Text:     text,
	}}
	if threadTS != "" {
		if threadRootLocked(ch, threadTS) == nil {
			return "", fmt.Errorf("post in thread %s: %w", threadTS, ErrMessageNotFound)
		}
		newReplyLocked(ch, m, threadTS, false)
	}
	s.insertLocked(ch, m)
	return m.TS, nil
}

// EditUserMessage changes the text of a message a user posted and delivers
// a message_changed event, as when a person edits a message.
func (s *Server) EditUserMessage(channel, ts, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, err := s.resolveChannelLocked(channel)
	if err != nil {
		return fmt.Errorf("%s: %w", channel, ErrChannelNotFound)
	}
	m := findLocked(ch, ts)
	if m == nil {
		return fmt.Errorf("%s/%s: %w", channel, ts, ErrMessageNotFound)
	}
	s.editLocked(ch, m, m.User, func(m *record) {
		m.Text = text
		if m.ClientMsgID != "" {
			m.Blocks = richTextBlocks(text, blockIDFor(m.TS))
		}
	})
	return nil
}

// DeleteMessage deletes any message, as a workspace admin would, and
// delivers a message_deleted event.
func (s *Server) DeleteMessage(channel, ts string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, err := s.resolveChannelLocked(channel)
	if err != nil {
		return fmt.Errorf("%s: %w", channel, ErrChannelNotFound)
	}
	m := findLocked(ch, ts)
	if m == nil {
		return fmt.Errorf("%s/%s: %w", channel, ts, ErrMessageNotFound)
	}
	s.deleteLocked(ch, m)
	return nil
}

// editLocked applies change to m, marks it edited by editor and delivers a
// message_changed event (https://docs.slack.dev/reference/events/message/message_changed).
func (s *Server) editLocked(ch *channelState, m *record, editor string, change func(*record)) {
	previous := s.wireLocked(ch, m)
	change(m)
	m.Edited = true
	m.EditedTS = s.nextTSLocked()
	snap := snapshotLocked(ch, m)
	s.notifyLocked(Update{Kind: UpdateMessageChanged, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS, Message: &snap})
	current := s.wireLocked(ch, m)
	current.Edited = &edited{User: editor, TS: m.EditedTS}
	s.emitEventLocked(ch, changedEvent{
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
func (s *Server) deleteLocked(ch *channelState, m *record) {
	previous := s.wireLocked(ch, m)
	if m.ThreadTS == "" && len(repliesLocked(ch, m)) > 0 {
		m.Subtype = "tombstone"
		m.Text = "This message was deleted."
		m.Blocks, m.Attachments, m.Files, m.Reactions = nil, nil, nil, nil
		m.User, m.BotID = "USLACKBOT", ""
	} else {
		m.deleted = true
	}
	s.notifyLocked(Update{Kind: UpdateMessageDeleted, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS})
	eventTS := s.nextTSLocked()
	s.emitEventLocked(ch, changedEvent{
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

func (s *Server) channelAndUserLocked(channel, user string) (*channelState, User, error) {
	ch, err := s.resolveChannelLocked(channel)
	if err != nil {
		return nil, User{}, fmt.Errorf("%s: %w", channel, ErrChannelNotFound)
	}
	u, ok := s.users[user]
	if !ok {
		return nil, User{}, fmt.Errorf("%s: %w", user, ErrUserNotFound)
	}
	return ch, u, nil
}

func blockIDFor(ts string) string {
	return "b" + strings.ReplaceAll(ts, ".", "")[6:]
}

// Thread returns the visible messages of a thread, oldest (the parent)
// first, deleted messages left out. threadTS may be the ts of any message in
// the thread; "" returns the channel's top-level messages instead.
func (s *Server) Thread(channel, threadTS string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threadSnapshotLocked(channel, threadTS)
}

func (s *Server) threadSnapshotLocked(channel, threadTS string) []Message {
	ch, err := s.resolveChannelLocked(channel)
	if err != nil {
		return nil
	}
	if threadTS != "" {
		root := threadRootLocked(ch, threadTS)
		if root == nil {
			return nil
		}
		threadTS = root.TS
	}
	var out []Message
	for _, m := range threadLocked(ch, threadTS) {
		out = append(out, snapshotLocked(ch, m))
	}
	return out
}

// Message returns the visible message with ts in channel.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, err := s.resolveChannelLocked(channel)
	if err != nil {
		return Message{}, false
	}
	m := findLocked(ch, ts)
	if m == nil {
		return Message{}, false
	}
	return snapshotLocked(ch, m), true
}

// BotMessages returns the bot's visible messages in a thread (or, for
// threadTS "", at the channel's top level), oldest first.
func (s *Server) BotMessages(channel, threadTS string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.threadSnapshotLocked(channel, threadTS) {
		if m.BotID == s.cfg.BotID {
			out = append(out, m)
		}
	}
	return out
}

// WaitForMessages waits until the bot has posted at least n visible messages
// in the thread (or, for threadTS "", at the channel's top level) and
// returns the bot's messages there, oldest first. A streaming message counts
// from chat.startStream on; wait on !Streaming with WaitFor for its end.
func (s *Server) WaitForMessages(ctx context.Context, channel, threadTS string, n int) ([]Message, error) {
	var msgs []Message
	err := s.WaitFor(ctx, func() bool {
		msgs = s.BotMessages(channel, threadTS)
		return len(msgs) >= n
	})
	if err != nil {
		return msgs, fmt.Errorf("wait for %d bot messages in %s/%s (have %d): %w", n, channel, threadTS, len(msgs), err)
	}
	return msgs, nil
}

// Ephemerals returns the ephemeral messages shown to user in channel, oldest
// first; user "" returns everyone's.
func (s *Server) Ephemerals(channel, user string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, err := s.resolveChannelLocked(channel)
	if err != nil {
		return nil
	}
	var out []Message
	for _, m := range ch.ephemerals {
		if !m.deleted && (user == "" || m.Recipient == user) {
			out = append(out, m.clone())
		}
	}
	return out
}

// Status returns the assistant thread status last set with
// assistant.threads.setStatus in a thread, "" once cleared: by an empty
// status, by a reply from the bot in the thread, or two minutes after it was
// set, as in Slack.
func (s *Server) Status(channel, threadTS string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.statuses[threadKey{channel, threadTS}]
	if st == nil || s.cfg.Now().Sub(st.setAt) >= statusLifetime {
		return ""
	}
	return st.status
}

// StatusHistory returns the statuses a thread showed, oldest first: every
// status set with assistant.threads.setStatus, including empty ones, and ""
// for each clear caused by a reply of the bot. (The two-minute expiry is not
// recorded.)
func (s *Server) StatusHistory(channel, threadTS string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.statuses[threadKey{channel, threadTS}]; st != nil {
		return slices.Clone(st.history)
	}
	return nil
}
