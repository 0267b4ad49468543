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

// claimGrace is added to TurnTimeout for an input's claim, so that a claim outlives
// the turn that holds it.
const claimGrace = time.Minute

// saveAttempts bounds how often a turn's save is rebased onto a newer version after
// ErrConflict (another replica wrote the conversation meanwhile).
const saveAttempts = 3

// statusInterval is the least time between two progress updates of one turn, to stay
// well inside Slack's rate limits.
const statusInterval = time.Second

// turn runs one input: load the checkpoint, run the assistant pipeline, post the reply,
// save the checkpoint (DESIGN.md, "Data flow", step 4). Every outcome the user should
// know about reaches the thread; the returned error is for the log.
func (s *Service) turn(ctx context.Context, log *slog.Logger, in Input) error {
	attempt, claimed, err := s.cfg.Store.Claim(ctx, in.ID, s.cfg.Now().Add(s.cfg.TurnTimeout+claimGrace))
	if err != nil {
		return fmt.Errorf("claim input: %w", err)
	}
	if !claimed {
		log.Debug("input already answered or claimed by another worker")
		return nil
	}
	in.Attempts = attempt
	switch {
	case in.Kind == KindCommand && in.Command != nil && in.Key.ThreadTS == "":
		return s.channelCommand(ctx, log, in)
	case (in.Kind == KindAction && in.Action != nil) || (in.Kind == KindCommand && in.Command != nil) || in.Kind == KindPipeline:
		cp, err := s.cfg.Store.Load(ctx, in.Key, s.cfg.HistoryMessages)
		if errors.Is(err, ErrNotFound) {
			cp, err = &Checkpoint{Conversation: Conversation{Key: in.Key, State: State{Mode: ModeAssistant}}}, nil
		}
		if err != nil {
			return fmt.Errorf("load checkpoint: %w", err)
		}
		s.compact(ctx, log, cp)
		_, err = s.workflowTurn(ctx, log, in, cp, nil)
		return err
	case in.Kind != KindUserMessage || in.Message == nil:
		return s.finish(ctx, in, InputDropped, fmt.Errorf("input kind %q is not handled", in.Kind))
	}
	msg := in.Message

	cp, err := s.cfg.Store.Load(ctx, in.Key, s.cfg.HistoryMessages)
	var earlier []Message // thread messages from before the bot joined, for a new conversation
	switch {
	case errors.Is(err, ErrNotFound):
		if !msg.Mentioned && !msg.Direct {
			return s.finish(ctx, in, InputDropped, nil) // a thread the bot is not part of
		}
		cp = &Checkpoint{Conversation: Conversation{Key: in.Key, State: State{Mode: ModeAssistant, StartedBy: msg.UserID}}}
		if msg.ThreadTS != "" && msg.ThreadTS != msg.TS {
			earlier, err = s.cfg.Messenger.ThreadHistory(ctx, in.Key, msg.TS, s.cfg.ThreadContextMessages)
			if err != nil {
				log.Warn("earlier thread messages unavailable; answering without them", "error", err)
				earlier = nil
			}
			for i := range earlier {
				earlier[i].Role = RoleContext
			}
		}
	case err != nil:
		return fmt.Errorf("load checkpoint: %w", err)
	default:
		s.compact(ctx, log, cp)
	}

	user := Message{Role: RoleUser, UserID: msg.UserID, Text: msg.Text, SlackTS: msg.TS}
	if attempt > s.cfg.MaxAttempts {
		reply := fmt.Sprintf("Sorry, I gave up on this message after %d attempts. Please send it again.", s.cfg.MaxAttempts)
		return s.reply(ctx, log, in, cp, append(earlier, user), reply, Usage{}, nil, nil)
	}

	if cp.Conversation.State.Mode == ModeWorkflow || ((msg.Mentioned || msg.Direct) && isTextCommand(msg.Text)) {
		if handled, err := s.workflowTurn(ctx, log, in, cp, earlier); handled {
			return err
		}
	}

	s.running.allowStop(in.Key)
	s.setStatus(ctx, log, in.Key, StatusThinking)
	prog := &progressCard{s: s, log: log, key: in.Key, inputID: in.ID}
	prompt := Prompt{
		Key:      in.Key,
		Summary:  cp.Conversation.State.Summary,
		History:  s.clipAll(append(dialogue(cp.Messages), earlier...)),
		UserID:   msg.UserID,
		Text:     clip(msg.Text, s.cfg.MaxPromptChars),
		Entities: cp.Conversation.State.Entities,
	}
	stream := s.newAnswerStream(ctx, log, in.Key, msg.UserID)
	if stream != nil {
		prompt.AnswerSink = stream
	}
	out, err := s.answer(ctx, log, prompt, prog.report)
	reply, usage, meta := out.text, out.usage, out.meta
	s.running.freeze(in.Key)
	if by, stopped := stoppedBy(ctx); stopped {
		// Stopped at a safe point: say so and save a consistent checkpoint with a
		// context that the stop did not cancel.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		log.Info("turn stopped", "by", by.By, "new_message", by.NewMessage)
		if stream != nil {
			stream.stop()
		}
		prog.finish(ctx, "⏹ "+stoppedNote(by))
		return s.reply(ctx, log, in, cp, append(earlier, user), stoppedNote(by), usage, nil, nil)
	}
	if err != nil {
		if s.ctx.Err() != nil {
			if stream != nil {
				stream.stop()
			}
			s.clearStatus(log, in.Key)
			s.release(log, in.ID)
			return err // shutting down: the input stays pending and resumes after restart
		}
		log.Error("answer failed", "error", err)
		reply = ErrorReply(err)
	}
	prog.finish(ctx, doneNote(out.tools))
	if len(out.outOfScope) > 0 {
		reply = outOfScopeReply(out.outOfScope)
		log.Info("items out of scope", "count", len(out.outOfScope))
	}
	if stream != nil {
		answer := out.answer
		if err != nil || len(out.outOfScope) > 0 {
			answer = "" // the reply is not the streamed answer
		}
		ts, handled, perr := stream.end(ctx, reply, answer, out.truncated)
		if handled {
			if perr != nil {
				log.Error("reply not fully posted; saving it in the checkpoint", "error", perr)
			}
			s.clearStatus(log, in.Key)
			return s.record(ctx, in, cp, append(earlier, user), reply, ts, usage, meta, func(st *State) {
				st.Entities = rememberEntities(st.Entities, out.entities, out.outOfScope)
			})
		}
	}
	return s.reply(ctx, log, in, cp, append(earlier, user), reply, usage, meta, func(st *State) {
		st.Entities = rememberEntities(st.Entities, out.entities, out.outOfScope)
	})
}

// workflowTurn runs a workflow turn with the thread's status shown meanwhile. A turn
// cancelled by shutdown releases its input for the next start.
func (s *Service) workflowTurn(ctx context.Context, log *slog.Logger, in Input, cp *Checkpoint, earlier []Message) (bool, error) {
	s.setStatus(ctx, log, in.Key, StatusThinking)
	handled, err := s.runWorkflow(ctx, log, in, cp, earlier)
	s.clearStatus(log, in.Key)
	if err != nil && s.ctx.Err() != nil {
		s.release(log, in.ID)
	}
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

// reply posts text to the thread and saves the turn: the new messages (earlier thread
// context, the user's message, the reply) and the updated state, marking the input done.
// A reply that could not be posted is still saved, so nothing is lost.
func (s *Service) reply(ctx context.Context, log *slog.Logger, in Input, cp *Checkpoint, msgs []Message, text string, usage Usage, meta json.RawMessage, update func(*State)) error {
	ts, err := s.cfg.Messenger.PostReply(ctx, in.Key, text, Tag{})
	if err != nil {
		log.Error("reply not posted; saving it in the checkpoint", "error", err)
	}
	s.clearStatus(log, in.Key)
	return s.record(ctx, in, cp, msgs, text, ts, usage, meta, update)
}

// record saves a turn whose reply text is in the thread already, its last message at
// ts (see reply).
func (s *Service) record(ctx context.Context, in Input, cp *Checkpoint, msgs []Message, text, ts string, usage Usage, meta json.RawMessage, update func(*State)) error {
	msgs = append(msgs, Message{
		Role: RoleAssistant, Text: text, SlackTS: ts, Meta: meta,
		PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens,
	})
	return s.save(ctx, in, cp.Conversation, msgs, usage, update)
}

// save writes the turn with an optimistic version check, applying update (when set)
// to the state. On ErrConflict (another replica wrote in between) it reloads the
// control row and appends after the newer messages, up to saveAttempts times.
func (s *Service) save(ctx context.Context, in Input, conv Conversation, msgs []Message, usage Usage, update func(*State)) error {
	for i := 0; ; i++ {
		st := conv.State
		if update != nil {
			update(&st)
		}
		st.Turns++
		st.PromptTokens += usage.PromptTokens
		st.CompletionTokens += usage.CompletionTokens
		_, err := s.cfg.Store.Save(ctx, Turn{Key: in.Key, Version: conv.Version, State: st, Append: msgs, InputID: in.ID})
		if !errors.Is(err, ErrConflict) || i+1 == saveAttempts {
			if err != nil {
				return fmt.Errorf("save turn: %w", err)
			}
			return nil
		}
		cp, lerr := s.cfg.Store.Load(ctx, in.Key, 0)
		if lerr != nil {
			return fmt.Errorf("save turn: reload after conflict: %w", lerr)
		}
		conv = cp.Conversation
	}
}

// finish ends an input without a turn and returns cause (nil for a silent drop).
func (s *Service) finish(ctx context.Context, in Input, status InputStatus, cause error) error {
	if err := s.cfg.Store.Finish(ctx, Lease{}, in.ID, status); err != nil {
		return errors.Join(cause, fmt.Errorf("finish input: %w", err))
	}
	return cause
}

// release ends this worker's claim on an input left pending, so that the next start
// (or another replica's sweep) resumes it at once.
func (s *Service) release(log *slog.Logger, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.cfg.Store.ReleaseClaim(ctx, id); err != nil {
		log.Warn("claim not released; the input resumes when the claim expires", "error", err)
	}
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

	// mu guards the fields below and serializes the calls to Slack.
	mu sync.Mutex
	ts string    // the progress message, once posted
	at time.Time // when it was last posted or updated
}

// report is the executor's Progress callback.
func (p *progressCard) report(status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
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
		ts, err := p.s.cfg.Messenger.PostCard(ctx, p.key, card, Tag{})
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
	if p.ts == "" {
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
