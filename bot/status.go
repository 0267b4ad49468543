package bot

import (
	"context"
	"errors"
	"time"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// maxStatusThreads bounds the threads whose status the Messenger remembers (about the
// turns running); past it a thread's status is set without memory, as before.
const maxStatusThreads = 10_000

// statusFresh is how long SetStatus trusts a status it set to be still shown: Slack
// clears a status two minutes after it was set, so the same status is set again
// after this.
const statusFresh = 90 * time.Second

// threadStatus is what the Messenger knows of the status a thread shows (see SetStatus).
type threadStatus struct {
	// status is the status last set, "" once the bot posted in the thread (Slack
	// clears the status then).
	status string
	// at is when status was set.
	at time.Time
	// post is the Messenger's count of posts at the thread's last post, so that a
	// setStatus answered after a post does not record a status the post cleared.
	post uint64
	// stream is when the stream open in the thread started; zero when none is.
	stream time.Time
}

// SetStatus shows status ("is thinking…") in the thread with assistant.threads.setStatus,
// or clears it when status is empty. Where Slack refuses the method, it adds (and on
// clear removes) StatusReaction on the thread's parent message instead.
//
// It calls Slack only when the status changes: it remembers the status it set in each
// thread (for statusFresh, as Slack clears it after two minutes), and that a post of the bot in the thread (chat.postMessage, a file's share,
// chat.startStream) cleared it, as Slack does. While a stream is open in the thread
// (StartStream, until its Stop), a status is not set at all: the streamed message
// shows that the bot is working. A clear forgets the thread.
func (m *Messenger) SetStatus(ctx context.Context, key conversation.Key, status string) error {
	m.mu.Lock()
	fallback := m.noStatus[key.ChannelID]
	st, known := m.shown[key]
	same := st.status == status && (status == "" || m.now().Sub(st.at) < statusFresh)
	if !fallback && known && (same || status != "" && m.streamingLocked(st)) {
		if status == "" && !m.streamingLocked(st) {
			delete(m.shown, key) // the turn is done with the thread
		}
		m.mu.Unlock()
		return nil
	}
	m.mu.Unlock()
	if !fallback {
		err := m.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
			ChannelID: key.ChannelID, ThreadTS: key.ThreadTS, Status: status,
		})
		m.recordStatus(key, st.post, known, status, err)
		var slackErr slack.SlackErrorResponse
		if err == nil || !errors.As(err, &slackErr) {
			return err
		}
		m.log.Debug("assistant.threads.setStatus refused; using a reaction", "channel", key.ChannelID, "error", err)
		m.mu.Lock()
		m.noStatus[key.ChannelID] = true
		m.mu.Unlock()
	}
	return m.react(ctx, key, status != "")
}

// recordStatus remembers status as the one the thread of key shows after a setStatus
// that ended with err. seen is the thread's post count, and known whether the thread
// was remembered, when the call began: a post or a clear since then leaves the status
// unknown.
func (m *Messenger) recordStatus(key conversation.Key, seen uint64, known bool, status string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.shown[key]
	switch {
	case err != nil || status == "" || ok != known || st.post != seen:
		delete(m.shown, key)
	case ok || len(m.shown) < maxStatusThreads:
		st.status, st.at = status, m.now()
		m.shown[key] = st
	}
}

// streamingLocked reports whether st has a stream open: started, not stopped, and
// younger than the age at which Slack ends it (the rotation's). m.mu is held.
func (m *Messenger) streamingLocked(st threadStatus) bool {
	return !st.stream.IsZero() && m.now().Sub(st.stream) < m.rotate+time.Minute
}

// postedIn records that the bot posted in the thread of key, which clears its status in
// Slack; stream is when the post started a stream (chat.startStream), zero otherwise.
func (m *Messenger) postedIn(key conversation.Key, stream time.Time) {
	if key.ThreadTS == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.shown[key]
	if !ok && len(m.shown) >= maxStatusThreads {
		return
	}
	m.posts++
	st.status, st.post = "", m.posts
	if !stream.IsZero() {
		st.stream = stream
	}
	m.shown[key] = st
}

// streamStopped records that the stream of key started at started was stopped.
func (m *Messenger) streamStopped(key conversation.Key, started time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.shown[key]; ok && st.stream.Equal(started) {
		st.stream = time.Time{}
		m.shown[key] = st
	}
}

// react adds or removes StatusReaction on the thread's parent message.
func (m *Messenger) react(ctx context.Context, key conversation.Key, on bool) error {
	m.mu.Lock()
	has := m.reacted[key]
	m.mu.Unlock()
	if has == on {
		return nil
	}
	ref := slack.NewRefToMessage(key.ChannelID, key.ThreadTS)
	var err error
	if on {
		err = m.api.AddReactionContext(ctx, StatusReaction, ref)
	} else {
		err = m.api.RemoveReactionContext(ctx, StatusReaction, ref)
	}
	var se slack.SlackErrorResponse
	if err != nil && !(errors.As(err, &se) && (se.Err == "already_reacted" || se.Err == "no_reaction")) {
		return err // the reaction is as it was: the next SetStatus tries again
	}
	m.mu.Lock()
	if on {
		m.reacted[key] = true
	} else {
		delete(m.reacted, key)
	}
	m.mu.Unlock()
	return nil
}
