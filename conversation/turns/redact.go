package turns

import (
	"context"
	"errors"
	"regexp"
	"unicode"

	"github.com/threadwright/threadwright/conversation"
)

// apiMention matches the mention of an HTTP API token's actor ("<@api:ci-bot>"),
// which the thread's texts name as they name a person (<@U…>).
var apiMention = regexp.MustCompile(`<@` + conversation.APIActorPrefix + `([A-Za-z0-9._-]+)>`)

// apiActors rewrites the mentions of API tokens in s, which Slack cannot show, into
// the token's name and the door it came through: "Approved by <@api:ci-bot>." reads
// "Approved by ci-bot (via API).", and in a Russian text "ci-bot (через API)".
func apiActors(s string) string {
	if !apiMention.MatchString(s) {
		return s
	}
	via := "$1 (via API)"
	for _, r := range s {
		if unicode.Is(unicode.Cyrillic, r) {
			via = "$1 (через API)"
			break
		}
	}
	return apiMention.ReplaceAllString(s, via)
}

// redactingMessenger scrubs every text the bot sends to the chat with Config.Redact:
// replies, the thread's status, cards (their fallback text, blocks, confirmations,
// modals), ephemeral messages, streamed pieces and uploaded files, so that a secret
// in an error text (a provider error that echoes an API key) never reaches Slack
// (docs/operations.md, "Limits and secrets"). Button values and action ids are the bot's own and
// pass unchanged.
type redactingMessenger struct {
	conversation.Messenger
	redact func(string) string
}

// redactingStreamer is a redactingMessenger of a StreamingMessenger.
type redactingStreamer struct {
	redactingMessenger
	sm conversation.StreamingMessenger
}

// redactMessenger wraps m so that redact scrubs what it sends; it keeps m's
// StreamingMessenger and TaskStreamingMessenger.
func redactMessenger(m conversation.Messenger, redact func(string) string) conversation.Messenger {
	rm := redactingMessenger{Messenger: m, redact: redact}
	if tm, ok := m.(conversation.TaskStreamingMessenger); ok {
		return redactingTaskStreamer{redactingStreamer: redactingStreamer{redactingMessenger: rm, sm: tm}, tm: tm}
	}
	if sm, ok := m.(conversation.StreamingMessenger); ok {
		return redactingStreamer{redactingMessenger: rm, sm: sm}
	}
	return rm
}

var (
	_ conversation.Messenger          = redactingMessenger{}
	_ conversation.StreamingMessenger = redactingStreamer{}
)

func (m redactingMessenger) PostReply(ctx context.Context, key conversation.Key, text string, tag conversation.Tag) (string, error) {
	return m.Messenger.PostReply(ctx, key, m.redact(text), tag)
}

func (m redactingMessenger) SetStatus(ctx context.Context, key conversation.Key, status string) error {
	return m.Messenger.SetStatus(ctx, key, m.redact(status))
}

func (m redactingMessenger) PostCard(ctx context.Context, key conversation.Key, c conversation.Card, tag conversation.Tag) (string, error) {
	return m.Messenger.PostCard(ctx, key, m.card(c), tag)
}

func (m redactingMessenger) UpdateCard(ctx context.Context, key conversation.Key, ts string, c conversation.Card) error {
	return m.Messenger.UpdateCard(ctx, key, ts, m.card(c))
}

func (m redactingMessenger) PostEphemeral(ctx context.Context, key conversation.Key, userID, text string) error {
	return m.Messenger.PostEphemeral(ctx, key, userID, m.redact(text))
}

func (m redactingMessenger) PostEphemeralCard(ctx context.Context, key conversation.Key, userID string, c conversation.Card) error {
	return m.Messenger.PostEphemeralCard(ctx, key, userID, m.card(c))
}

func (m redactingMessenger) Upload(ctx context.Context, key conversation.Key, f conversation.File, tag conversation.Tag) error {
	f.Comment = m.redact(f.Comment)
	f.Content = []byte(m.redact(string(f.Content)))
	return m.Messenger.Upload(ctx, key, f, tag)
}

// card returns a copy of c with its texts scrubbed.
func (m redactingMessenger) card(c conversation.Card) conversation.Card {
	c.Text = m.redact(c.Text)
	blocks := make([]conversation.Block, len(c.Blocks))
	for i, b := range c.Blocks {
		b.Text = m.redact(b.Text)
		b.Buttons = m.buttons(b.Buttons)
		b.Menu = m.buttons(b.Menu)
		blocks[i] = b
	}
	c.Blocks = blocks
	return c
}

func (m redactingMessenger) buttons(bs []conversation.Button) []conversation.Button {
	if bs == nil {
		return nil
	}
	out := make([]conversation.Button, len(bs))
	for i, b := range bs {
		b.Label = m.redact(b.Label)
		if b.Confirm != nil {
			c := *b.Confirm
			c.Title, c.Text = m.redact(c.Title), m.redact(c.Text)
			b.Confirm = &c
		}
		if b.Modal != nil {
			md := *b.Modal
			md.Title, md.Label, md.Placeholder = m.redact(md.Title), m.redact(md.Label), m.redact(md.Placeholder)
			md.Submit, md.Initial = m.redact(md.Submit), m.redact(md.Initial)
			b.Modal = &md
		}
		out[i] = b
	}
	return out
}

func (m redactingStreamer) StartStream(ctx context.Context, key conversation.Key, userID string, tag conversation.Tag) (conversation.Stream, error) {
	st, err := m.sm.StartStream(ctx, key, userID, tag)
	if err != nil {
		return nil, err
	}
	return redactingStream{Stream: st, redact: m.redact}, nil
}

// redactingStream scrubs each piece appended. A secret split across two pieces is
// not found; the answer's full text, saved and posted again on a re-run, is.
type redactingStream struct {
	conversation.Stream
	redact func(string) string
}

func (s redactingStream) Append(ctx context.Context, markdown string) error {
	return s.Stream.Append(ctx, s.redact(markdown))
}

var _ conversation.TextStopper = redactingStream{}

// StopWithText scrubs markdown and stops the wrapped stream with it
// (conversation.StopStreamWithText).
func (s redactingStream) StopWithText(ctx context.Context, markdown string, final bool) (string, error) {
	return conversation.StopStreamWithText(ctx, s.Stream, s.redact(markdown), final)
}

// Permalink is the wrapped Messenger's, when it is a Permalinker (a link names no
// secret); errors.ErrUnsupported otherwise.
func (m redactingMessenger) Permalink(ctx context.Context, key conversation.Key, ts string) (string, error) {
	if p, ok := m.Messenger.(conversation.Permalinker); ok {
		return p.Permalink(ctx, key, ts)
	}
	return "", errors.ErrUnsupported
}

// redactingTaskStreamer is a redactingStreamer of a TaskStreamingMessenger: the
// tasks' titles, outputs and source texts, the plan's title and the first card are
// scrubbed too (a task's output quotes what a tool returned).
type redactingTaskStreamer struct {
	redactingStreamer
	tm conversation.TaskStreamingMessenger
}

var _ conversation.TaskStreamingMessenger = redactingTaskStreamer{}

func (m redactingTaskStreamer) StartTaskStream(ctx context.Context, key conversation.Key, userID string, tag conversation.Tag, opts conversation.TaskStreamOptions) (conversation.TaskStream, error) {
	opts.PlanTitle, opts.Card = m.redact(opts.PlanTitle), m.card(opts.Card)
	st, err := m.tm.StartTaskStream(ctx, key, userID, tag, opts)
	if err != nil {
		return nil, err
	}
	return redactingTaskStream{redactingStream: redactingStream{Stream: st, redact: m.redact}, ts: st}, nil
}

// redactingTaskStream scrubs each task and plan title it is given.
type redactingTaskStream struct {
	redactingStream
	ts conversation.TaskStream
}

func (s redactingTaskStream) UpdateTasks(ctx context.Context, planTitle string, tasks ...conversation.Task) error {
	out := make([]conversation.Task, len(tasks))
	for i, t := range tasks {
		t.Title, t.Output = s.redact(t.Title), s.redact(t.Output)
		srcs := make([]conversation.Source, len(t.Sources))
		for j, src := range t.Sources {
			srcs[j] = conversation.Source{URL: s.redact(src.URL), Text: s.redact(src.Text)}
		}
		if t.Sources == nil {
			srcs = nil
		}
		t.Sources = srcs
		out[i] = t
	}
	return s.ts.UpdateTasks(ctx, s.redact(planTitle), out...)
}
