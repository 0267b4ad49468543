package assistant

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/internal/textcut"
)

// Streaming limits of an assistant turn's answer.
const (
	// streamInterval is the least time between two appends to a streamed answer, and
	// streamChunk the buffered characters that flush it sooner: chat.appendStream is
	// rate limited.
	streamInterval = time.Second
	streamChunk    = 1000
	// streamLimit is the most characters streamed into one message; the rest of a
	// longer answer is posted with PostReply, so no message passes Slack's limits.
	streamLimit = 3500
	// streamCallTimeout bounds one call to the streaming messenger.
	streamCallTimeout = 10 * time.Second
)

// answerStream streams the executor's answer into the thread (a TextSink): it starts
// a stream at the first text, buffers the deltas and appends them at most once per
// streamInterval or when streamChunk characters are waiting, up to streamLimit
// characters. Any failure turns streaming off for the rest of the turn; the turn then
// replies as without streaming (end).
type answerStream struct {
	s      *Handler
	log    *slog.Logger
	ctx    context.Context // the turn's, without its cancellation
	sm     conversation.StreamingMessenger
	out    *turns.Outbox
	key    conversation.Key
	userID string

	// tm, when the Messenger can show tasks, starts the stream with them; the stream
	// then also shows the turn's thinking steps and, unless the session shows its own,
	// a Stop button (stopCard), and the progress message is not posted unless Slack
	// refuses the tasks (tasksOff).
	tm       conversation.TaskStreamingMessenger
	stopCard conversation.Card

	mu        sync.Mutex
	st        conversation.Stream // once started
	plan      bool                // task_display_mode plan, until the stream starts
	planTitle string              // a plan title not yet sent
	tasksOff  bool                // tasks refused: the progress message shows the turn instead
	failed    bool                // streaming refused or broken: no more appends
	stale     bool                // text was appended that a Reset voided
	full      bool                // streamLimit reached: the rest goes to PostReply
	sent      strings.Builder     // the text appended to the stream
	buf       strings.Builder     // text waiting to be appended
	at        time.Time           // the last append

	// msgs are the messages of the stream once stopped, oldest first (more than one
	// once it continued in a fresh message: Stream.Messages); ended is set when Slack
	// had ended the stream before its Stop (it expired): its text is untagged.
	msgs  []string
	ended bool
	// lastLost is set when the stop that carried the answer's last text failed: the
	// text may be missing from the stream.
	lastLost bool
}

// newAnswerStream returns the stream for a turn when the Messenger can stream, or nil;
// lang is the language of its Stop button, which the stream carries only where Slack
// shows no Stop of the thread's agent session (Run.NativeStop): in the finished
// answer, a Stop of the stream's own would stay.
func (s *Handler) newAnswerStream(ctx context.Context, r *turns.Run, userID, lang string) *answerStream {
	sm, ok := s.cfg.Messenger.(conversation.StreamingMessenger)
	if !ok || s.cfg.NoStreaming || r.Out.Revising() != "" {
		return nil // an answer replacing an earlier one is posted, not streamed
	}
	a := &answerStream{s: s, log: r.Log, ctx: context.WithoutCancel(ctx), sm: sm, out: r.Out, key: r.In.Key, userID: userID}
	if tm, ok := sm.(conversation.TaskStreamingMessenger); ok {
		a.tm = tm
		if !r.NativeStop() {
			a.stopCard = render.StreamStopCard(lang, r.In.Key, r.In.ID)
		}
	} else {
		a.tasksOff = true
	}
	return a
}

// startLocked starts the stream, with the Stop button and in the display mode of
// the tasks when the Messenger shows tasks. A refusal turns streaming off, and the
// tasks with it: the progress message shows the turn, and the reply is posted when
// done (a workspace that refuses either refuses both, as far as Slack documents).
func (a *answerStream) startLocked() bool {
	if a.st != nil {
		return true
	}
	if a.failed {
		return false
	}
	ctx, cancel := context.WithTimeout(a.ctx, streamCallTimeout)
	defer cancel()
	var st conversation.Stream
	var err error
	if a.tm != nil && !a.tasksOff {
		st, err = a.out.StartTaskStream(ctx, a.tm, a.userID, conversation.TaskStreamOptions{Plan: a.plan, PlanTitle: a.planTitle, Card: a.stopCard})
		a.planTitle = ""
	} else {
		st, err = a.out.StartStream(ctx, a.sm, a.userID)
	}
	if err != nil {
		a.log.Info("answer not streamed; it will be posted when done", "error", err)
		a.failed, a.tasksOff = true, true
		return false
	}
	a.st, a.at = st, a.s.cfg.Now()
	return true
}

// showsTasks reports whether the stream shows the turn's progress (thinking steps
// and Stop), so that no progress message is needed. It starts the stream when it
// does.
func (a *answerStream) showsTasks() bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tasksOff || a.stale || a.full {
		return false
	}
	return a.startLocked() && !a.tasksOff
}

// Plan implements TaskSink.
func (a *answerStream) Plan(title string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.plan, a.planTitle = true, render.CutTask(a.s.cfg.redact, title, conversation.MaxTaskTitle)
}

// UpdateTasks implements TaskSink. A refusal turns the tasks off for the rest of the
// turn: the progress message takes over (progressCard).
func (a *answerStream) UpdateTasks(tasks ...conversation.Task) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tasksOff || !a.startLocked() || a.tasksOff {
		return
	}
	ts, ok := a.st.(conversation.TaskStream)
	if !ok {
		a.tasksOff = true
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, streamCallTimeout)
	defer cancel()
	title := a.planTitle
	shown := make([]conversation.Task, len(tasks))
	for i, t := range tasks {
		t.Title, t.Output = render.CutTask(a.s.cfg.redact, t.Title, conversation.MaxTaskTitle), render.CutTask(a.s.cfg.redact, t.Output, conversation.MaxTaskOutput)
		if t.Sources != nil {
			srcs := make([]conversation.Source, len(t.Sources))
			for j, src := range t.Sources {
				srcs[j] = conversation.Source{URL: src.URL, Text: render.CutTask(a.s.cfg.redact, src.Text, conversation.MaxTaskTitle)}
			}
			t.Sources = srcs
		}
		shown[i] = t
	}
	if err := ts.UpdateTasks(ctx, title, shown...); err != nil {
		a.log.Info("thinking steps refused; showing progress in a message", "error", err)
		a.tasksOff = true
		return
	}
	a.planTitle = ""
}

// Write implements TextSink.
func (a *answerStream) Write(delta string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failed || a.full || a.stale || delta == "" {
		return
	}
	a.buf.WriteString(delta)
	if !a.startLocked() {
		return
	}
	if utf8.RuneCountInString(a.buf.String()) >= streamChunk || a.s.cfg.Now().Sub(a.at) >= streamInterval {
		a.flushLocked()
	}
}

// Reset implements TextSink. Text already appended cannot be taken back: the stream
// then stops growing, and end replaces it with the reply.
func (a *answerStream) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.buf.Reset()
	if a.sent.Len() > 0 {
		a.stale = true
	}
}

// flushLocked appends the buffered text, cut at streamLimit.
func (a *answerStream) flushLocked() {
	chunk := a.takeLocked()
	if chunk == "" {
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, streamCallTimeout)
	defer cancel()
	if err := a.st.Append(ctx, chunk); err != nil {
		a.log.Info("answer streaming failed; the reply will be posted", "error", err)
		a.failed = true
		return
	}
	a.sent.WriteString(chunk)
	a.at = a.s.cfg.Now()
}

// takeLocked empties the buffer and returns the text of it to append next: cut at
// streamLimit, "" when nothing may be appended.
func (a *answerStream) takeLocked() string {
	chunk := a.buf.String()
	a.buf.Reset()
	if chunk == "" || a.failed || a.full || a.stale {
		return ""
	}
	if room := streamLimit - utf8.RuneCountInString(a.sent.String()); utf8.RuneCountInString(chunk) > room {
		chunk = cutMarkdown(a.sent.String(), chunk, room)
		a.full = true
	}
	return chunk
}

// stop ends the stream, if one was started, without adding the buffered text, and
// returns the ts of its messages, oldest first (none when none was started). final
// says whether the streamed text completes the turn's answer (Tag.Final).
func (a *answerStream) stop(final bool) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopLocked(final, "") == "" {
		return nil
	}
	return a.msgs
}

// stopLocked stops the stream, adding last to it (in the stop's own call where the
// stream is a conversation.TextStopper), and returns the ts of its last message (""
// when none was started); a.msgs are then all of its messages. last is added to
// a.sent once it is known to be in the message; a.lastLost is set when that is not
// known. A stop that carried last and failed for another reason than Slack's end of
// the stream (a timeout, a 429) is tried once more, with no text (stopAgainLocked).
func (a *answerStream) stopLocked(final bool, last string) string {
	if a.st == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(a.ctx, streamCallTimeout)
	defer cancel()
	var ts string
	var err error
	if last == "" {
		ts, err = a.st.Stop(ctx, final)
	} else if ts, err = conversation.StopStreamWithText(ctx, a.st, last, final); err != nil && !errors.Is(err, conversation.ErrStreamEnded) {
		a.stopAgainLocked()
	}
	a.msgs = a.st.Messages()
	switch {
	case errors.Is(err, conversation.ErrStreamEnded):
		a.log.Info("Slack had ended the answer's stream before its stop; the answer is written into its messages", "error", err)
		a.ended = true
	case err != nil && last != "":
		a.log.Info("the answer's last text may not have reached its stream; the reply replaces it", "error", err)
		a.lastLost = true
	case err != nil:
		a.log.Warn("answer stream not stopped", "error", err)
	}
	if err == nil {
		a.sent.WriteString(last)
	}
	a.st = nil
	a.failed = true
	return ts
}

// stopAgainLocked stops the stream with no text, not final, after a stop that carried
// the answer's last text failed, so that the stream does not stay open; the reply
// then replaces its messages. When Slack had applied the first stop, this one answers
// message_not_in_streaming_state (conversation.ErrStreamEnded), changing nothing.
func (a *answerStream) stopAgainLocked() {
	ctx, cancel := context.WithTimeout(a.ctx, streamCallTimeout)
	defer cancel()
	_, err := a.st.Stop(ctx, false)
	switch {
	case errors.Is(err, conversation.ErrStreamEnded):
		a.log.Debug("the answer's stream was stopped already", "error", err)
	case err != nil:
		a.log.Warn("answer stream not stopped", "error", err)
	}
}

// end finishes the stream for a turn whose reply is reply; answer is the raw answer
// reply was made from ("" when the reply is something else: a refusal, an error). It
// returns handled false when nothing was streamed: the caller
// posts reply as usual. Otherwise the reply is in the thread, and ts is the ts of its
// last message: the streamed message when it holds the whole answer, then, for a
// longer answer, the rest (converted with Config.Format) posted with PostReply; a streamed message that does not
// match reply (the answer changed, streaming broke, a truncated answer's note) is
// replaced by reply (a notice when notice: Tag.Notice), posted as the answer's final post in its place (Tag.Replace:
// chat.update), so it is tagged final and ends with the feedback buttons like any
// posted answer.
func (a *answerStream) end(ctx context.Context, reply, answer string, truncated, notice bool) (ts string, handled bool, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.st == nil {
		return "", false, nil
	}
	match := !a.failed && !a.stale && !truncated && answer != "" && strings.HasPrefix(answer, a.sent.String()+a.buf.String())
	if match {
		// The rest of the answer goes to the stream: the text not yet appended, what
		// the synthesizer added (sources), or, for a stream that showed only tasks
		// (the planner streams no text), the whole answer under them.
		a.buf.Reset()
		a.buf.WriteString(answer[a.sent.Len():])
	}
	// The last text goes with the stop (one call fewer); what does not fit the
	// stream (streamLimit) is posted below.
	var tail string
	if match {
		tail = a.takeLocked()
	}
	sent := a.sent.String() + tail
	// Whether the stream completes the reply decides its tag, set as it stops.
	var rest string
	if match && sent != "" {
		rest = answer[len(sent):]
	}
	// Only a stream that holds the whole answer is its final part; one whose text the
	// reply replaces below is not (a re-run must not take its stale text for the
	// answer), and the reply's last post is.
	ts = a.stopLocked(match && sent != "" && strings.TrimSpace(rest) == "", tail)
	if ts == "" {
		return "", false, nil
	}
	// A stream Slack ended before its stop holds the text but no tag (nor the
	// feedback buttons), and one whose last text may be missing is incomplete: the
	// reply is written into it below, once.
	match = match && !a.ended && !a.lastLost
	if match && sent != "" {
		if strings.TrimSpace(rest) == "" {
			return ts, true, nil
		}
		text := rest
		if a.s.cfg.Format != nil {
			text = a.s.cfg.Format(rest)
		}
		last, err := a.out.PostReply(ctx, text, true, true)
		if last == "" {
			last = ts
		}
		return last, true, err
	}
	// Replace what was streamed with the reply: posted as the answer's final post
	// (its tag, and the Messenger's feedback buttons) by editing the stream's
	// messages, all of them (a stream that continued in fresh messages holds the
	// answer's beginning in the earlier ones), from the first; what the reply does
	// not need of them is deleted.
	last, err := a.out.ReplaceReply(ctx, reply, a.msgs, notice)
	if last == "" && err != nil && !errors.Is(err, conversation.ErrLeaseLost) {
		a.log.Warn("streamed message not replaced; deleting it and posting the reply", "error", err)
		for _, m := range a.msgs {
			if err := a.s.cfg.Messenger.Delete(ctx, a.key, m); err != nil {
				a.log.Warn("streamed message not deleted", "ts", m, "error", err)
			}
		}
		last, err = a.out.Post(ctx, reply, true, true, notice)
	}
	if last == "" {
		last = ts
	}
	return last, true, err
}

// cutMarkdown returns the beginning of chunk, at most room characters, that ends at
// a paragraph, line or word boundary outside a code block (prior is the text before
// chunk), or all room characters when there is no such boundary.
func cutMarkdown(prior, chunk string, room int) string {
	if room <= 0 {
		return ""
	}
	head := textcut.Runes(chunk, room)
	fences := strings.Count(prior, "```")
	for _, sep := range []string{"\n\n", "\n", " "} {
		for i := strings.LastIndex(head, sep); i > 0; i = strings.LastIndex(head[:i], sep) {
			if (fences+strings.Count(head[:i], "```"))%2 == 0 {
				return head[:i+len(sep)]
			}
		}
	}
	return head
}
