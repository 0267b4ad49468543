package assistant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
)

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
		if md, edited := e.EditAnswer(f); edited {
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
		e.Reason = ""
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

// AnswerMessage answers a person's message with the assistant pipeline (scope check
// → ReAct executor → synthesizer; docs/architecture.md, "Data flow of one Slack
// event"), streaming the answer where the Messenger can, with a progress message and
// Stop while tools run. earlier are thread messages from before the bot joined.
func (s *Handler) AnswerMessage(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, earlier []conversation.Message) error {
	in, msg := r.In, r.In.Message
	user := conversation.Message{Role: conversation.RoleUser, UserID: msg.UserID, Text: msg.Text, SlackTS: msg.TS}
	prompt := conversation.Prompt{
		Key:      in.Key,
		Summary:  cp.Conversation.State.Summary,
		History:  s.clipAll(append(history.Dialogue(cp.Messages), earlier...)),
		UserID:   msg.UserID,
		Text:     history.Clip(msg.Text, s.cfg.MaxPromptChars),
		Entities: cp.Conversation.State.Entities,
	}
	prompt.ContextChannelID = contextChannel(cp.Conversation.State) // the assistant view's channel
	if s.titleThread(ctx, r, cp.Conversation.State, msg.Text) {
		a := *cp.Conversation.State.Assistant
		a.Titled = true
		cp.Conversation.State.Assistant = &a
	}
	return s.respond(ctx, r, cp, prompt, append(earlier, user))
}

// respond answers prompt with the assistant pipeline and ends the turn, saving msgs
// (the turn's new messages before its reply) with the reply: the rest of
// AnswerMessage, shared with the turn a tool confirmation resumes
// (approval.go). An executor that stops for a confirmation ends
// the turn with the confirmation card instead of a reply.
func (s *Handler) respond(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, prompt conversation.Prompt, msgs []conversation.Message) error {
	in := r.In
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
	r.AllowStop()
	r.SetStatus(ctx, turns.StatusThinking)
	prog := &progressCard{s: s, r: r, log: r.Log, key: in.Key, inputID: in.ID, out: r.Out}
	stream := s.newAnswerStream(ctx, r, prompt.UserID)
	if stream != nil {
		prompt.AnswerSink = stream
		if stream.tm != nil {
			prompt.Tasks, prog.tasks = stream, stream
		}
	}
	out, err := s.answer(ctx, r.Log, prompt, prog.report)
	reply, usage, meta := out.text, out.usage, out.meta(s.cfg.Now().Sub(start))
	r.Freeze()
	// The final writes run on a context that neither a stop nor the turn's timeout
	// cancelled.
	fctx, cancel := r.Final(ctx)
	defer cancel()
	if by, stopped := conversation.StoppedBy(ctx); stopped {
		// Stopped at a safe point: say so and save a consistent checkpoint.
		r.Log.Info("turn stopped", "by", by.By, "new_message", by.NewMessage)
		if stream != nil {
			stream.stop(false)
		}
		prog.finish(fctx, "⏹ Stopped.") // the reply says by whom and why
		return r.Finish(fctx, cp.Conversation, turns.Ending{Msgs: msgs, Reply: render.StoppedNote(by), Answer: true, Notice: true, Usage: usage,
			Update: func(st *conversation.State) { st.ToolApproval = nil }, Rebase: true})
	}
	if err != nil {
		if errors.Is(context.Cause(ctx), conversation.ErrLeaseLost) {
			if stream != nil {
				stream.stop(false)
			}
			return conversation.ErrLeaseLost // another worker runs the input now
		}
		if r.ShuttingDown() {
			// Shutting down: the input stays pending and runs again right away on
			// another replica, or here after the restart; the thread says so, and
			// the progress message loses its Stop.
			if stream != nil {
				stream.stop(false)
			}
			prog.finish(fctx, "⏸ Interrupted by a restart; I'll pick this up again in a moment.")
			r.ClearStatus()
			return err
		}
		r.Log.Error("answer failed", "error", err)
		lang := render.UILang(render.TextLocale(prompt.Text))
		reply = s.failureMessage(lang, err, "")
		if failed := retryOf(r); failed != nil {
			// The failure says what failed and offers Retry (retry.go).
			reply = s.failureMessage(lang, err, "retry.answer")
			var streamTS string
			if stream != nil {
				streamTS = stream.stop(false)
			}
			prog.finish(fctx, "⚠️ "+render.Tr(lang, "failed.note"))
			ts, perr := s.answerFailed(fctx, r, reply, failed, streamTS)
			if perr != nil {
				return perr
			}
			if ts == "" {
				// Slack refused the message with the button: the plain reply posted
				// in its place offers no Retry.
				reply, failed = s.failureMessage(lang, err, ""), nil
			}
			return r.Finish(fctx, cp.Conversation, turns.Ending{Msgs: msgs, Reply: reply, Posted: ts != "", TS: ts, Answer: true, Notice: true,
				Meta: meta, Usage: usage, Rebase: true, Update: func(st *conversation.State) {
					st.ToolApproval = nil
					st.Retry = failed
				}})
		}
	}
	if out.pending != nil && err == nil {
		if stream != nil {
			if ts := stream.stop(false); ts != "" {
				_ = s.cfg.Messenger.Delete(fctx, in.Key, ts) // text from before the tool calls
			}
		}
		return s.askToolApproval(fctx, r, cp, prompt, out.pending, msgs, usage, prog)
	}
	prog.finish(fctx, render.DoneNote(out.tools))
	if len(out.outOfScope) > 0 {
		reply = render.OutOfScopeReply(render.UILang(render.TextLocale(prompt.Text)), out.outOfScope)
		r.Log.Info("items out of scope", "count", len(out.outOfScope))
	}
	update := func(st *conversation.State) {
		st.Entities = rememberEntities(st.Entities, out.entities, out.outOfScope)
		st.ToolApproval = nil // decided, or voided by this message
	}
	if stream != nil {
		answer := out.answer
		if err != nil || len(out.outOfScope) > 0 {
			answer = "" // the reply is not the streamed answer
		}
		ts, handled, perr := stream.end(fctx, reply, answer, out.truncated, err != nil)
		if handled {
			if errors.Is(perr, conversation.ErrLeaseLost) {
				return perr
			}
			if perr != nil {
				r.Log.Error("reply not fully posted; saving it in the checkpoint", "error", perr)
			}
			return r.Finish(fctx, cp.Conversation, turns.Ending{Msgs: msgs, Reply: reply, Posted: true, TS: ts,
				Answer: true, Notice: err != nil, Meta: meta, Usage: usage, Update: update, Rebase: true})
		}
	}
	e := turns.Ending{Msgs: msgs, Reply: reply, Answer: true, Notice: err != nil, Meta: meta, Usage: usage, Update: update, Rebase: true}
	if failed := retryOf(r); failed != nil && err == nil && reply != "" {
		// Posted here rather than by finishTurn: an answer Slack refuses is a
		// failure, with Retry, like the model's.
		ts, perr := r.Out.Post(fctx, reply, true, true, false)
		switch {
		case errors.Is(perr, conversation.ErrLeaseLost):
			return perr
		case perr != nil:
			r.Log.Error("answer not posted", "error", perr)
			text := s.failureMessage(answerLang(failed), conversation.FailedAt(conversation.CauseSlack, perr), "retry.answer")
			fts, ferr := s.answerFailed(fctx, r, text, failed, "")
			if ferr != nil {
				return ferr
			}
			// Not posted again by finishTurn: the answer is saved as it is, unposted
			// (later turns have it in their history), and the failure message offers
			// Retry, which answers again.
			e.Posted = true
			if fts != "" {
				e.Update = func(st *conversation.State) { update(st); st.Retry = failed }
			}
		default:
			e.Posted, e.TS = true, ts
		}
	}
	return r.Finish(fctx, cp.Conversation, e)
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
		History:  s.clipAll(hist),
		UserID:   a.UserID,
		Text:     history.Clip(question, s.cfg.MaxPromptChars),
		Entities: cp.Conversation.State.Entities,
	}
	prompt.ContextChannelID = contextChannel(cp.Conversation.State)
	return s.respond(ctx, r, cp, prompt, nil)
}
