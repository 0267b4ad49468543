package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Status texts shown in the thread while a turn runs.
const (
	StatusThinking = "is thinking…"
)

// saveAttempts bounds how often a turn's save is rebased onto a newer version after
// ErrConflict (another turn wrote the conversation meanwhile: a pipeline checkpoint).
const saveAttempts = 3

// statusInterval is the least time between two progress updates of one turn, to stay
// well inside Slack's rate limits.
const statusInterval = time.Second

// final returns the context of a turn's final writes (its reply, cards, save): not
// cancelled with the turn's (a stop, a timeout), bounded by FinalTimeout.
func (s *Service) final(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.FinalTimeout)
}

// turn runs one input: load the checkpoint, run the assistant pipeline or a workflow
// step, post the reply, save the checkpoint (docs/architecture.md, "Data flow of one
// Slack event", step 4). Every outcome the user should know about reaches the thread.
// It returns nil once the input is finished (saved, or finished as dropped or failed),
// and an error when the input stays pending to be run again: the store did not
// answer, the service is shutting down, or the lease was lost (ErrLeaseLost).
func (s *Service) turn(ctx context.Context, r *run) error {
	in := r.in
	// A pipeline past MaxAttempts halts itself (runPipeline), saving its state; only
	// when even that keeps failing is it given up here.
	if limit := s.cfg.MaxAttempts; in.Attempts > limit && in.Kind != KindPipeline || in.Attempts > limit+2 {
		return s.giveUp(ctx, r)
	}
	switch {
	case in.Kind == KindCommand && in.Command != nil && in.Key.ThreadTS == "":
		return s.channelCommand(ctx, r)
	case (in.Kind == KindAction && in.Action != nil) || (in.Kind == KindCommand && in.Command != nil) || in.Kind == KindPipeline:
		cp, err := s.load(ctx, r)
		if errors.Is(err, ErrNotFound) {
			cp, err = &Checkpoint{Conversation: Conversation{Key: in.Key, State: State{Mode: ModeAssistant}}}, nil
		}
		if err != nil {
			return err
		}
		s.compact(ctx, r.log, cp)
		_, err = s.workflowTurn(ctx, r, cp, nil)
		return err
	case in.Kind != KindUserMessage || in.Message == nil:
		r.log.Error("input dropped: its kind is not handled", "kind", in.Kind)
		return s.finish(ctx, r, InputDropped)
	}
	msg := in.Message

	cp, err := s.load(ctx, r)
	var earlier []Message // thread messages from before the bot joined, for a new conversation
	switch {
	case errors.Is(err, ErrNotFound):
		if !msg.Mentioned && !msg.Direct {
			return s.finish(ctx, r, InputDropped) // a thread the bot is not part of
		}
		cp = &Checkpoint{Conversation: Conversation{Key: in.Key, State: State{Mode: ModeAssistant, StartedBy: msg.UserID}}}
		if msg.ThreadTS != "" && msg.ThreadTS != msg.TS {
			earlier, err = s.cfg.Messenger.ThreadHistory(ctx, in.Key, msg.TS, s.cfg.ThreadContextMessages)
			if err != nil {
				r.log.Warn("earlier thread messages unavailable; answering without them", "error", err)
				earlier = nil
			}
			for i := range earlier {
				earlier[i].Role = RoleContext
			}
		}
	case err != nil:
		return err
	default:
		s.compact(ctx, r.log, cp)
	}

	user := Message{Role: RoleUser, UserID: msg.UserID, Text: msg.Text, SlackTS: msg.TS}
	if text, ts, ok := r.out.priorAnswer(); ok {
		// An earlier run posted the whole answer and could not save it: save it now,
		// without asking the model again.
		r.log.Info("re-run: the answer is in the thread already; saving it")
		fctx, cancel := s.final(ctx)
		defer cancel()
		return s.record(fctx, r, cp, append(earlier, user), text, ts, Usage{}, nil, nil)
	}
	if cp.Conversation.State.Mode == ModeWorkflow || ((msg.Mentioned || msg.Direct) && isTextCommand(msg.Text)) {
		if handled, err := s.workflowTurn(ctx, r, cp, earlier); handled {
			return err
		}
	}

	s.allowStop(in.Key)
	s.setStatus(ctx, r.log, in.Key, StatusThinking)
	prog := &progressCard{s: s, log: r.log, key: in.Key, inputID: in.ID, out: r.out}
	prompt := Prompt{
		Key:      in.Key,
		Summary:  cp.Conversation.State.Summary,
		History:  s.clipAll(append(dialogue(cp.Messages), earlier...)),
		UserID:   msg.UserID,
		Text:     clip(msg.Text, s.cfg.MaxPromptChars),
		Entities: cp.Conversation.State.Entities,
	}
	stream := s.newAnswerStream(ctx, r, msg.UserID)
	if stream != nil {
		prompt.AnswerSink = stream
	}
	out, err := s.answer(ctx, r.log, prompt, prog.report)
	reply, usage, meta := out.text, out.usage, out.meta
	s.freeze(in.Key)
	// The final writes run on a context that neither a stop nor the turn's timeout
	// cancelled.
	fctx, cancel := s.final(ctx)
	defer cancel()
	if by, stopped := stoppedBy(ctx); stopped {
		// Stopped at a safe point: say so and save a consistent checkpoint.
		r.log.Info("turn stopped", "by", by.By, "new_message", by.NewMessage)
		if stream != nil {
			stream.stop(false)
		}
		prog.finish(fctx, "⏹ Stopped.") // the reply says by whom and why
		return s.reply(fctx, r, cp, append(earlier, user), stoppedNote(by), usage, nil, nil)
	}
	if err != nil {
		if errors.Is(context.Cause(ctx), ErrLeaseLost) {
			if stream != nil {
				stream.stop(false)
			}
			return ErrLeaseLost // another worker runs the input now
		}
		if s.ctx.Err() != nil {
			// Shutting down: the input stays pending and runs again right away on
			// another replica, or here after the restart; the thread says so, and
			// the progress message loses its Stop.
			if stream != nil {
				stream.stop(false)
			}
			prog.finish(fctx, "⏸ Interrupted by a restart; I'll pick this up again in a moment.")
			s.clearStatus(r.log, in.Key)
			return err
		}
		r.log.Error("answer failed", "error", err)
		reply = ErrorReply(err)
	}
	prog.finish(fctx, doneNote(out.tools))
	if len(out.outOfScope) > 0 {
		reply = outOfScopeReply(out.outOfScope)
		r.log.Info("items out of scope", "count", len(out.outOfScope))
	}
	update := func(st *State) {
		st.Entities = rememberEntities(st.Entities, out.entities, out.outOfScope)
	}
	if stream != nil {
		answer := out.answer
		if err != nil || len(out.outOfScope) > 0 {
			answer = "" // the reply is not the streamed answer
		}
		ts, handled, perr := stream.end(fctx, reply, answer, out.truncated)
		if handled {
			if errors.Is(perr, ErrLeaseLost) {
				return perr
			}
			if perr != nil {
				r.log.Error("reply not fully posted; saving it in the checkpoint", "error", perr)
			}
			s.clearStatus(r.log, in.Key)
			return s.record(fctx, r, cp, append(earlier, user), reply, ts, usage, meta, update)
		}
	}
	return s.reply(fctx, r, cp, append(earlier, user), reply, usage, meta, update)
}

// load loads r's checkpoint, retrying while the store is unavailable. Errors:
// ErrNotFound; the store's.
func (s *Service) load(ctx context.Context, r *run) (*Checkpoint, error) {
	var cp *Checkpoint
	err := s.retryStore(ctx, "load the checkpoint", func(ctx context.Context) error {
		var err error
		cp, err = s.cfg.Store.Load(ctx, r.in.Key, s.cfg.HistoryMessages)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("load checkpoint: %w", err)
	}
	return cp, err
}

// giveUp ends an input that was tried MaxAttempts times (its turns kept failing, or
// its workers kept dying): the person is told, and the input is finished as failed.
func (s *Service) giveUp(ctx context.Context, r *run) error {
	fctx, cancel := s.final(ctx)
	defer cancel()
	r.log.Error("input given up after repeated attempts", "attempts", r.in.Attempts-1)
	text := fmt.Sprintf("Sorry, I could not finish this after %d attempts, so I stopped trying. Please try again.", s.cfg.MaxAttempts)
	if r.in.Message != nil {
		text = fmt.Sprintf("Sorry, I gave up on this message after %d attempts. Please send it again.", s.cfg.MaxAttempts)
	}
	user := ""
	switch {
	case r.in.Action != nil:
		user = r.in.Action.UserID
	case r.in.Command != nil:
		user = r.in.Command.UserID
	}
	var err error
	if r.in.Key.ThreadTS == "" || r.in.Kind == KindAction {
		if user != "" {
			err = s.cfg.Messenger.PostEphemeral(fctx, r.in.Key, user, text)
		}
	} else {
		_, err = r.out.PostReply(fctx, text, false, false)
	}
	if errors.Is(err, ErrLeaseLost) {
		return err
	}
	if err != nil {
		r.log.Warn("notice of a given-up input not posted", "error", err)
	}
	return s.finish(fctx, r, InputFailed)
}

// workflowTurn runs a workflow turn with the thread's status shown meanwhile.
func (s *Service) workflowTurn(ctx context.Context, r *run, cp *Checkpoint, earlier []Message) (bool, error) {
	s.setStatus(ctx, r.log, r.in.Key, StatusThinking)
	handled, err := s.runWorkflow(ctx, r, cp, earlier)
	s.clearStatus(r.log, r.in.Key)
	return handled, err
}

// outcome is what the assistant pipeline produced for a turn.
type outcome struct {
	text       string
	usage      Usage
	meta       json.RawMessage // the tool-call record
	entities   []Entity
	outOfScope []Entity
	// answer is the executor's answer that text was synthesized from ("" when text is
	// something else, such as the scope check's refusal), and truncated its Truncated.
	answer    string
	truncated bool
	// tools are the names of the tools used, each once, in first-use order.
	tools []string
}

// answer runs scope check → executor → synthesizer. progress is told what the
// executor does.
func (s *Service) answer(ctx context.Context, log *slog.Logger, p Prompt, progress Progress) (outcome, error) {
	var out outcome
	if s.cfg.Scope != nil {
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
	if out.text, err = s.cfg.Synthesizer.Synthesize(ctx, p, f); err != nil {
		return out, fmt.Errorf("synthesize: %w", err)
	}
	if len(f.ToolCalls) > 0 || f.Truncated {
		out.meta, _ = json.Marshal(turnMeta{ToolCalls: f.ToolCalls, Steps: f.Steps, Truncated: f.Truncated})
	}
	out.entities, out.outOfScope = f.Entities, f.OutOfScope
	for _, c := range f.ToolCalls {
		if !slices.Contains(out.tools, c.Name) {
			out.tools = append(out.tools, c.Name)
		}
	}
	out.answer, out.truncated = f.Answer, f.Truncated
	return out, nil
}

// outOfScopeReply is the rejection that names the items a tool marked out of scope.
func outOfScopeReply(items []Entity) string {
	var b strings.Builder
	b.WriteString("I can't help with these, because they are outside what I'm set up for:")
	for _, e := range items {
		b.WriteString("\n• ")
		if e.Title != "" {
			b.WriteString("*" + e.Title + "* ")
		}
		b.WriteString("(`" + e.ID + "`)")
		if e.Reason != "" {
			b.WriteString(": " + e.Reason)
		}
	}
	b.WriteString("\nI've set them aside, so later questions won't refer to them.")
	return b.String()
}

// rememberEntities returns the session context after a turn: the entities the turn's
// tools returned, most recent first, then the earlier ones, without duplicates (by
// id), without the items marked out of scope, at most MaxEntities.
func rememberEntities(old, found, outOfScope []Entity) []Entity {
	drop := map[string]bool{}
	for _, e := range outOfScope {
		drop[e.ID] = true
	}
	seen := map[string]bool{}
	out := make([]Entity, 0, MaxEntities)
	add := func(e Entity) {
		if e.ID == "" || drop[e.ID] || seen[e.ID] || len(out) == MaxEntities {
			return
		}
		seen[e.ID] = true
		e.Reason = ""
		out = append(out, e)
	}
	for i := len(found) - 1; i >= 0; i-- {
		add(found[i])
	}
	for _, e := range old {
		add(e)
	}
	return out
}

// turnMeta is the assistant message's Meta: how its answer was found.
type turnMeta struct {
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Steps     int        `json:"steps,omitempty"`
	Truncated bool       `json:"truncated,omitempty"`
}

// reply posts text to the thread as the turn's answer and saves the turn: the new
// messages (earlier thread context, the user's message, the reply) and the updated
// state, marking the input done. A reply that could not be posted is still saved, so
// nothing is lost. ctx is the final writes' context.
func (s *Service) reply(ctx context.Context, r *run, cp *Checkpoint, msgs []Message, text string, usage Usage, meta json.RawMessage, update func(*State)) error {
	ts, err := r.out.PostReply(ctx, text, true, true)
	if errors.Is(err, ErrLeaseLost) {
		return err
	}
	if err != nil {
		r.log.Error("reply not posted; saving it in the checkpoint", "error", err)
	}
	s.clearStatus(r.log, r.in.Key)
	return s.record(ctx, r, cp, msgs, text, ts, usage, meta, update)
}

// record saves a turn whose reply text is in the thread already, its last message at
// ts (see reply).
func (s *Service) record(ctx context.Context, r *run, cp *Checkpoint, msgs []Message, text, ts string, usage Usage, meta json.RawMessage, update func(*State)) error {
	msgs = append(msgs, Message{
		Role: RoleAssistant, Text: text, SlackTS: ts, Meta: meta,
		PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens,
	})
	return s.save(ctx, r, cp.Conversation, msgs, usage, update)
}

// save writes the turn with an optimistic version check, applying update (when set)
// to the state, and marks the input done. On ErrConflict (the conversation moved on
// meanwhile: a pipeline's checkpoint) it reloads the control row and appends after
// the newer messages, up to saveAttempts times. An unavailable store is retried until
// ctx ends.
func (s *Service) save(ctx context.Context, r *run, conv Conversation, msgs []Message, usage Usage, update func(*State)) error {
	r.out.cleanup(ctx, r.log)
	for i := 0; ; i++ {
		st := conv.State
		if update != nil {
			update(&st)
		}
		st.Turns++
		st.PromptTokens += usage.PromptTokens
		st.CompletionTokens += usage.CompletionTokens
		_, err := s.storeSave(ctx, r, Turn{Key: r.in.Key, Version: conv.Version, State: st, Append: msgs, InputID: r.in.ID})
		if !errors.Is(err, ErrConflict) || i+1 == saveAttempts {
			if err != nil {
				return fmt.Errorf("save turn: %w", err)
			}
			return nil
		}
		var cp *Checkpoint
		if lerr := s.retryStore(ctx, "reload after a conflict", func(ctx context.Context) error {
			var err error
			cp, err = s.cfg.Store.Load(ctx, r.in.Key, 0)
			return err
		}); lerr != nil {
			return fmt.Errorf("save turn: reload after conflict: %w", lerr)
		}
		conv = cp.Conversation
	}
}

// storeSave writes turn under r's lease, retrying while the store is unavailable.
func (s *Service) storeSave(ctx context.Context, r *run, turn Turn) (Saved, error) {
	turn.Lease = r.lease
	var saved Saved
	err := s.retryStore(ctx, "save the turn", func(ctx context.Context) error {
		var err error
		saved, err = s.cfg.Store.Save(ctx, turn)
		return err
	})
	return saved, err
}

// finish ends r's input without a save, as status (dropped or failed), under its
// lease, retrying while the store is unavailable.
func (s *Service) finish(ctx context.Context, r *run, status InputStatus) error {
	fctx, cancel := s.final(ctx)
	defer cancel()
	r.out.cleanup(fctx, r.log)
	err := s.retryStore(fctx, "finish the input", func(ctx context.Context) error {
		return s.cfg.Store.Finish(ctx, r.lease, r.in.ID, status)
	})
	if err != nil {
		return fmt.Errorf("finish input as %s: %w", status, err)
	}
	return nil
}

// setStatus shows status in the thread; failing to is logged, never fatal.
func (s *Service) setStatus(ctx context.Context, log *slog.Logger, key Key, status string) {
	if err := s.cfg.Messenger.SetStatus(ctx, key, status); err != nil {
		log.Debug("status not shown", "status", status, "error", err)
	}
}

// clearStatus clears the thread's status even when the turn's context has ended.
func (s *Service) clearStatus(log *slog.Logger, key Key) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.setStatus(ctx, log, key, "")
}

// progressCard shows what a turn's executor is doing: the thread's status, and a
// message with the current step and a Stop button, posted at the first step and
// updated at most once per statusInterval (Slack's chat.update is rate limited).
type progressCard struct {
	s       *Service
	log     *slog.Logger
	key     Key
	inputID string
	out     *outbox

	// mu guards the fields below and serializes the calls to Slack.
	mu sync.Mutex
	ts string    // the progress message, once posted
	at time.Time // when it was last posted or updated
}

// report is the executor's Progress callback.
func (p *progressCard) report(status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out.lost() {
		return // another worker runs the input now
	}
	now := p.s.cfg.Now()
	if p.ts != "" && now.Sub(p.at) < statusInterval {
		return // too soon after the last update (chat.update is rate limited)
	}
	p.at = now
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.s.setStatus(ctx, p.log, p.key, status)
	card := Card{Text: status, Blocks: []Block{
		{Kind: BlockContext, Text: "⏳ " + status},
		{Kind: BlockActions, Buttons: []Button{{Label: "Stop", Style: "danger",
			Action: Action{Name: ActionStop, Channel: p.key.ChannelID, ThreadTS: p.key.ThreadTS, Arg: p.inputID}}}},
	}}
	if p.ts == "" {
		ts, err := p.out.PostCard(ctx, card)
		if err != nil {
			p.log.Debug("progress message not posted", "error", err)
			return
		}
		p.ts = ts
		return
	}
	if err := p.s.cfg.Messenger.UpdateCard(ctx, p.key, p.ts, card); err != nil {
		p.log.Debug("progress message not updated", "error", err)
	}
}

// finish replaces the progress message, if one was posted, with note and no button.
func (p *progressCard) finish(ctx context.Context, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ts == "" || p.out.lost() {
		return
	}
	card := Card{Text: note, Blocks: []Block{{Kind: BlockContext, Text: note}}}
	if err := p.s.cfg.Messenger.UpdateCard(ctx, p.key, p.ts, card); err != nil {
		p.log.Debug("progress message not finished", "error", err)
	}
}

// doneNote closes the progress message of a finished turn.
func doneNote(tools []string) string {
	if len(tools) == 0 {
		return "✓ Done"
	}
	return "✓ Used " + strings.Join(tools, ", ")
}

// stoppedNote is the reply of a stopped turn.
func stoppedNote(by Stopped) string {
	if by.NewMessage {
		return "Stopped: a newer message arrived, so I'm answering that one instead."
	}
	return fmt.Sprintf("Stopped at <@%s>'s request. Nothing else was done; ask again when you're ready.", by.By)
}

// compact bounds the history a turn gives the model: it drops from cp the messages
// already folded into the summary and, when the rest pass HistoryTokens or fill three
// quarters of HistoryMessages, folds the older half of them into the summary
// (cp.Conversation.State, saved with the turn). Counting every stored message, not
// only the dialogue, makes messages fold before they can leave the loaded window.
// Only dialogue is summarized; other records (artifact revisions) are just passed
// over, their content lives in the workflow state. A summarizer failure is logged and
// the turn goes on with the longer history. Usage is added to the state's totals.
func (s *Service) compact(ctx context.Context, log *slog.Logger, cp *Checkpoint) {
	st := &cp.Conversation.State
	live := cp.Messages[:0:0]
	for _, m := range cp.Messages {
		if m.Seq > st.SummaryThroughSeq {
			live = append(live, m)
		}
	}
	cp.Messages = live
	if s.cfg.Summarizer == nil || len(live) < 2 ||
		(estimateTokens(dialogue(live)) <= s.cfg.HistoryTokens && len(live) <= s.cfg.HistoryMessages*3/4) {
		return
	}
	half := live[:len(live)/2]
	if fold := dialogue(half); len(fold) > 0 {
		r := SummaryRequest{Previous: st.Summary, Messages: fold}
		if st.Workflow != nil {
			r.Workflow, r.Locale = st.Workflow.Name, st.Workflow.Locale
		}
		summary, u, err := s.cfg.Summarizer.Summarize(ctx, r)
		st.PromptTokens += u.PromptTokens
		st.CompletionTokens += u.CompletionTokens
		if err != nil {
			log.Warn("history not summarized; the turn uses the longer history", "error", err)
			return
		}
		st.Summary = summary
	}
	st.SummaryThroughSeq = half[len(half)-1].Seq
	cp.Messages = live[len(half):]
	log.Info("history summarized", "messages", len(half), "through_seq", st.SummaryThroughSeq)
}

// estimateTokens estimates the tokens of msgs' texts: four characters a token, the
// usual rule of thumb for English with OpenAI's tokenizers.
func estimateTokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += utf8.RuneCountInString(m.Text)/4 + 4
	}
	return n
}

// dialogue returns the messages of msgs that are part of the conversation (user,
// assistant and earlier thread context), leaving out records such as artifact
// revisions.
func dialogue(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case RoleUser, RoleAssistant, RoleContext:
			out = append(out, m)
		}
	}
	return out
}

// clipAll returns msgs with every text clipped to MaxPromptChars.
func (s *Service) clipAll(msgs []Message) []Message {
	for i := range msgs {
		msgs[i].Text = clip(msgs[i].Text, s.cfg.MaxPromptChars)
	}
	return msgs
}

// clip shortens text to at most n characters (runes), noting how much was left out.
func clip(text string, n int) string {
	total := utf8.RuneCountInString(text)
	if total <= n {
		return text
	}
	cut := 0
	for i := range text {
		if n == 0 {
			cut = i
			break
		}
		n--
	}
	return fmt.Sprintf("%s\n[… message clipped: the first %d of %d characters are shown]", text[:cut], utf8.RuneCountInString(text[:cut]), total)
}

// ErrorReply returns the short text to show in Slack for a failed turn: the error's
// own UserMessage() when it has one, otherwise a generic apology; the details stay in
// the log.
func ErrorReply(err error) string {
	var u interface{ UserMessage() string }
	switch {
	case errors.As(err, &u):
		return u.UserMessage()
	case errors.Is(err, context.DeadlineExceeded):
		return "Sorry, that took too long and I stopped. Please try again, perhaps with a narrower question."
	default:
		return "Sorry, something went wrong while I was answering. Please try again in a moment."
	}
}
