package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// StatusReaction is the reaction put on a thread's parent message to show the bot is
// working where assistant.threads.setStatus is refused.
const StatusReaction = "hourglass_flowing_sand"

// maxHistoryPages bounds the conversations.replies pages read for earlier thread
// messages.
const maxHistoryPages = 10

// Messenger implements conversation.Messenger on the Slack Web API.
type Messenger struct {
	api *slack.Client
	me  Identity
	log *slog.Logger

	// mu guards noStatus and reacted.
	mu sync.Mutex
	// noStatus holds channels where assistant.threads.setStatus was refused, so the
	// fallback is used at once next time.
	noStatus map[string]bool
	// reacted holds threads that carry StatusReaction.
	reacted map[conversation.Key]bool
}

var _ conversation.Messenger = (*Messenger)(nil)

// NewMessenger returns a Messenger posting as the bot identified by me.
func NewMessenger(api *slack.Client, me Identity, log *slog.Logger) *Messenger {
	if log == nil {
		log = slog.Default()
	}
	return &Messenger{api: api, me: me, log: log, noStatus: map[string]bool{}, reacted: map[conversation.Key]bool{}}
}

// PostReply posts text in the thread of key with chat.postMessage, split into pieces of
// at most MaxMessageChars characters, and returns the ts of the last piece. Errors:
// Slack's (a *slack.RateLimitedError once slack-go's retries are spent, or ok:false as
// slack.SlackErrorResponse).
func (m *Messenger) PostReply(ctx context.Context, key conversation.Key, text string) (string, error) {
	pieces := SplitText(text, MaxMessageChars)
	if len(pieces) == 0 {
		pieces = []string{"(empty reply)"}
	}
	var ts string
	for i, p := range pieces {
		_, t, err := m.api.PostMessageContext(ctx, key.ChannelID,
			slack.MsgOptionText(p, false),
			slack.MsgOptionTS(key.ThreadTS),
			slack.MsgOptionDisableLinkUnfurl(),
		)
		if err != nil {
			return ts, fmt.Errorf("chat.postMessage (piece %d of %d): %w", i+1, len(pieces), err)
		}
		ts = t
	}
	return ts, nil
}

// SetStatus shows status ("is thinking…") in the thread with assistant.threads.setStatus,
// or clears it when status is empty. Where Slack refuses the method, it adds (and on
// clear removes) StatusReaction on the thread's parent message instead.
func (m *Messenger) SetStatus(ctx context.Context, key conversation.Key, status string) error {
	m.mu.Lock()
	fallback := m.noStatus[key.ChannelID]
	m.mu.Unlock()
	if !fallback {
		err := m.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
			ChannelID: key.ChannelID, ThreadTS: key.ThreadTS, Status: status,
		})
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

// react adds or removes StatusReaction on the thread's parent message.
func (m *Messenger) react(ctx context.Context, key conversation.Key, on bool) error {
	m.mu.Lock()
	has := m.reacted[key]
	m.reacted[key] = on
	if !on {
		delete(m.reacted, key)
	}
	m.mu.Unlock()
	if has == on {
		return nil
	}
	ref := slack.NewRefToMessage(key.ChannelID, key.ThreadTS)
	if on {
		return m.api.AddReactionContext(ctx, StatusReaction, ref)
	}
	return m.api.RemoveReactionContext(ctx, StatusReaction, ref)
}

// ThreadHistory returns up to limit human messages of the thread posted before the
// message before, oldest first, read with conversations.replies (at most
// maxHistoryPages pages). The thread's parent message is always kept when it is
// human, since it usually states the question; the rest are the newest.
func (m *Messenger) ThreadHistory(ctx context.Context, key conversation.Key, before string, limit int) ([]conversation.Message, error) {
	var all []conversation.Message
	params := &slack.GetConversationRepliesParameters{ChannelID: key.ChannelID, Timestamp: key.ThreadTS, Latest: before, Inclusive: false, Limit: 200}
	for page := 0; page < maxHistoryPages; page++ {
		msgs, more, cursor, err := m.api.GetConversationRepliesContext(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("conversations.replies: %w", err)
		}
		for _, msg := range msgs {
			if msg.BotID != "" || msg.SubType != "" || msg.User == "" || msg.User == m.me.UserID || msg.Timestamp == before {
				continue
			}
			all = append(all, conversation.Message{Role: conversation.RoleContext, UserID: msg.User, Text: msg.Text, SlackTS: msg.Timestamp})
		}
		if !more || cursor == "" {
			break
		}
		params.Cursor = cursor
	}
	if limit > 0 && len(all) > limit {
		all = append(all[:1], all[len(all)-limit+1:]...)
	}
	return all, nil
}
