package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// StatusReaction is the reaction put on a thread's parent message to show the bot is
// working where assistant.threads.setStatus is refused.
const StatusReaction = "hourglass_flowing_sand"

// maxHistoryPages bounds the conversations.replies pages read for earlier thread
// messages.
const maxHistoryPages = 10

// DefaultMaxReplyMessages is the most messages one reply takes when
// WithMaxReplyMessages does not say otherwise.
const DefaultMaxReplyMessages = 10

// OverflowFileName is the name of the file that holds the rest of a reply too long for
// its messages (see PostReply).
const OverflowFileName = "rest-of-answer.txt"

// overflowNote ends the last message of a reply whose rest is in OverflowFileName;
// shortenedEphemeralNote an ephemeral message cut to its messages.
const (
	overflowNote           = "_✂ The rest of the answer is in the attached file, " + OverflowFileName + "._"
	shortenedEphemeralNote = "_✂ Shortened to fit Slack._"
)

// errStreamFull is returned by a stream's Append past MaxMessageChars characters.
var errStreamFull = errors.New("bot: streamed message full")

// Messenger implements conversation.Messenger on the Slack Web API.
type Messenger struct {
	api *slack.Client
	me  Identity
	log *slog.Logger
	// maxReplies is the most messages of one reply (WithMaxReplyMessages).
	maxReplies int
	// rotate is the age at which a streamed answer continues in a fresh message
	// (WithStreamRotation); now is the clock it is measured with.
	rotate time.Duration
	now    func() time.Time
	// status sets and remembers the status of threads (SetStatus); the Messenger's
	// posts tell it which statuses Slack cleared.
	status *threadStatuses
	// sessions is told of each stream started and stopped (WithSessions); nil: none
	// is.
	sessions *Agent
}

var _ conversation.Messenger = (*Messenger)(nil)

// MessengerOption sets an option of NewMessenger.
type MessengerOption func(*Messenger)

// WithMaxReplyMessages sets the most messages one reply (PostReply, PostEphemeral)
// takes; n < 1 keeps DefaultMaxReplyMessages.
func WithMaxReplyMessages(n int) MessengerOption {
	return func(m *Messenger) {
		if n >= 1 {
			m.maxReplies = n
		}
	}
}

// WithSessions tells a of every stream the Messenger starts, and whether
// chat.stopStream stopped it: Slack sets the agent session of the stream's thread
// active then (chat.stopStream's session_status, "active" by default), so a's
// SetSessionStatus need not set it again after the thread's last stream (see
// Agent.SetSessionStatus).
func WithSessions(a *Agent) MessengerOption {
	return func(m *Messenger) { m.sessions = a }
}

// NewMessenger returns a Messenger posting as the bot identified by me.
func NewMessenger(api *slack.Client, me Identity, log *slog.Logger, opts ...MessengerOption) *Messenger {
	if log == nil {
		log = slog.Default()
	}
	m := &Messenger{api: api, me: me, log: log, maxReplies: DefaultMaxReplyMessages, rotate: DefaultStreamRotation, now: time.Now}
	for _, o := range opts {
		o(m)
	}
	m.status = newThreadStatuses(api, log, m.rotate, m.now)
	return m
}

// PostReply posts text in the thread of key with chat.postMessage, its special
// mentions defused (DefuseMentions), split into pieces of at most MaxMessageChars
// characters, and returns the ts of the last piece. Piece i of n carries tag as
// message metadata (piece i, of n; see TurnEventType). With tag.Replace, the first
// len(tag.Replace) pieces are written into those messages with chat.update instead,
// further pieces are posted, and the messages left over are deleted with chat.delete.
//
// A reply takes at most the Messenger's maximum of messages (WithMaxReplyMessages).
// Past it, the last message ends with a note, and the rest of the text is uploaded
// into the thread as OverflowFileName after the messages; with tag.Replace, not when
// the thread holds that file already, newer than the first replaced message.
//
// Errors: Slack's (a *slack.RateLimitedError once slack-go's retries are spent, or
// ok:false as slack.SlackErrorResponse), wrapped with the method's name.
func (m *Messenger) PostReply(ctx context.Context, key conversation.Key, text string, tag conversation.Tag) (string, error) {
	return m.postReply(ctx, key, text, tag, nil)
}

// postReply is PostReply whose last message, when lastBlocks is set, carries the
// blocks lastBlocks makes of its text.
func (m *Messenger) postReply(ctx context.Context, key conversation.Key, text string, tag conversation.Tag, lastBlocks func(text string) []slack.Block) (string, error) {
	pieces, rest := replyPieces(DefuseMentions(text), m.maxReplies)
	msgs := make([][]slack.MsgOption, len(pieces))
	for i, p := range pieces {
		msgs[i] = []slack.MsgOption{slack.MsgOptionText(p, false), slack.MsgOptionDisableLinkUnfurl()}
		switch {
		case lastBlocks != nil && i == len(pieces)-1:
			msgs[i] = append(msgs[i], slack.MsgOptionBlocks(lastBlocks(p)...))
		case i < len(tag.Replace):
			// An edited message's blocks (a stream's Stop, an answer's feedback
			// buttons) would stay and hide the new text: clear them (blocks=[]).
			msgs[i] = append(msgs[i], slack.MsgOptionBlocks())
		}
	}
	ts, err := m.put(ctx, key, msgs, tag)
	if err != nil || rest == "" {
		return ts, err
	}
	return ts, m.uploadRest(ctx, key, rest, tag)
}

// replyPieces splits text into at most limit messages (limit >= 1). When it needs more,
// the last message is cut short to end with overflowNote and rest is the text left
// over.
func replyPieces(text string, limit int) (pieces []string, rest string) {
	pieces, rest = splitFirst(text, MaxMessageChars, limit)
	if len(pieces) == 0 {
		return []string{"(empty reply)"}, ""
	}
	if rest == "" {
		return pieces, ""
	}
	pieces, rest = splitFirst(text, MaxMessageChars, limit-1)
	last, rest := splitFirst(rest, MaxMessageChars-len([]rune(overflowNote))-2, 1)
	if rest == "" {
		return append(pieces, last...), ""
	}
	return append(pieces, last[0]+"\n\n"+overflowNote), rest
}

// uploadRest uploads rest, the mrkdwn of a reply its messages could not hold, as
// OverflowFileName in the thread of key: plain text, its special mentions defused.
// With tag.Replace (a re-run editing an earlier run's reply), an OverflowFileName the
// bot shared after the first replaced message stands.
func (m *Messenger) uploadRest(ctx context.Context, key conversation.Key, rest string, tag conversation.Tag) error {
	if len(tag.Replace) > 0 {
		posted, err := m.Posted(ctx, key, tag.InputID, tag.Replace[0])
		if err != nil {
			return fmt.Errorf("upload %s: %w", OverflowFileName, err)
		}
		for _, p := range posted {
			if p.File == OverflowFileName {
				return nil
			}
		}
	}
	content := DefuseMentions(mrkdwnUnescaper.Replace(rest))
	return m.upload(ctx, key, conversation.File{Name: OverflowFileName, Title: "Rest of the answer", Content: []byte(content)})
}

// mrkdwnUnescaper undoes mrkdwn's escaping of &, < and > for text shown as a file.
var mrkdwnUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// put writes the messages of one post: it edits the messages of tag.Replace (chat.update)
// and posts the rest (chat.postMessage, in the thread of key or at the channel's top
// level), each with its metadata, then deletes the replaced messages left over
// (chat.delete). It returns the ts of the last message.
func (m *Messenger) put(ctx context.Context, key conversation.Key, msgs [][]slack.MsgOption, tag conversation.Tag) (string, error) {
	var ts string
	for i, opts := range msgs {
		opts = append(opts, tagOption(tag, i, len(msgs)))
		if i < len(tag.Replace) {
			if _, _, _, err := m.api.UpdateMessageContext(ctx, key.ChannelID, tag.Replace[i], opts...); err != nil {
				return ts, fmt.Errorf("chat.update %s (message %d of %d): %w", tag.Replace[i], i+1, len(msgs), err)
			}
			ts = tag.Replace[i]
			continue
		}
		if tag.Broadcast && key.ThreadTS != "" {
			opts = append(opts, slack.MsgOptionBroadcast()) // docs/tools.md, "Assistant view"
		}
		_, t, err := m.api.PostMessageContext(ctx, key.ChannelID, append(opts, threadOption(key.ThreadTS))...)
		if err != nil {
			return ts, fmt.Errorf("chat.postMessage (message %d of %d): %w", i+1, len(msgs), err)
		}
		m.status.postedIn(key, time.Time{})
		ts = t
	}
	if len(tag.Replace) > len(msgs) {
		if err := m.deleteAll(ctx, key, tag.Replace[len(msgs):]); err != nil {
			return ts, err
		}
	}
	return ts, nil
}

// deleteAll deletes the bot's messages tss with chat.delete; a message already gone
// (message_not_found) is no error.
func (m *Messenger) deleteAll(ctx context.Context, key conversation.Key, tss []string) error {
	for _, ts := range tss {
		if err := m.Delete(ctx, key, ts); err != nil && !isSlackError(err, "message_not_found") {
			return err
		}
	}
	return nil
}

// Delete deletes the bot's message ts in key's channel with chat.delete. Errors:
// Slack's (message_not_found, cant_delete_message, ...).
func (m *Messenger) Delete(ctx context.Context, key conversation.Key, ts string) error {
	if _, _, err := m.api.DeleteMessageContext(ctx, key.ChannelID, ts); err != nil {
		return fmt.Errorf("chat.delete %s: %w", ts, err)
	}
	return nil
}

// isSlackError reports whether err is Slack's ok:false answer with error code.
func isSlackError(err error, code string) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && se.Err == code
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

// PostCard posts c with chat.postMessage in the thread of key, or at the channel's top
// level when key.ThreadTS is empty, and returns the ts of the message that carries
// the card's end (its buttons). A card too long for one message (RenderCard) is
// posted as several messages in the thread, its long text first; at the top level,
// where the ts returned must be the new thread's, it is shortened to one message.
// Each message carries tag as message metadata, like PostReply's pieces, and
// tag.Replace is handled as PostReply does (chat.update, then chat.delete of the
// messages left over). Errors: Slack's, as for PostReply; a button that cannot be
// encoded.
func (m *Messenger) PostCard(ctx context.Context, key conversation.Key, c conversation.Card, tag conversation.Tag) (string, error) {
	limit := MaxCardMessages
	if key.ThreadTS == "" {
		limit = 1
	}
	rendered, err := RenderCard(c, limit)
	if err != nil {
		return "", fmt.Errorf("post card: %w", err)
	}
	msgs := make([][]slack.MsgOption, len(rendered))
	for i, msg := range rendered {
		msgs[i] = cardOptions(msg, slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl())
	}
	return m.put(ctx, key, msgs, tag)
}

// UpdateCard replaces the message ts in key's channel with c, shortened to one
// message (RenderCard), with chat.update. Errors: Slack's (message_not_found,
// cant_update_message, ...).
func (m *Messenger) UpdateCard(ctx context.Context, key conversation.Key, ts string, c conversation.Card) error {
	msgs, err := RenderCard(c, 1)
	if err != nil {
		return fmt.Errorf("update card: %w", err)
	}
	if _, _, _, err := m.api.UpdateMessageContext(ctx, key.ChannelID, ts, cardOptions(msgs[0])...); err != nil {
		return fmt.Errorf("chat.update %s: %w", ts, err)
	}
	return nil
}

// PostEphemeral shows text to userID only with chat.postEphemeral, in the thread of
// key (or the channel when key.ThreadTS is empty), its special mentions defused and
// split like PostReply when long, in at most the Messenger's maximum of messages: the
// last one cut short with a note when the text needs more. Errors: Slack's
// (user_not_in_channel, ...).
func (m *Messenger) PostEphemeral(ctx context.Context, key conversation.Key, userID string, text string) error {
	pieces, rest := splitFirst(DefuseMentions(text), MaxMessageChars, m.maxReplies)
	if rest != "" {
		last := &pieces[len(pieces)-1]
		*last = SplitText(*last, MaxMessageChars-len([]rune(shortenedEphemeralNote))-2)[0] + "\n\n" + shortenedEphemeralNote
	}
	for i, p := range pieces {
		if _, err := m.api.PostEphemeralContext(ctx, key.ChannelID, userID,
			slack.MsgOptionText(p, false), threadOption(key.ThreadTS)); err != nil {
			return fmt.Errorf("chat.postEphemeral (piece %d): %w", i+1, err)
		}
	}
	return nil
}

// PostEphemeralCard shows c to userID only with chat.postEphemeral, shortened to one
// message (RenderCard), in the thread of key or the channel.
func (m *Messenger) PostEphemeralCard(ctx context.Context, key conversation.Key, userID string, c conversation.Card) error {
	msgs, err := RenderCard(c, 1)
	if err != nil {
		return fmt.Errorf("post ephemeral card: %w", err)
	}
	if _, err := m.api.PostEphemeralContext(ctx, key.ChannelID, userID, cardOptions(msgs[0], threadOption(key.ThreadTS))...); err != nil {
		return fmt.Errorf("chat.postEphemeral: %w", err)
	}
	return nil
}

// Upload uploads f to the thread of key (or the channel when key.ThreadTS is empty)
// with files upload v2: files.getUploadURLExternal, a POST of the content, then
// files.completeUploadExternal with channel_id, thread_ts and f.Comment as
// initial_comment (cut to MaxMessageChars, its special mentions defused). The file
// share carries no metadata (Posted finds it by its file's name). With tag.Replace
// set, an earlier run shared the file already: Upload does nothing. Errors: an empty
// file; Slack's.
func (m *Messenger) Upload(ctx context.Context, key conversation.Key, f conversation.File, tag conversation.Tag) error {
	if len(tag.Replace) > 0 {
		return nil
	}
	return m.upload(ctx, key, f)
}

// upload uploads f to the thread of key, as Upload does.
func (m *Messenger) upload(ctx context.Context, key conversation.Key, f conversation.File) error {
	if len(f.Content) == 0 {
		return fmt.Errorf("upload %s: empty file", f.Name)
	}
	title := f.Title
	if title == "" {
		title = f.Name
	}
	_, err := m.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader:          bytes.NewReader(f.Content),
		FileSize:        len(f.Content),
		Filename:        f.Name,
		Title:           title,
		InitialComment:  DefuseMentions(truncate(f.Comment, MaxMessageChars)),
		Channel:         key.ChannelID,
		ThreadTimestamp: key.ThreadTS,
	})
	if err != nil {
		return fmt.Errorf("upload %s: %w", f.Name, err)
	}
	m.status.postedIn(key, time.Time{})
	return nil
}

// UserLocale returns userID's Slack locale ("en-US", "ru-RU") from users.info with
// include_locale; "" when Slack does not say, and without asking for an HTTP API
// token's actor (conversation.APIActorPrefix), which is no Slack user.
func (m *Messenger) UserLocale(ctx context.Context, userID string) (string, error) {
	if strings.HasPrefix(userID, conversation.APIActorPrefix) {
		return "", nil
	}
	u, err := m.api.GetUserInfoContext(ctx, userID, slack.GetUserInfoOptionIncludeLocale(true))
	if err != nil {
		return "", fmt.Errorf("users.info %s: %w", userID, err)
	}
	return u.Locale, nil
}

// cardOptions returns the chat.* options that post msg, then extra.
func cardOptions(msg CardMessage, extra ...slack.MsgOption) []slack.MsgOption {
	return append([]slack.MsgOption{slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...)}, extra...)
}

// threadOption sets thread_ts when ts is not empty.
func threadOption(ts string) slack.MsgOption {
	if ts == "" {
		return slack.MsgOptionCompose()
	}
	return slack.MsgOptionTS(ts)
}

var _ conversation.StreamingMessenger = (*Messenger)(nil)

// StartStream starts a streamed reply in the thread of key with chat.startStream,
// addressed to userID (recipient_user_id, with the team as recipient_team_id, which
// Slack requires outside DMs). With tag.Replace, those messages are deleted first
// (chat.delete). chat.startStream takes no metadata: the stream's Stop sets tag on the
// message (chat.stopStream). Errors: Slack's, such as not_allowed or
// missing_recipient_user_id; the conversation then posts its reply with PostReply.
func (m *Messenger) StartStream(ctx context.Context, key conversation.Key, userID string, tag conversation.Tag) (conversation.Stream, error) {
	st, err := m.startStream(ctx, key, userID, tag)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// startStream is StartStream with extra options for chat.startStream.
func (m *Messenger) startStream(ctx context.Context, key conversation.Key, userID string, tag conversation.Tag, extra ...slack.MsgOption) (*stream, error) {
	if err := m.deleteAll(ctx, key, tag.Replace); err != nil {
		return nil, err
	}
	opts := append([]slack.MsgOption{slack.MsgOptionTS(key.ThreadTS)}, extra...)
	if userID != "" {
		opts = append(opts, slack.MsgOptionRecipientUserID(userID))
	}
	if team := key.TeamID; team != "" || m.me.TeamID != "" {
		if team == "" {
			team = m.me.TeamID
		}
		opts = append(opts, slack.MsgOptionRecipientTeamID(team))
	}
	_, ts, err := m.api.StartStreamContext(ctx, key.ChannelID, opts...)
	if err != nil {
		return nil, fmt.Errorf("chat.startStream: %w", err)
	}
	tag.Replace = nil
	started := m.now()
	m.status.postedIn(key, started)
	m.sessions.streamed(key, false)
	return &stream{api: m.api, channel: key.ChannelID, ts: ts, tag: tag, started: started, rotate: m.rotate, now: m.now, log: m.log,
		fresh: func(ctx context.Context) (*stream, error) { return m.startStream(ctx, key, userID, tag, extra...) },
		stopped: func(started time.Time, ok bool) {
			m.status.streamStopped(key, started)
			m.sessions.streamed(key, ok)
		},
		rotated: func(ctx context.Context) { m.sessions.processingAgain(ctx, key) }}, nil
}

// stream is a message streamed with chat.appendStream and ended with chat.stopStream.
type stream struct {
	api     *slack.Client
	channel string
	ts      string
	// tag is set on the message when it stops.
	tag conversation.Tag
	// chars counts the characters appended.
	chars int
	// done are the blocks a final Stop adds (an answer's feedback buttons).
	done []slack.Block
	// started is when chat.startStream made the message; fresh starts the next
	// message of the stream when it nears Slack's limit (rotate; see
	// DefaultStreamRotation).
	started time.Time
	fresh   func(ctx context.Context) (*stream, error)
	// earlier are the messages the stream continued from, oldest first (Messages).
	earlier []string
	// stopped tells the Messenger that the stream started at started stopped (SetStatus
	// sets no status while a stream is open), with ok true when chat.stopStream
	// succeeded (the thread's agent session is active then; WithSessions).
	stopped func(started time.Time, ok bool)
	// rotated tells the Messenger that the stream went on in a fresh message
	// (rotateIfOld), whose chat.stopStream set the thread's agent session active;
	// not when the stream is ending (StopWithText's last append).
	rotated func(ctx context.Context)
	// ending is set once StopWithText appends the stream's last text: a rotation
	// then calls no rotated, as the stop that follows sets the session active.
	ending bool
	rotate time.Duration
	now    func() time.Time
	log    *slog.Logger
}

// Append adds markdown to the message with chat.appendStream (markdown_text), its
// special mentions defused (DefuseMentions). A message holds at most MaxMessageChars
// characters of appended markdown: past them Append sends nothing and returns an
// error, and the caller posts the rest otherwise.
func (s *stream) Append(ctx context.Context, markdown string) error {
	if markdown == "" {
		return nil
	}
	if err := s.rotateIfOld(ctx); err != nil {
		return err
	}
	n := utf8.RuneCountInString(markdown)
	if s.chars+n > MaxMessageChars {
		return fmt.Errorf("chat.appendStream: %w (%d characters appended, %d more)", errStreamFull, s.chars, n)
	}
	if _, _, err := s.api.AppendStreamContext(ctx, s.channel, s.ts, slack.MsgOptionMarkdownText(DefuseMentions(markdown))); err != nil {
		return fmt.Errorf("chat.appendStream: %w", err)
	}
	s.chars += n
	return nil
}

// Stop ends the message with chat.stopStream, setting the stream's tag, with final as
// its Final, as the message's metadata (piece 0 of 1), and, when final, the stream's
// done blocks; it returns its ts.
func (s *stream) Stop(ctx context.Context, final bool) (string, error) {
	return s.stop(ctx, final)
}

var _ conversation.TextStopper = (*stream)(nil)

// StopWithText ends the message as Stop does, with markdown (its special mentions
// defused) added by the same chat.stopStream (markdown_text, as Slack's own SDKs send
// a stream's last text), which saves a chat.appendStream. Where Append would rotate
// the stream or refuse the text (MaxMessageChars), it appends, then stops; the stream
// is stopped either way, tagged final only when the text reached it. Errors: Stop's,
// or Append's.
func (s *stream) StopWithText(ctx context.Context, markdown string, final bool) (string, error) {
	n := utf8.RuneCountInString(markdown)
	old := s.fresh != nil && s.rotate > 0 && s.now().Sub(s.started) >= s.rotate
	if markdown == "" || old || s.chars+n > MaxMessageChars {
		s.ending = true
		err := s.Append(ctx, markdown)
		ts, stopErr := s.stop(ctx, final && err == nil)
		return ts, errors.Join(err, stopErr)
	}
	ts, err := s.stop(ctx, final, slack.MsgOptionMarkdownText(DefuseMentions(markdown)))
	if err == nil {
		s.chars += n
	}
	return ts, err
}

// stop is Stop with extra options for chat.stopStream.
func (s *stream) stop(ctx context.Context, final bool, extra ...slack.MsgOption) (string, error) {
	tag := s.tag
	tag.Final = final
	opts := append([]slack.MsgOption{tagOption(tag, 0, 1)}, extra...)
	if final && len(s.done) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(s.done...))
	}
	_, _, err := s.api.StopStreamContext(ctx, s.channel, s.ts, opts...)
	if s.stopped != nil {
		s.stopped(s.started, err == nil)
	}
	if err != nil {
		if streamEnded(err) {
			// Slack ended it already: it expired, or the session's native Stop
			// (agent_session_stopped) halted it. Its text stays, untagged.
			return s.ts, fmt.Errorf("chat.stopStream: %w", conversation.ErrStreamEnded)
		}
		return s.ts, fmt.Errorf("chat.stopStream: %w", err)
	}
	return s.ts, nil
}

// Messages implements conversation.Stream: the messages the stream continued from
// (rotateIfOld), then its current one.
func (s *stream) Messages() []string {
	return append(slices.Clone(s.earlier), s.ts)
}

// streamEnded reports whether err is Slack's message_not_in_streaming_state: the
// stream expired, or was stopped by the person.
func streamEnded(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && se.Err == "message_not_in_streaming_state"
}

var _ conversation.Permalinker = (*Messenger)(nil)

// Permalink returns the link to the message ts in key's channel (chat.getPermalink).
// Errors: Slack's (message_not_found, channel_not_found, ...).
func (m *Messenger) Permalink(ctx context.Context, key conversation.Key, ts string) (string, error) {
	link, err := m.api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: key.ChannelID, Ts: ts})
	if err != nil {
		return "", fmt.Errorf("chat.getPermalink %s: %w", ts, err)
	}
	return link, nil
}
