package bot

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
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

// threadStatuses sets the status threads show for a Messenger (SetStatus) and remembers
// it: what each thread shows, the streams open in it, where Slack refused
// assistant.threads.setStatus, and the threads that carry StatusReaction instead. Its
// api, log, rotate and now are the Messenger's.
type threadStatuses struct {
	api *slack.Client
	log *slog.Logger
	// rotate is the Messenger's stream rotation (WithStreamRotation): a stream older
	// than rotate plus a minute is taken as ended by Slack. now is its clock.
	rotate time.Duration
	now    func() time.Time

	// mu guards noStatus, reacted, shown and posts.
	mu sync.Mutex
	// noStatus holds channels where assistant.threads.setStatus was refused, so the
	// fallback is used at once next time.
	noStatus map[string]bool
	// reacted holds threads that carry StatusReaction.
	reacted map[conversation.Key]bool
	// shown holds what is known of the status of threads (set); posts counts the
	// posts recorded in it.
	shown map[conversation.Key]threadStatus
	posts uint64
}

// newThreadStatuses returns threadStatuses that remember nothing yet.
func newThreadStatuses(api *slack.Client, log *slog.Logger, rotate time.Duration, now func() time.Time) *threadStatuses {
	return &threadStatuses{api: api, log: log, rotate: rotate, now: now,
		noStatus: map[string]bool{}, reacted: map[conversation.Key]bool{}, shown: map[conversation.Key]threadStatus{}}
}

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
// thread (for statusFresh, as Slack clears it after two minutes), and that a post of
// the bot in the thread (chat.postMessage, a file's share, chat.startStream) cleared
// it, as Slack does. While a stream is open in the thread
// (StartStream, until its Stop), a status is not set at all: the streamed message
// shows that the bot is working. A clear forgets the thread. Errors:
// assistant.threads.setStatus's other than Slack's refusal (ok:false), such as a
// *slack.RateLimitedError; else those of reactions.add or reactions.remove.
func (m *Messenger) SetStatus(ctx context.Context, key conversation.Key, status string) error {
	return m.status.set(ctx, key, status)
}

// statusPassing are the errors of assistant.threads.setStatus that say nothing of
// the channel: Slack's passing failures, a thread's own, and the token's (a reaction
// would fail as well). Any other error (the app
// is not an assistant there, lacks a scope, the workspace restricts it) means that
// setStatus will not work in the channel, so that its statuses are reactions from
// then on.
var statusPassing = map[string]bool{"internal_error": true, "fatal_error": true, "service_unavailable": true,
	"request_timeout": true, "ratelimited": true, "invalid_thread_ts": true, "thread_not_found": true, "message_not_found": true,
	"invalid_auth": true, "not_authed": true, "token_expired": true, "token_revoked": true, "account_inactive": true,
	"invalid_arguments": true}

// set is SetStatus.
func (s *threadStatuses) set(ctx context.Context, key conversation.Key, status string) error {
	s.mu.Lock()
	fallback := s.noStatus[key.ChannelID]
	st, known := s.shown[key]
	same := st.status == status && (status == "" || s.now().Sub(st.at) < statusFresh)
	if !fallback && known && (same || status != "" && s.streamingLocked(st)) {
		if status == "" && !s.streamingLocked(st) {
			delete(s.shown, key) // the turn is done with the thread
		}
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	if !fallback {
		err := s.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
			ChannelID: key.ChannelID, ThreadTS: key.ThreadTS, Status: status,
		})
		s.record(key, st.post, known, status, err)
		var slackErr slack.SlackErrorResponse
		if err == nil || !errors.As(err, &slackErr) || statusPassing[strings.TrimSpace(slackErr.Err)] {
			return err // a passing failure (internal_error, ratelimited, …): tried again next time
		}
		s.log.Debug("assistant.threads.setStatus refused; using a reaction", "channel", key.ChannelID, "error", err)
		s.mu.Lock()
		s.noStatus[key.ChannelID] = true
		s.mu.Unlock()
	}
	return s.react(ctx, key, status != "")
}

// record remembers status as the one the thread of key shows after a setStatus
// that ended with err. seen is the thread's post count, and known whether the thread
// was remembered, when the call began: a post or a clear since then leaves the status
// unknown.
func (s *threadStatuses) record(key conversation.Key, seen uint64, known bool, status string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.shown[key]
	switch {
	case err != nil || status == "" || ok != known || st.post != seen:
		delete(s.shown, key)
	case ok || len(s.shown) < maxStatusThreads:
		st.status, st.at = status, s.now()
		s.shown[key] = st
	}
}

// streamingLocked reports whether st has a stream open: started, not stopped, and
// younger than the age at which Slack ends it (the rotation's). s.mu is held.
func (s *threadStatuses) streamingLocked(st threadStatus) bool {
	return !st.stream.IsZero() && s.now().Sub(st.stream) < s.rotate+time.Minute
}

// postedIn records that the bot posted in the thread of key, which clears its status in
// Slack; stream is when the post started a stream (chat.startStream), zero otherwise.
func (s *threadStatuses) postedIn(key conversation.Key, stream time.Time) {
	if key.ThreadTS == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.shown[key]
	if !ok && len(s.shown) >= maxStatusThreads {
		return
	}
	s.posts++
	st.status, st.post = "", s.posts
	if !stream.IsZero() {
		st.stream = stream
	}
	s.shown[key] = st
}

// streamStopped records that the stream of key started at started was stopped.
func (s *threadStatuses) streamStopped(key conversation.Key, started time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.shown[key]; ok && st.stream.Equal(started) {
		st.stream = time.Time{}
		s.shown[key] = st
	}
}

// react adds or removes StatusReaction on the thread's parent message.
func (s *threadStatuses) react(ctx context.Context, key conversation.Key, on bool) error {
	s.mu.Lock()
	has := s.reacted[key]
	s.mu.Unlock()
	if has == on {
		return nil
	}
	ref := slack.NewRefToMessage(key.ChannelID, key.ThreadTS)
	var err error
	if on {
		err = s.api.AddReactionContext(ctx, StatusReaction, ref)
	} else {
		err = s.api.RemoveReactionContext(ctx, StatusReaction, ref)
	}
	var se slack.SlackErrorResponse
	if err != nil && !(errors.As(err, &se) && (se.Err == "already_reacted" || se.Err == "no_reaction")) {
		return err // the reaction is as it was: the next SetStatus tries again
	}
	s.mu.Lock()
	if on {
		s.reacted[key] = true
	} else {
		delete(s.reacted, key)
	}
	s.mu.Unlock()
	return nil
}
