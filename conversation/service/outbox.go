package service

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// run is one turn in progress: its input, the lease it runs under, and its posts.
type Run struct {
	In    conversation.Input
	lease conversation.Lease
	Log   *slog.Logger
	th    *thread
	Out   *Outbox
	end   turnEnd // for Metrics
	// saved is the thread's workflow state as last loaded or saved by this run: what
	// the next save's webhook events are the change from (events.go).
	saved savedState
	// meter counts the run's model usage by model (usage_meter.go); its context
	// carries it.
	meter *conversation.UsageMeter
	// svc is the service that runs the turn.
	svc *Runtime
}

// outbox posts a turn's messages through the Messenger, tagged, and replaces what an
// earlier run of the same input posted. It is safe for concurrent use.
type Outbox struct {
	s   *Runtime
	key conversation.Key
	id  string
	th  *thread

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
}

// newOutbox returns the outbox of r's turn. On a re-run (Attempts > 1) it reads what
// earlier runs posted; when that fails, the turn goes on and may post again.
func (s *Runtime) newOutbox(ctx context.Context, r *Run) *Outbox {
	o := &Outbox{s: s, key: r.In.Key, id: r.In.ID, th: r.th, used: map[string]bool{}}
	if r.In.Attempts <= 1 {
		return o
	}
	posted, err := s.cfg.Messenger.Posted(ctx, r.In.Key, r.In.ID, postedAfter(r.In))
	if err != nil {
		r.Log.Warn("what an earlier run of this input posted is unknown; it may be posted again", "error", err)
		return o
	}
	o.prior = map[int][]conversation.Posted{}
	for _, p := range posted {
		switch {
		case p.Tag.InputID != "":
			o.prior[p.Tag.N] = append(o.prior[p.Tag.N], p)
		case p.File != "" || r.In.Message != nil || isRetry(r.In):
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
		r.Log.Info("re-run: an earlier run of this input posted in the thread", "messages", len(posted))
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
	case in.Key.ThreadTS == "" && !in.CreatedAt.IsZero():
		t := in.CreatedAt.Add(-time.Minute)
		return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
	}
	return ""
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

// lost reports whether the turn's lease was taken by another worker: it must no
// longer change the thread.
func (o *Outbox) Lost() bool { return o.th != nil && o.s.isLost(o.th) }

// PostReply posts text in the thread; answer marks a part of the turn's answer, and
// final its last part. Errors: ErrLeaseLost (nothing posted); the Messenger's.
func (o *Outbox) PostReply(ctx context.Context, text string, answer, final bool) (string, error) {
	return o.Post(ctx, text, answer, final, false)
}

// postReply is PostReply; notice marks the answer as a notice (Tag.Notice).
func (o *Outbox) Post(ctx context.Context, text string, answer, final, notice bool) (string, error) {
	if err := o.s.confirm(ctx, o.th); err != nil {
		return "", err
	}
	tag := o.tag(answer)
	tag.Final, tag.Notice = final, notice
	tag.Broadcast = o.isBroadcast()
	return o.s.cfg.Messenger.PostReply(ctx, o.key, text, tag)
}

// PostCard posts c in the thread (or at the channel's top level for a channel
// command). Errors: as PostReply.
func (o *Outbox) PostCard(ctx context.Context, c conversation.Card) (string, error) {
	if err := o.s.confirm(ctx, o.th); err != nil {
		return "", err
	}
	return o.s.cfg.Messenger.PostCard(ctx, o.key, c, o.tag(false))
}

// postCardReplacing posts c in the thread as PostCard does, in place of the message
// ts when set (a stream whose text c replaces: chat.update). Errors: as PostReply.
func (o *Outbox) PostCardReplacing(ctx context.Context, c conversation.Card, ts string) (string, error) {
	if err := o.s.confirm(ctx, o.th); err != nil {
		return "", err
	}
	tag := o.tag(false)
	if ts != "" {
		tag.Replace = append([]string{ts}, tag.Replace...)
	}
	return o.s.cfg.Messenger.PostCard(ctx, o.key, c, tag)
}

// Upload uploads f to the thread, unless an earlier run shared a file of its name. A
// file share carries no tag: it takes a post's ordinal, but replaces only a file.
func (o *Outbox) Upload(ctx context.Context, f conversation.File) error {
	if err := o.s.confirm(ctx, o.th); err != nil {
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
	return o.s.cfg.Messenger.Upload(ctx, o.key, f, tag)
}

// replaceReply posts text as the turn's answer (its final post) in place of the
// message ts, a stream whose text text replaces: ts is edited into its first message
// (Tag.Replace); notice marks it as a notice (Tag.Notice). Errors: as PostReply.
func (o *Outbox) ReplaceReply(ctx context.Context, text, ts string, notice bool) (string, error) {
	if err := o.s.confirm(ctx, o.th); err != nil {
		return "", err
	}
	tag := o.tag(true)
	tag.Final, tag.Notice = true, notice
	tag.Broadcast = o.isBroadcast()
	tag.Replace = append([]string{ts}, tag.Replace...)
	return o.s.cfg.Messenger.PostReply(ctx, o.key, text, tag)
}

// StartStream starts the turn's answer as a stream (see StreamingMessenger).
func (o *Outbox) StartStream(ctx context.Context, sm conversation.StreamingMessenger, userID string) (conversation.Stream, error) {
	if o.isBroadcast() {
		return nil, errBroadcastNotStreamed
	}
	if err := o.s.confirm(ctx, o.th); err != nil {
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
	if err := o.s.confirm(ctx, o.th); err != nil {
		return nil, err
	}
	return tm.StartTaskStream(ctx, o.key, userID, o.tag(true), opts)
}

// priorAnswer returns the answer an earlier run of the turn posted whole: the text of
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
		if err := o.s.cfg.Messenger.Delete(ctx, o.key, ts); err != nil {
			log.Warn("an earlier run's message not deleted", "ts", ts, "error", err)
		}
	}
}

// Final returns the context of the turn's final writes (its reply, cards, save): not
// cancelled with the turn's (a stop, a timeout), bounded by Config.FinalTimeout.
func (r *Run) Final(ctx context.Context) (context.Context, context.CancelFunc) {
	return r.svc.final(ctx)
}

// Load loads the turn's checkpoint, retrying while the store is unavailable.
// Errors: conversation.ErrNotFound; the store's.
func (r *Run) Load(ctx context.Context) (*conversation.Checkpoint, error) { return r.svc.load(ctx, r) }

// Finish ends the turn with e, saving conv's new state and messages (see finishTurn).
func (r *Run) Finish(ctx context.Context, conv conversation.Conversation, e Ending) error {
	return r.svc.finishTurn(ctx, r, conv, e)
}

// Drop ends the turn without a save, its input finished as status (dropped, failed,
// or done when nothing changed).
func (r *Run) Drop(ctx context.Context, status conversation.InputStatus) error {
	return r.svc.finish(ctx, r, status)
}

// Checkpoint saves turn under the run's lease without ending the turn (a pipeline's
// progress), retrying while the store is unavailable.
func (r *Run) Checkpoint(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	return r.svc.storeSave(ctx, r, turn)
}

// AllowStop marks the turn as one a person may stop (Stop, or a newer message).
func (r *Run) AllowStop() { r.svc.allowStop(r.In.Key) }

// AllowRunStop marks the turn as working on pipeline run id, which its Stop button
// may stop; a newer message does not.
func (r *Run) AllowRunStop(id string) { r.svc.allowRunStop(r.In.Key, id) }

// Freeze makes the turn no longer stoppable: its answer is ready.
func (r *Run) Freeze() { r.svc.freeze(r.In.Key) }

// SetStatus shows status in the thread; failing to is logged, never fatal.
func (r *Run) SetStatus(ctx context.Context, status string) {
	r.svc.setStatus(ctx, r.Log, r.In.Key, status)
}

// ClearStatus clears the thread's status, even when the turn's context has ended.
func (r *Run) ClearStatus() { r.svc.clearStatus(r.Log, r.In.Key) }

// ShuttingDown reports whether the service is shutting down: the turn's input stays
// pending and runs again.
func (r *Run) ShuttingDown() bool { return r.svc.ctx.Err() != nil }

// ShutdownErr is the error of the service's context once it is shutting down (nil
// before): the cause a turn that gives up for the shutdown returns.
func (r *Run) ShutdownErr() error { return r.svc.ctx.Err() }

// MeteredUsage returns the usage records of a save of state st that is not the end
// of the turn (a pipeline's checkpoint): the model calls metered since the last
// save, by model, or u under the main model when none was metered.
func (r *Run) MeteredUsage(st conversation.State, u conversation.Usage) []conversation.UsageRecord {
	byModel, metered := r.meter.Take()
	return r.svc.usageRecords(r, st, u, byModel, metered, 0)
}

// InputWaiting reports whether another input of the thread waits behind this turn.
func (r *Run) InputWaiting() bool { return r.svc.waiting(r.In.Key) }

// RetryStore runs op, retrying with backoff while the store is unavailable, until ctx
// ends; what names the operation in the log.
func (r *Run) RetryStore(ctx context.Context, what string, op func(context.Context) error) error {
	return r.svc.retryStore(ctx, what, op)
}

// Forward submits in, an input that continues this one (a channel command forwarded
// to its thread), without the flood limits that admitted this one.
func (r *Run) Forward(ctx context.Context, in conversation.Input) (bool, error) {
	return r.svc.submit(ctx, in, false)
}
