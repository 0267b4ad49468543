package emulator

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// statusLifetime is how long an assistant thread status shows without a
// reply (assistant.threads.setStatus: "A two minute timeout applies").
const statusLifetime = 2 * time.Minute

// find returns the visible message with ts, or nil.
func (ch *channelState) find(ts string) *record {
	if m := ch.byTS[ts]; m != nil && !m.deleted {
		return m
	}
	return nil
}

// root maps a thread_ts argument to the thread's parent: the message itself,
// or its parent when it is a reply. It answers nil when the message does not
// exist.
func (ch *channelState) root(threadTS string) *record {
	m := ch.find(threadTS)
	if m == nil {
		return nil
	}
	if m.ThreadTS != "" && m.ThreadTS != m.TS {
		return ch.find(m.ThreadTS)
	}
	return m
}

// thread returns the visible messages of a thread, parent first; for
// threadTS "" the channel's top-level messages (and broadcast replies).
func (ch *channelState) thread(threadTS string) []*record {
	var out []*record
	if threadTS == "" {
		for _, m := range ch.messages {
			if !m.deleted && (m.ThreadTS == "" || m.ReplyBroadcast) {
				out = append(out, m)
			}
		}
		return out
	}
	if m := ch.find(threadTS); m != nil {
		out = append(out, m)
	}
	return append(out, ch.replies(threadTS)...)
}

// replies returns the visible replies to the message parentTS, in ts order.
func (ch *channelState) replies(parentTS string) []*record {
	var out []*record
	for _, m := range ch.byThread[parentTS] {
		if !m.deleted {
			out = append(out, m)
		}
	}
	return out
}

// snapshot returns the exported view of a stored message.
func (ch *channelState) snapshot(m *record) Message {
	c := m.clone()
	if c.ThreadTS == "" {
		if n := len(ch.replies(m.TS)); n > 0 {
			c.ThreadTS = c.TS
			c.ReplyCount = n
		}
	}
	return c
}

// ephemeral returns the ephemeral message ts shown to user, or nil.
func (ch *channelState) ephemeral(ts, user string) *record {
	for _, e := range ch.ephemerals {
		if e.TS == ts && e.Recipient == user && !e.deleted {
			return e
		}
	}
	return nil
}

// reply fills the thread fields of m from a thread_ts argument. A thread_ts
// that names no message posts m to the channel, as Slack does when a
// thread's parent was deleted.
func (ch *channelState) reply(m *record, threadTS string, broadcast bool) {
	if threadTS == "" {
		return
	}
	root := ch.root(threadTS)
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

// botRecordLocked starts a new message of the bot in ch, with a new ts.
func (ws *workspace) botRecordLocked(ch *channelState) *record {
	return &record{Message: Message{Channel: ch.ID, TS: ws.nextTSLocked(), User: ws.cfg.BotUserID, BotID: ws.cfg.BotID}}
}

// messageLocked finds the visible message ts of channel for the Server's own
// methods (ErrChannelNotFound, ErrMessageNotFound).
func (ws *workspace) messageLocked(channel, ts string) (*channelState, *record, error) {
	ch, err := ws.findChannelLocked(channel)
	if err != nil {
		return nil, nil, err
	}
	m := ch.find(ts)
	if m == nil {
		return nil, nil, fmt.Errorf("%s/%s: %w", channel, ts, ErrMessageNotFound)
	}
	return ch, m, nil
}

// storeLocked stores a new message and wakes waiters; a reply of the bot
// clears its thread's status, as in Slack. It delivers no event (see
// eventsAPI).
func (ws *workspace) storeLocked(ch *channelState, m *record) {
	if m.Ephemeral {
		ch.ephemerals = append(ch.ephemerals, m)
		snap := m.clone()
		ws.notifyLocked(Update{Kind: UpdateEphemeral, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS, Message: &snap})
		return
	}
	ch.messages = append(ch.messages, m) // timestamps increase, so the slice stays sorted
	ch.byTS[m.TS] = m
	if m.ThreadTS != "" {
		ch.byThread[m.ThreadTS] = append(ch.byThread[m.ThreadTS], m)
	}
	if m.BotID == ws.cfg.BotID && m.ThreadTS != "" {
		ws.clearStatusLocked(threadKey{ch.ID, m.ThreadTS})
	}
	snap := ch.snapshot(m)
	ws.notifyLocked(Update{Kind: UpdateMessage, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS, Message: &snap})
}

// changeLocked applies change to m without an event (streaming, reactions).
func (ws *workspace) changeLocked(ch *channelState, m *record, change func(*record)) {
	change(m)
	snap := ch.snapshot(m)
	ws.notifyLocked(Update{Kind: UpdateMessageChanged, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS, Message: &snap})
}

// wireLocked renders a stored message for the Web API and events.
func (ws *workspace) wireLocked(ch *channelState, m *record) wireMessage {
	return wireOf(m, ch.replies(m.TS), &ws.cfg, ws.base)
}

// Thread returns the visible messages of a thread, oldest (the parent)
// first, deleted messages left out. threadTS may be the ts of any message in
// the thread; "" returns the channel's top-level messages instead.
func (ws *workspace) Thread(channel, threadTS string) []Message {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.threadSnapshotLocked(channel, threadTS)
}

func (ws *workspace) threadSnapshotLocked(channel, threadTS string) []Message {
	ch, ok := ws.channelLocked(channel)
	if !ok {
		return nil
	}
	if threadTS != "" {
		root := ch.root(threadTS)
		if root == nil {
			return nil
		}
		threadTS = root.TS
	}
	var out []Message
	for _, m := range ch.thread(threadTS) {
		out = append(out, ch.snapshot(m))
	}
	return out
}

// Message returns the visible message with ts in channel.
func (ws *workspace) Message(channel, ts string) (Message, bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ch, ok := ws.channelLocked(channel)
	if !ok {
		return Message{}, false
	}
	m := ch.find(ts)
	if m == nil {
		return Message{}, false
	}
	return ch.snapshot(m), true
}

// BotMessages returns the bot's visible messages in a thread (or, for
// threadTS "", at the channel's top level), oldest first.
func (ws *workspace) BotMessages(channel, threadTS string) []Message {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var out []Message
	for _, m := range ws.threadSnapshotLocked(channel, threadTS) {
		if m.BotID == ws.cfg.BotID {
			out = append(out, m)
		}
	}
	return out
}

// WaitForMessages waits until the bot has posted at least n visible messages
// in the thread (or, for threadTS "", at the channel's top level) and
// returns the bot's messages there, oldest first. A streaming message counts
// from chat.startStream on; wait on !Streaming with WaitFor for its end.
func (ws *workspace) WaitForMessages(ctx context.Context, channel, threadTS string, n int) ([]Message, error) {
	var msgs []Message
	err := ws.WaitFor(ctx, func() bool {
		msgs = ws.BotMessages(channel, threadTS)
		return len(msgs) >= n
	})
	if err != nil {
		return msgs, fmt.Errorf("wait for %d bot messages in %s/%s (have %d): %w", n, channel, threadTS, len(msgs), err)
	}
	return msgs, nil
}

// Ephemerals returns the ephemeral messages shown to user in channel, oldest
// first; user "" returns everyone's.
func (ws *workspace) Ephemerals(channel, user string) []Message {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ch, ok := ws.channelLocked(channel)
	if !ok {
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

// setStatusLocked sets a thread's assistant status ("" clears it).
func (ws *workspace) setStatusLocked(key threadKey, status string) {
	st := ws.statuses[key]
	if st == nil {
		st = &threadStatus{}
		ws.statuses[key] = st
	}
	st.status = status
	st.setAt = ws.cfg.Now()
	st.history = append(st.history, st.status)
	ws.notifyLocked(Update{Kind: UpdateStatus, Channel: key.channel, ThreadTS: key.threadTS, Status: st.status})
}

// clearStatusLocked clears a thread's status shown, as a reply of the bot does.
func (ws *workspace) clearStatusLocked(key threadKey) {
	if st := ws.statuses[key]; st != nil && st.status != "" {
		st.status = ""
		st.history = append(st.history, "")
		ws.notifyLocked(Update{Kind: UpdateStatus, Channel: key.channel, ThreadTS: key.threadTS})
	}
}

// Status returns the assistant thread status last set with
// assistant.threads.setStatus in a thread, "" once cleared: by an empty
// status, by a reply from the bot in the thread, or two minutes after it was
// set, as in Slack.
func (ws *workspace) Status(channel, threadTS string) string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	st := ws.statuses[threadKey{channel, threadTS}]
	if st == nil || !st.shows(ws.cfg.Now()) {
		return ""
	}
	return st.status
}

// shows reports whether the status is set and has not expired at now.
func (st *threadStatus) shows(now time.Time) bool {
	return st.status != "" && now.Sub(st.setAt) < statusLifetime
}

// StatusHistory returns the statuses a thread showed, oldest first: every
// status set with assistant.threads.setStatus, including empty ones, and ""
// for each clear caused by a reply of the bot. (The two-minute expiry is not
// recorded.)
func (ws *workspace) StatusHistory(channel, threadTS string) []string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if st := ws.statuses[threadKey{channel, threadTS}]; st != nil {
		return slices.Clone(st.history)
	}
	return nil
}
