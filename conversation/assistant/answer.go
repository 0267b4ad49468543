package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/focus"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
)

// AnswerMessage answers a person's message with the assistant pipeline (scope check
// → ReAct executor → synthesizer; docs/architecture.md, "Data flow of one Slack
// event"), streaming the answer where the Messenger can, with a progress message and
// Stop while tools run. earlier are thread messages from before the bot joined.
func (s *Handler) AnswerMessage(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, earlier []conversation.Message) error {
	in, msg := r.In, r.In.Message
	// A burst (the merge policy, docs/architecture.md "Double texting") is saved as
	// the person's messages, each with its ts, and asked as one question.
	msgs, texts := earlier, []string(nil)
	for _, m := range in.BurstMessages() {
		msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, UserID: m.UserID, Text: m.Text, SlackTS: m.TS})
		texts = append(texts, m.Text)
	}
	asked := strings.Join(texts, "\n")
	files := s.attachFiles(ctx, r, msg.Text)
	if (files.blocks != "" || files.meta != nil) && len(msgs) > len(earlier) {
		// Saved with the files' text and names, never their bytes, on the message that
		// carried them: a later turn reads them there (docs/architecture.md, "Files").
		i := len(msgs) - 1
		for j := len(earlier); j < len(msgs); j++ {
			if msgs[j].SlackTS == msg.TS {
				i = j
			}
		}
		msgs[i].Text += files.blocks
		msgs[i].Meta = files.meta
	}
	prompt := conversation.Prompt{
		Key:      in.Key,
		Summary:  cp.Conversation.State.Summary,
		History:  s.cfg.clipAll(append(history.Dialogue(cp.Messages), earlier...)),
		UserID:   msg.UserID,
		Text:     history.Clip(asked, s.cfg.MaxPromptChars) + files.blocks,
		Images:   files.images,
		Entities: cp.Conversation.State.Entities,
		Focus:    cp.Conversation.State.Focus,
	}
	prompt.Viewing = s.viewing(ctx, r, cp) // the agent view's (agentview.go)
	prompt.Untrusted = files.meta != nil || anyFiles(prompt.History)
	prompt.ContextChannelID = contextChannel(cp.Conversation.State) // the assistant view's channel
	if s.titleThread(ctx, r, cp.Conversation.State, asked) {
		a := *cp.Conversation.State.Assistant
		a.Titled = true
		cp.Conversation.State.Assistant = &a
	}
	return s.respond(ctx, r, cp, prompt, msgs)
}

// respond answers prompt with the assistant pipeline and ends the turn, saving msgs
// (the turn's new messages before its reply) with the reply: the rest of
// AnswerMessage, shared with the turn a tool confirmation resumes (approval.go). An
// executor that stops for a confirmation ends the turn with the confirmation card
// instead of a reply.
func (s *Handler) respond(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, prompt conversation.Prompt, msgs []conversation.Message) error {
	start := s.cfg.Now()
	if text, ts, ok := r.Out.PriorAnswer(); ok {
		// An earlier run posted the whole answer and could not save it: save it now,
		// without asking the model again.
		r.Log.Info("re-run: the answer is in the thread already; saving it")
		fctx, cancel := r.Final(ctx)
		defer cancel()
		return r.Finish(fctx, cp.Conversation, turns.Ending{Msgs: msgs, Reply: text, Posted: true, TS: ts, Answer: true,
			Update: func(st *conversation.State) { st.ToolApproval = nil }, Rebase: true})
	}
	a := s.begin(ctx, r, cp, prompt, msgs)
	out, err := s.answer(ctx, r.Log, a.prompt, a.prog.report)
	meta := out.meta(s.cfg.Now().Sub(start))
	r.Freeze()
	// The final writes run on a context that neither a stop nor the turn's timeout
	// cancelled.
	fctx, cancel := r.Final(ctx)
	defer cancel()
	if by, stopped := conversation.StoppedBy(ctx); stopped {
		return a.stopped(fctx, by, out.usage)
	}
	reply := out.text
	if err != nil {
		if done, ferr := a.failed(ctx, fctx, err, out.usage, meta); done {
			return ferr
		}
		reply = s.cfg.failureMessage(a.lang(), err, "")
	}
	if out.pending != nil && err == nil {
		for _, ts := range a.stopStream() {
			_ = s.cfg.Messenger.Delete(fctx, r.In.Key, ts) // text from before the tool calls
		}
		return s.askToolApproval(fctx, r, cp, a.prompt, out.pending, msgs, out.usage, a.prog)
	}
	return a.answered(fctx, out, reply, meta, err)
}

// answering is one answer being written: its turn, what the turn saves, and what the
// thread shows meanwhile (the progress message, the streamed answer).
type answering struct {
	h      *Handler
	r      *turns.Run
	cp     *conversation.Checkpoint
	prompt conversation.Prompt
	msgs   []conversation.Message
	prog   *progressCard
	stream *answerStream // nil when the answer is not streamed
}

// begin shows that the turn works (its status, Stop) and prepares its progress
// message and streamed answer.
func (s *Handler) begin(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, prompt conversation.Prompt, msgs []conversation.Message) *answering {
	r.AllowStop()
	r.ShowWorking(ctx)
	lang := render.UILang(render.TextLocale(prompt.Text))
	a := &answering{h: s, r: r, cp: cp, prompt: prompt, msgs: msgs,
		prog: &progressCard{s: s, r: r, log: r.Log, key: r.In.Key, inputID: r.In.ID, out: r.Out, lang: lang}}
	a.stream = s.newAnswerStream(ctx, r, prompt.UserID, lang)
	if a.stream != nil {
		a.prompt.AnswerSink = a.stream
		if a.stream.tm != nil {
			a.prompt.Tasks, a.prog.tasks = a.stream, a.stream
		}
	}
	return a
}

// lang is the language of the answer's notices: the question's.
func (a *answering) lang() string { return render.UILang(render.TextLocale(a.prompt.Text)) }

// stopStream stops the streamed answer, if any, and returns the ts of its messages,
// oldest first (none for none).
func (a *answering) stopStream() []string {
	if a.stream == nil {
		return nil
	}
	return a.stream.stop(false)
}

// stopped ends a turn a person (or a newer message) stopped at a safe point: it says
// so and saves a consistent checkpoint.
func (a *answering) stopped(fctx context.Context, by conversation.Stopped, usage conversation.Usage) error {
	a.r.Log.Info("turn stopped", "by", by.By, "new_message", by.NewMessage)
	a.stopStream()
	a.prog.finish(fctx, render.Tr(a.lang(), "progress.stopped")) // the reply says by whom and why
	return a.r.Finish(fctx, a.cp.Conversation, turns.Ending{Msgs: a.msgs, Reply: render.StoppedNote(a.lang(), by), Answer: true, Notice: true, Usage: usage,
		Update: func(st *conversation.State) { st.ToolApproval = nil }, Rebase: true})
}

// failed handles an answer that failed with err: a lost lease or a shutdown leaves
// the input pending; a message that can be answered again offers Retry (retry.go).
// done is false when the turn goes on to save the failure as its reply.
func (a *answering) failed(ctx, fctx context.Context, err error, usage conversation.Usage, meta json.RawMessage) (done bool, _ error) {
	r, s := a.r, a.h
	if errors.Is(context.Cause(ctx), conversation.ErrLeaseLost) {
		a.stopStream()
		return true, conversation.ErrLeaseLost // another worker runs the input now
	}
	if r.ShuttingDown() {
		// Shutting down: the input stays pending and runs again right away on
		// another replica, or here after the restart; the thread says so, and
		// the progress message loses its Stop.
		a.stopStream()
		a.prog.finish(fctx, render.Tr(a.lang(), "progress.restarting"))
		r.ClearStatus()
		return true, err
	}
	r.Log.Error("answer failed", "error", err)
	failed := retryOf(r)
	if failed == nil {
		return false, nil
	}
	// The failure says what failed and offers Retry (retry.go).
	lang := a.lang()
	reply := s.cfg.failureMessage(lang, err, "retry.answer")
	streamTS := a.stopStream()
	a.prog.finish(fctx, "⚠️ "+render.Tr(lang, "failed.note"))
	ts, perr := s.answerFailed(fctx, r, reply, failed, streamTS)
	if perr != nil {
		return true, perr
	}
	if ts == "" {
		// Slack refused the message with the button: the plain reply posted
		// in its place offers no Retry.
		reply, failed = s.cfg.failureMessage(lang, err, ""), nil
	}
	return true, r.Finish(fctx, a.cp.Conversation, turns.Ending{Msgs: a.msgs, Reply: reply, Posted: ts != "", TS: ts, Answer: true, Notice: true,
		Meta: meta, Usage: usage, Rebase: true, Update: func(st *conversation.State) {
			st.ToolApproval = nil
			st.Retry = failed
		}})
}

// answered ends the turn with reply, the synthesized answer of out (or, when err is
// set, the failure's message): the progress message says what was used, the
// streamed answer ends with it, and the session context keeps what the tools found.
func (a *answering) answered(fctx context.Context, out outcome, reply string, meta json.RawMessage, err error) error {
	r := a.r
	a.prog.finish(fctx, render.DoneNote(a.lang(), out.tools))
	if len(out.outOfScope) > 0 {
		reply = render.OutOfScopeReply(a.lang(), out.outOfScope)
		r.Log.Info("items out of scope", "count", len(out.outOfScope))
	}
	switch {
	case r.Out.Revising() != "" && (err != nil || reply == ""):
		r.Out.ReviseAnswer("") // a failure does not replace the earlier answer
	case r.Out.Revising() != "":
		reply += "\n\n" + render.Tr(a.lang(), "answer.edited") // it replaces the answer to the question as it was
	}
	update := func(st *conversation.State) {
		// The focus moves first: it reads the session context as the person saw it.
		st.Focus = focus.Next(st.Focus, a.prompt.Text, st.Entities, out.entities, out.outOfScope)
		st.Entities = rememberEntities(st.Entities, out.entities, out.outOfScope)
		st.ToolApproval = nil // decided, or voided by this message
	}
	if a.stream != nil {
		answer := out.answer
		if err != nil || len(out.outOfScope) > 0 {
			answer = "" // the reply is not the streamed answer
		}
		ts, handled, perr := a.stream.end(fctx, reply, answer, out.truncated, err != nil)
		if handled {
			if errors.Is(perr, conversation.ErrLeaseLost) {
				return perr
			}
			if perr != nil {
				r.Log.Error("reply not fully posted; saving it in the checkpoint", "error", perr)
			}
			return r.Finish(fctx, a.cp.Conversation, turns.Ending{Msgs: a.msgs, Reply: reply, Posted: true, TS: ts,
				Answer: true, Notice: err != nil, Meta: meta, Usage: out.usage, Update: update, Rebase: true})
		}
	}
	e := turns.Ending{Msgs: a.msgs, Reply: reply, Answer: true, Notice: err != nil, Meta: meta, Usage: out.usage, Update: update, Rebase: true}
	if failed := retryOf(r); failed != nil && err == nil && reply != "" {
		if perr := a.postRetried(fctx, &e, failed, update); perr != nil {
			return perr
		}
	}
	return r.Finish(fctx, a.cp.Conversation, e)
}

// postRetried posts the answer of a Retry of failed itself rather than by Run.Finish:
// an answer Slack refuses is a failure, with Retry, like the model's. e is the
// turn's ending, marked posted (and, when the failure offers Retry, keeping failed);
// update is its state's change.
func (a *answering) postRetried(fctx context.Context, e *turns.Ending, failed *conversation.Input, update func(*conversation.State)) error {
	ts, perr := a.r.Out.Post(fctx, e.Reply, true, true, false)
	switch {
	case errors.Is(perr, conversation.ErrLeaseLost):
		return perr
	case perr != nil:
		a.r.Log.Error("answer not posted", "error", perr)
		text := a.h.cfg.failureMessage(answerLang(failed), conversation.FailedAt(conversation.CauseSlack, perr), "retry.answer")
		fts, ferr := a.h.answerFailed(fctx, a.r, text, failed, nil)
		if ferr != nil {
			return ferr
		}
		// Not posted again by Run.Finish: the answer is saved as it is, unposted
		// (later turns have it in their history), and the failure message offers
		// Retry, which answers again.
		e.Posted = true
		if fts != "" {
			e.Update = func(st *conversation.State) { update(st); st.Retry = failed }
		}
	default:
		e.Posted, e.TS = true, ts
	}
	return nil
}

// AnswerQuestion answers, with the assistant pipeline, the reply that the "Just a
// question" button of the card asking what it meant carries (conversation/workflowrun/reply.go): an
// answer turn in the thread, the artifact left as it is. The reply is the newest
// person's message of the history already; it is the prompt's text instead.
func (s *Handler) AnswerQuestion(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint) error {
	a := r.In.Action
	question := a.Action.Arg
	hist := history.Dialogue(cp.Messages)
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Role == conversation.RoleUser {
			if hist[i].Text == question || strings.HasPrefix(hist[i].Text, question) {
				hist = append(hist[:i:i], hist[i+1:]...)
			}
			break
		}
	}
	prompt := conversation.Prompt{
		Key:      r.In.Key,
		Summary:  cp.Conversation.State.Summary,
		History:  s.cfg.clipAll(hist),
		UserID:   a.UserID,
		Text:     history.Clip(question, s.cfg.MaxPromptChars),
		Entities: cp.Conversation.State.Entities,
		Focus:    cp.Conversation.State.Focus,
	}
	prompt.Viewing = s.viewing(ctx, r, cp) // the agent view's (agentview.go)
	prompt.ContextChannelID = contextChannel(cp.Conversation.State)
	return s.respond(ctx, r, cp, prompt, nil)
}

// outcome is what the assistant pipeline produced for a turn.
type outcome struct {
	text       string
	usage      conversation.Usage
	turn       *turnMeta // how the answer was found (nil when it was not)
	entities   []conversation.Entity
	outOfScope []conversation.Entity
	// answer is the executor's answer that text was synthesized from ("" when text is
	// something else, such as the scope check's refusal), and truncated its Truncated.
	answer    string
	truncated bool
	// tools are the names of the tools used, each once, in first-use order (denied
	// calls left out).
	tools []string
	// pending is the tool call the executor stopped before, waiting for a person's
	// confirmation (Findings.Pending); nothing else is set but usage.
	pending *conversation.PendingTool
}

// answer runs scope check → executor → synthesizer. progress is told what the
// executor does. A resumed turn (p.Resume) was checked when it began; an executor
// that stops for a confirmation leaves out.pending.
func (s *Handler) answer(ctx context.Context, log *slog.Logger, p conversation.Prompt, progress conversation.Progress) (outcome, error) {
	var out outcome
	if s.cfg.Scope != nil && p.Resume == nil {
		v, err := s.cfg.Scope.CheckScope(ctx, p)
		if err != nil {
			return out, fmt.Errorf("scope check: %w", err)
		}
		out.usage = out.usage.Add(v.Usage)
		if !v.InScope {
			log.Info("request out of scope", "reason", v.Reason)
			out.text = v.Reply
			return out, nil
		}
	}
	f, err := s.cfg.Executor.Execute(ctx, p, progress)
	out.usage = out.usage.Add(f.Usage)
	if err != nil {
		return out, fmt.Errorf("execute: %w", err)
	}
	if f.Pending != nil {
		out.pending = f.Pending
		return out, nil
	}
	if out.text, err = s.cfg.Synthesizer.Synthesize(ctx, p, f); err != nil {
		return out, fmt.Errorf("synthesize: %w", err)
	}
	out.turn = &turnMeta{ToolCalls: f.ToolCalls, Steps: f.Steps, Truncated: f.Truncated, Model: s.cfg.Model, Strategy: f.Strategy}
	out.entities, out.outOfScope = f.Entities, f.OutOfScope
	for _, c := range f.ToolCalls {
		if !c.Denied && !slices.Contains(out.tools, c.Name) {
			out.tools = append(out.tools, c.Name)
		}
	}
	out.answer, out.truncated = f.Answer, f.Truncated
	if e, ok := s.cfg.Synthesizer.(conversation.AnswerEditor); ok {
		if md, edited := e.EditAnswer(p, f); edited {
			out.answer = md // the stream completes it, or the reply replaces it
		}
	}
	return out, nil
}

// rememberEntities returns the session context after a turn: the entities the turn's
// tools returned, in the order they came (so "the second one" is the second result),
// then the earlier ones, without duplicates (by id), without the items marked out of
// scope, at most MaxEntities.
func rememberEntities(old, found, outOfScope []conversation.Entity) []conversation.Entity {
	drop := map[string]bool{}
	for _, e := range outOfScope {
		drop[e.ID] = true
	}
	seen := map[string]bool{}
	out := make([]conversation.Entity, 0, conversation.MaxEntities)
	add := func(e conversation.Entity) {
		if e.ID == "" || drop[e.ID] || seen[e.ID] || len(out) == conversation.MaxEntities {
			return
		}
		seen[e.ID] = true
		e.Reason, e.Attributes = "", nil // attributes are kept for the focus only
		out = append(out, e)
	}
	for _, e := range found {
		add(e)
	}
	for _, e := range old {
		add(e)
	}
	return out
}

// turnMeta is the assistant message's Meta: how its answer was found.
type turnMeta struct {
	ToolCalls []conversation.ToolCall `json:"tool_calls,omitempty"`
	Steps     int                     `json:"steps,omitempty"`
	Truncated bool                    `json:"truncated,omitempty"`
	// Model, Strategy and LatencyMS (the turn's time, in milliseconds) are kept for
	// feedback on the answer (conversation/feedback.go).
	Model     string `json:"model,omitempty"`
	Strategy  string `json:"strategy,omitempty"`
	LatencyMS int64  `json:"latency_ms,omitempty"`
}

// meta returns the answer's Meta: how it was found, with the turn's latency (nil
// when the pipeline found no answer).
func (o outcome) meta(latency time.Duration) json.RawMessage {
	if o.turn == nil {
		return nil
	}
	t := *o.turn
	t.LatencyMS = max(latency.Milliseconds(), 1)
	b, _ := json.Marshal(t) // plain values: cannot fail
	return b
}
