package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/threadwright/threadwright/conversation"
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
func (s *Runtime) final(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.FinalTimeout)
}

// Handle routes one input to its handler (the router): load the checkpoint, run the assistant pipeline or a workflow
// step, post the reply, save the checkpoint (docs/architecture.md, "Data flow of one
// Slack event", step 4). Every outcome the user should know about reaches the thread.
// It returns nil once the input is finished (saved, or finished as dropped or failed),
// and an error when the input stays pending to be run again: the store did not
// answer, the service is shutting down, or the lease was lost (ErrLeaseLost).
func (s *Service) Handle(ctx context.Context, r *Run) error {
	in := r.In
	if refused, err := s.overBudget(ctx, r); refused {
		return err
	}
	switch {
	case in.Kind == conversation.KindCommand && in.Command != nil && in.Key.ThreadTS == "":
		return s.workflows.channelCommand(ctx, r)
	case in.Kind == conversation.KindAssistantThread && in.Thread != nil:
		return s.assistant.assistantThreadTurn(ctx, r)
	case in.Kind == conversation.KindAction && in.Action != nil && isToolDecision(in.Action.Action.Name):
		return s.assistant.toolDecision(ctx, r)
	case isRetry(in) && in.Key.ThreadTS != "":
		if handled, err := s.assistant.retryTurn(ctx, r); handled {
			return err
		}
		fallthrough // a workflow step's Retry
	case (in.Kind == conversation.KindAction && in.Action != nil) || (in.Kind == conversation.KindCommand && in.Command != nil) || in.Kind == conversation.KindPipeline:
		cp, err := s.load(ctx, r)
		if errors.Is(err, conversation.ErrNotFound) {
			cp, err = &conversation.Checkpoint{Conversation: conversation.Conversation{Key: in.Key, State: conversation.State{Mode: conversation.ModeAssistant}}}, nil
		}
		if err != nil {
			return err
		}
		if in.Kind == conversation.KindCommand && foreignCommand(in.Key, in.Command, cp.Conversation.State.Workflow) {
			s.workflows.refuseForeign(ctx, r) // before anything shows in the thread
			return s.finish(ctx, r, conversation.InputDone)
		}
		s.compact(ctx, r.Log, cp)
		handled, err := s.workflowTurn(ctx, r, cp, nil)
		if err == nil && !handled && in.Kind == conversation.KindAction {
			return s.assistant.answerQuestion(ctx, r, cp) // "Just a question" (workflow_modal.go)
		}
		return err
	case in.Kind != conversation.KindUserMessage || in.Message == nil:
		r.Log.Error("input dropped: its kind is not handled", "kind", in.Kind)
		return s.finish(ctx, r, conversation.InputDropped)
	}
	msg := in.Message
	cp, earlier, err := s.loadFor(ctx, r)
	if err != nil || cp == nil {
		return err
	}
	// A new message overtakes a confirmation nobody gave: its note is saved first.
	earlier = append(s.assistant.voidToolApproval(ctx, r, cp), earlier...)
	s.assistant.directMessage(ctx, r, cp) // README, "Assistant view"
	if cp.Conversation.State.Mode == conversation.ModeWorkflow || ((msg.Mentioned || msg.Direct) && isTextCommand(msg.Text, s.cfg.Workflows)) {
		if handled, err := s.workflowTurn(ctx, r, cp, earlier); handled {
			return err
		}
	}
	return s.assistant.assistantTurn(ctx, r, cp, earlier)
}

// loadFor loads the checkpoint of the thread of r's message, or starts its
// conversation when the message mentions the bot or is a DM, with earlier the thread's
// messages from before the bot joined (Messenger.ThreadHistory, as RoleContext). A
// message in a thread the bot is not part of is finished as dropped: cp is nil.
func (s *Service) loadFor(ctx context.Context, r *Run) (cp *conversation.Checkpoint, earlier []conversation.Message, err error) {
	in, msg := r.In, r.In.Message
	cp, err = s.load(ctx, r)
	switch {
	case errors.Is(err, conversation.ErrNotFound):
		if !msg.Mentioned && !msg.Direct {
			return nil, nil, s.finish(ctx, r, conversation.InputDropped) // a thread the bot is not part of
		}
		cp = &conversation.Checkpoint{Conversation: conversation.Conversation{Key: in.Key, State: conversation.State{Mode: conversation.ModeAssistant, StartedBy: msg.UserID}}}
		if msg.ThreadTS != "" && msg.ThreadTS != msg.TS {
			earlier, err = s.cfg.Messenger.ThreadHistory(ctx, in.Key, msg.TS, s.cfg.ThreadContextMessages)
			if err != nil {
				r.Log.Warn("earlier thread messages unavailable; answering without them", "error", err)
				earlier = nil
			}
			for i := range earlier {
				earlier[i].Role = conversation.RoleContext
			}
		}
		return cp, earlier, nil
	case err != nil:
		return nil, nil, err
	}
	s.compact(ctx, r.Log, cp)
	return cp, nil, nil
}

// load loads r's checkpoint, retrying while the store is unavailable. Errors:
// ErrNotFound; the store's.
func (s *Runtime) load(ctx context.Context, r *Run) (*conversation.Checkpoint, error) {
	var cp *conversation.Checkpoint
	err := s.retryStore(ctx, "load the checkpoint", func(ctx context.Context) error {
		var err error
		cp, err = s.cfg.Store.Load(ctx, r.In.Key, s.cfg.HistoryMessages)
		return err
	})
	if err == nil {
		r.saved = snapshot(cp.Conversation.State)
	}
	if err != nil && !errors.Is(err, conversation.ErrNotFound) {
		return nil, fmt.Errorf("load checkpoint: %w", err)
	}
	return cp, err
}

// runTurn runs r's turn: an input tried more than MaxAttempts times is given up
// (giveUp), any other goes to the handler. A pipeline past MaxAttempts halts itself
// (runPipeline), saving its state; only when even that keeps failing is it given up
// here.
func (s *Runtime) runTurn(ctx context.Context, r *Run) error {
	in := r.In
	if limit := s.cfg.MaxAttempts; in.Attempts > limit && in.Kind != conversation.KindPipeline || in.Attempts > limit+2 {
		return s.giveUp(ctx, r)
	}
	return s.handler.Handle(ctx, r)
}

// giveUp ends an input that was tried MaxAttempts times (its turns kept failing, or
// its workers kept dying): the person is told, and the input is finished as failed.
func (s *Runtime) giveUp(ctx context.Context, r *Run) error {
	fctx, cancel := s.final(ctx)
	defer cancel()
	r.Log.Error("input given up after repeated attempts", "attempts", r.In.Attempts-1)
	text := fmt.Sprintf("Sorry, I could not finish this after %d attempts, so I stopped trying. Please try again.", s.cfg.MaxAttempts)
	if r.In.Message != nil {
		text = fmt.Sprintf("Sorry, I gave up on this message after %d attempts. Please send it again.", s.cfg.MaxAttempts)
	}
	user := ""
	switch {
	case r.In.Action != nil:
		user = r.In.Action.UserID
	case r.In.Command != nil:
		user = r.In.Command.UserID
	}
	var err error
	if r.In.Key.ThreadTS == "" || r.In.Kind == conversation.KindAction {
		if user != "" {
			err = s.cfg.Messenger.PostEphemeral(fctx, r.In.Key, user, text)
		}
	} else {
		_, err = r.Out.PostReply(fctx, text, false, false)
	}
	if errors.Is(err, conversation.ErrLeaseLost) {
		return err
	}
	if err != nil {
		r.Log.Warn("notice of a given-up input not posted", "error", err)
	}
	return s.finish(fctx, r, conversation.InputFailed)
}

// workflowTurn runs a workflow turn with the thread's status shown meanwhile.
func (s *Service) workflowTurn(ctx context.Context, r *Run, cp *conversation.Checkpoint, earlier []conversation.Message) (bool, error) {
	s.setStatus(ctx, r.Log, r.In.Key, StatusThinking)
	handled, err := s.workflows.runWorkflow(ctx, r, cp, earlier)
	if !handled || err != nil {
		s.clearStatus(r.Log, r.In.Key) // finishTurn did not
	}
	return handled, err
}

// ending is what a turn leaves in the thread and the checkpoint (finishTurn).
type Ending struct {
	// msgs are the turn's new messages before its reply: the thread's messages from
	// before the bot joined, the person's message, artifact revisions.
	Msgs []conversation.Message
	// reply is the turn's last message ("" for none); posted says it is in the thread
	// already, its last message at ts (a streamed answer, or an earlier run's).
	Reply  string
	Posted bool
	TS     string
	// answer marks reply as the assistant's answer: tagged as the turn's answer (a
	// re-run finds it, docs/architecture.md "Exactly one answer") and saved with meta
	// and the turn's usage.
	Answer bool
	// notice marks an answer that is a notice (Tag.Notice): an error reply, a
	// stopped turn's note.
	Notice bool
	Meta   json.RawMessage
	Usage  conversation.Usage
	// update changes the state saved. rebase, for a turn that only sets some fields
	// (the assistant's), applies it to the newer version after ErrConflict; a
	// workflow turn's state was computed from the version it loaded and is not.
	Update func(*conversation.State)
	Rebase bool
	// enqueue are the inputs that follow the turn (a pipeline's next part).
	Enqueue []conversation.Input
}

// finishTurn ends every turn that saves (the assistant's, a workflow step, a
// pipeline part; docs/architecture.md "Data flow of one Slack event", step 4): it
// posts the reply unless it is in the thread already, clears the thread's status,
// deletes what an earlier run of the input left half-posted, and saves the new
// messages and state with an optimistic version check, marking the input done and
// enqueuing what follows. ctx is the final writes' context (Service.final); the
// scheduler releases the lease once the turn returns. A reply that could not be
// posted is still saved, so nothing is lost. Errors: ErrLeaseLost; the store's, when
// it stayed unavailable until ctx ended or the conflict did not resolve.
func (s *Runtime) finishTurn(ctx context.Context, r *Run, conv conversation.Conversation, e Ending) error {
	r.end.notice = e.Notice
	if e.Reply != "" && !e.Posted {
		ts, err := r.Out.Post(ctx, e.Reply, e.Answer, e.Answer, e.Notice)
		if errors.Is(err, conversation.ErrLeaseLost) {
			return err
		}
		if err != nil {
			r.Log.Error("reply not posted; saving it in the checkpoint", "error", err)
		}
		e.TS = ts
	}
	msgs := e.Msgs
	if e.Reply != "" {
		m := conversation.Message{Role: conversation.RoleAssistant, Text: e.Reply, SlackTS: e.TS, Meta: e.Meta}
		if e.Answer {
			m.PromptTokens, m.CompletionTokens = e.Usage.PromptTokens, e.Usage.CompletionTokens
		}
		msgs = append(msgs, m)
	}
	s.clearStatus(r.Log, r.In.Key)
	r.Out.cleanup(ctx, r.Log)
	attempts := 1
	if e.Rebase {
		attempts = saveAttempts
	}
	byModel, metered := r.meter.Take()
	for i := 0; ; i++ {
		st := conv.State
		st.Retry = nil // a Retry is for the failure of the thread's last turn (update sets it)
		if e.Update != nil {
			e.Update(&st)
		}
		st.Turns++
		st.PromptTokens += e.Usage.PromptTokens
		st.CompletionTokens += e.Usage.CompletionTokens
		_, err := s.storeSave(ctx, r, conversation.Turn{Key: r.In.Key, Version: conv.Version, State: st, Append: msgs, InputID: r.In.ID, Enqueue: e.Enqueue,
			Usage: s.usageRecords(r, st, e.Usage, byModel, metered, 1)})
		if !errors.Is(err, conversation.ErrConflict) || i+1 >= attempts {
			if err != nil {
				return fmt.Errorf("save turn: %w", err)
			}
			return nil
		}
		var cp *conversation.Checkpoint
		if lerr := s.retryStore(ctx, "reload after a conflict", func(ctx context.Context) error {
			var err error
			cp, err = s.cfg.Store.Load(ctx, r.In.Key, 0)
			return err
		}); lerr != nil {
			return fmt.Errorf("save turn: reload after conflict: %w", lerr)
		}
		r.saved = snapshot(cp.Conversation.State)
		conv = cp.Conversation
	}
}

// storeSave writes turn under r's lease, retrying while the store is unavailable.
func (s *Runtime) storeSave(ctx context.Context, r *Run, turn conversation.Turn) (conversation.Saved, error) {
	turn.Lease = r.lease
	turn.Events = append(turn.Events, s.turnEvents(r, turn)...)
	var saved conversation.Saved
	err := s.retryStore(ctx, "save the turn", func(ctx context.Context) error {
		var err error
		saved, err = s.cfg.Store.Save(ctx, turn)
		return err
	})
	if err == nil {
		r.saved = snapshot(turn.State)
	}
	return saved, err
}

// finish ends r's input without a save, as status (dropped or failed), under its
// lease, retrying while the store is unavailable.
func (s *Runtime) finish(ctx context.Context, r *Run, status conversation.InputStatus) error {
	r.end.status = status
	fctx, cancel := s.final(ctx)
	defer cancel()
	r.Out.cleanup(fctx, r.Log)
	err := s.retryStore(fctx, "finish the input", func(ctx context.Context) error {
		return s.cfg.Store.Finish(ctx, r.lease, r.In.ID, status)
	})
	if err != nil {
		return fmt.Errorf("finish input as %s: %w", status, err)
	}
	return nil
}

// setStatus shows status in the thread; failing to is logged, never fatal.
func (s *Runtime) setStatus(ctx context.Context, log *slog.Logger, key conversation.Key, status string) {
	if err := s.cfg.Messenger.SetStatus(ctx, key, status); err != nil {
		log.Debug("status not shown", "status", status, "error", err)
	}
}

// clearStatus clears the thread's status even when the turn's context has ended.
func (s *Runtime) clearStatus(log *slog.Logger, key conversation.Key) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.setStatus(ctx, log, key, "")
}
