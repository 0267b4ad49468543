package turns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Exactly one answer (docs/architecture.md): every message a turn posts carries a Tag
// naming its input and its ordinal N among the turn's posts. A turn that runs an
// input again (its worker died after posting, or lost its lease, or could not save)
// first asks the Messenger what the earlier run posted. Post N of the new run then
// replaces the earlier run's post N (chat.update) instead of appearing a second time;
// what the new run does not post again is deleted before it saves; and an assistant
// turn whose earlier run posted its whole answer saves that answer without asking the
// model again.

// errBroadcastNotStreamed refuses to stream a turn whose replies are broadcast.
var errBroadcastNotStreamed = errors.New("a direct message's answer is posted, not streamed, to show it in the channel")

// SetBroadcast makes the outbox's replies show in the channel too.
func (o *Outbox) SetBroadcast() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.broadcast = true
}

func (o *Outbox) isBroadcast() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.broadcast
}

// Outbox posts a turn's messages through the Messenger, tagged, and replaces what an
// earlier run of the same input posted. It is safe for concurrent use.
type Outbox struct {
	msgr conversation.Messenger
	key  conversation.Key
	id   string
	// confirm makes sure the turn's lease is still its own before it posts; lost
	// reports whether another worker took the thread (nil: neither is checked).
	confirm func(context.Context) error
	lost    func() bool

	mu sync.Mutex
	n  int // posts so far
	// prior holds an earlier run's tagged messages by N, pieces in order; loose its
	// untagged ones (a stream cut before it stopped, file shares).
	prior map[int][]conversation.Posted
	loose []conversation.Posted
	used  map[string]bool // ts of earlier messages taken over by this run
	// broadcast shows the turn's replies in the channel too (Tag.Broadcast); such a
	// turn does not stream, since a stream stays in the thread.
	broadcast bool
	// revise is the ts of the earlier answer the turn's answer replaces in place
	// (ReviseAnswer); "" for none.
	revise string
}

// ReviseAnswer makes the turn's answer replace the bot's message ts in place
// (chat.update) rather than appear as a new message: the answer of an edited
// question (docs/architecture.md, "Edits and deletions"). Such an answer is not
// streamed: a stream is always a new message.
func (o *Outbox) ReviseAnswer(ts string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.revise = ts
}

// Revising returns the ts of the message the turn's answer replaces (ReviseAnswer),
// or "".
func (o *Outbox) Revising() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.revise
}

// newOutbox returns the outbox of the turn of in, posting through msgr under the
// lease that confirm and lost check. On a re-run (Attempts > 1, or retaken: begun
// when this process took its own lease again, which counts no new attempt) it reads
// what earlier runs posted; when that fails, the turn goes on and may post again.
func newOutbox(ctx context.Context, msgr conversation.Messenger, in conversation.Input, retaken bool, log *slog.Logger, confirm func(context.Context) error, lost func() bool) *Outbox {
	o := &Outbox{msgr: msgr, key: in.Key.Posting(), id: in.ID, confirm: confirm, lost: lost, used: map[string]bool{}}
	if in.Attempts <= 1 && !retaken {
		return o
	}
	posted, err := msgr.Posted(ctx, o.key, in.ID, postedAfter(in))
	if err != nil {
		log.Warn("what an earlier run of this input posted is unknown; it may be posted again", "error", err)
		return o
	}
	o.prior = map[int][]conversation.Posted{}
	for _, p := range posted {
		switch {
		case p.Tag.InputID != "":
			o.prior[p.Tag.N] = append(o.prior[p.Tag.N], p)
		case p.File != "" || in.Message != nil || in.IsRetry():
			// An untagged message newer than the input may be this input's: a file
			// share, or, for a person's message or a Retry of one (the only inputs
			// whose turns stream, bounded by the message's or the failure's ts), a
			// stream cut before it stopped. Anything else untagged is left alone.
			o.loose = append(o.loose, p)
		}
	}
	for _, ps := range o.prior {
		slices.SortFunc(ps, func(a, b conversation.Posted) int { return a.Piece - b.Piece })
	}
	if len(posted) > 0 {
		log.Info("re-run: an earlier run of this input posted in the thread", "messages", len(posted))
	}
	return o
}

// postedAfter returns the ts after which the bot's untagged messages may be an earlier
// run's: the input's own message, or the message clicked; for a channel command, a
// minute before the input was taken.
func postedAfter(in conversation.Input) string {
	switch {
	case in.Message != nil:
		return in.Message.TS
	case in.Action != nil && in.Action.MessageTS != "":
		return in.Action.MessageTS
	case in.Command != nil && in.Command.MessageTS != "":
		return in.Command.MessageTS
	case in.Key.Posting().ThreadTS == "" && !in.CreatedAt.IsZero():
		t := in.CreatedAt.Add(-time.Minute)
		return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
	}
	return ""
}

// check makes sure the turn may still post (confirm). Errors: ErrLeaseLost; the
// store's, when the lease could not be confirmed.
func (o *Outbox) check(ctx context.Context) error {
	if o.confirm == nil {
		return nil
	}
	return o.confirm(ctx)
}

// tag returns the tag of the turn's next post, replacing the earlier run's post of the
// same ordinal.
func (o *Outbox) tag(answer bool) conversation.Tag {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n++
	t := conversation.Tag{InputID: o.id, N: o.n, Answer: answer}

	for _, p := range o.prior[o.n] {
		t.Replace = append(t.Replace, p.TS)
		o.used[p.TS] = true
	}
	if answer && o.revise != "" && !slices.Contains(t.Replace, o.revise) {
		t.Replace = append([]string{o.revise}, t.Replace...)
		o.used[o.revise] = true
	}
	if answer {
		// A stream the earlier run started and never stopped carries no tag: the
		// answer takes its place.
		for _, p := range o.loose {
			if p.File == "" && !o.used[p.TS] {
				t.Replace = append(t.Replace, p.TS)
				o.used[p.TS] = true
			}
		}
	}
	return t
}

// Lost reports whether the turn's lease was taken by another worker: it must no
// longer change the thread.
func (o *Outbox) Lost() bool { return o.lost != nil && o.lost() }

// PostReply posts text in the thread; answer marks a part of the turn's answer, and
// final its last part. Errors: ErrLeaseLost (nothing posted); the Messenger's.
func (o *Outbox) PostReply(ctx context.Context, text string, answer, final bool) (string, error) {
	return o.Post(ctx, text, answer, final, false)
}

// postReply is PostReply; notice marks the answer as a notice (Tag.Notice).
func (o *Outbox) Post(ctx context.Context, text string, answer, final, notice bool) (string, error) {
	if err := o.check(ctx); err != nil {
		return "", err
	}
	tag := o.tag(answer)
	tag.Final, tag.Notice = final, notice
	tag.Broadcast = o.isBroadcast()
	return o.msgr.PostReply(ctx, o.key, text, tag)
}

// PostCard posts c in the thread (or at the channel's top level for a channel
// command). Errors: as PostReply.
func (o *Outbox) PostCard(ctx context.Context, c conversation.Card) (string, error) {
	if err := o.check(ctx); err != nil {
		return "", err
	}
	return o.msgr.PostCard(ctx, o.key, c, o.tag(false))
}

// PostCardReplacing posts c in the thread as PostCard does, in place of the messages
// ts, oldest first (a stream whose text c replaces: chat.update of the first, the
// others deleted). Errors: as PostReply.
func (o *Outbox) PostCardReplacing(ctx context.Context, c conversation.Card, ts []string) (string, error) {
	if err := o.check(ctx); err != nil {
		return "", err
	}
	tag := o.tag(false)
	tag.Replace = append(slices.Clone(ts), slices.DeleteFunc(tag.Replace, func(r string) bool { return slices.Contains(ts, r) })...)
	return o.msgr.PostCard(ctx, o.key, c, tag)
}

// Upload uploads f to the thread, unless an earlier run shared a file of its name. A
// file share carries no tag: it takes a post's ordinal, but replaces only a file.
func (o *Outbox) Upload(ctx context.Context, f conversation.File) error {
	if err := o.check(ctx); err != nil {
		return err
	}
	o.mu.Lock()
	o.n++
	tag := conversation.Tag{InputID: o.id, N: o.n}
	for _, p := range o.loose {
		if p.File == f.Name && !o.used[p.TS] && len(tag.Replace) == 0 {
			tag.Replace = []string{p.TS}
			o.used[p.TS] = true
		}
	}
	o.mu.Unlock()
	return o.msgr.Upload(ctx, o.key, f, tag)
}

// ReplaceReply posts text as the turn's answer (its final post) in place of the
// messages ts, oldest first, a stream whose text text replaces: the reply is edited
// into them from the first (Tag.Replace), and those it does not need are deleted;
// notice marks it as a notice (Tag.Notice). Errors: as PostReply.
func (o *Outbox) ReplaceReply(ctx context.Context, text string, ts []string, notice bool) (string, error) {
	if err := o.check(ctx); err != nil {
		return "", err
	}
	tag := o.tag(true)
	tag.Final, tag.Notice = true, notice
	tag.Broadcast = o.isBroadcast()
	tag.Replace = append(slices.Clone(ts), slices.DeleteFunc(tag.Replace, func(r string) bool { return slices.Contains(ts, r) })...)
	return o.msgr.PostReply(ctx, o.key, text, tag)
}

// StartStream starts the turn's answer as a stream (see StreamingMessenger).
func (o *Outbox) StartStream(ctx context.Context, sm conversation.StreamingMessenger, userID string) (conversation.Stream, error) {
	if o.isBroadcast() {
		return nil, errBroadcastNotStreamed
	}
	if err := o.check(ctx); err != nil {
		return nil, err
	}
	return sm.StartStream(ctx, o.key, userID, o.tag(true))
}

// StartTaskStream starts the turn's answer as a stream that also shows tasks (see
// TaskStreamingMessenger), under StartStream's rules.
func (o *Outbox) StartTaskStream(ctx context.Context, tm conversation.TaskStreamingMessenger, userID string, opts conversation.TaskStreamOptions) (conversation.TaskStream, error) {
	if o.isBroadcast() {
		return nil, errBroadcastNotStreamed
	}
	if err := o.check(ctx); err != nil {
		return nil, err
	}
	return tm.StartTaskStream(ctx, o.key, userID, o.tag(true), opts)
}

// PriorAnswer returns the answer an earlier run of the turn posted whole: the text of
// its answer posts, in order, and the ts of its last message. ok is false when there
// is none, or its final post is not all in the thread.
func (o *Outbox) PriorAnswer() (text, ts string, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	final := 0
	for n, ps := range o.prior {
		if len(ps) > 0 && ps[0].Tag.Answer && ps[0].Tag.Final && n > final {
			final = n
		}
	}
	if final == 0 {
		return "", "", false
	}
	last := o.prior[final]
	if of := last[0].Of; of > 0 && len(last) != of {
		return "", "", false // its final post was cut: run the turn again
	}
	var ns []int
	for n, ps := range o.prior {
		if n <= final && len(ps) > 0 && ps[0].Tag.Answer {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	var b strings.Builder
	for _, n := range ns {
		for _, p := range o.prior[n] {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
			o.used[p.TS] = true
		}
	}
	return b.String(), last[len(last)-1].TS, true
}

// cleanup deletes what an earlier run posted that this run did not take over, before
// the turn saves: the thread then shows this run's posts only.
func (o *Outbox) cleanup(ctx context.Context, log *slog.Logger) {
	o.mu.Lock()
	var stale []string
	for _, ps := range o.prior {
		for _, p := range ps {
			if !o.used[p.TS] {
				stale = append(stale, p.TS)
			}
		}
	}
	for _, p := range o.loose {
		if p.File == "" && !o.used[p.TS] {
			stale = append(stale, p.TS)
		}
	}
	o.prior, o.loose = nil, nil
	o.mu.Unlock()
	for _, ts := range stale {
		if err := o.msgr.Delete(ctx, o.key, ts); err != nil {
			log.Warn("an earlier run's message not deleted", "ts", ts, "error", err)
		}
	}
}
