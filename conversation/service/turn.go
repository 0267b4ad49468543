package service

import (
	"context"
	"errors"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/assistant"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/conversation/workflowrun"
)

// Handle routes one input to its handler (the router): load the checkpoint, run the assistant pipeline or a workflow
// step, post the reply, save the checkpoint (docs/architecture.md, "Data flow of one
// Slack event", step 4). Every outcome the user should know about reaches the thread.
// It returns nil once the input is finished (saved, or finished as dropped or failed),
// and an error when the input stays pending to be run again: the store did not
// answer, the service is shutting down, or the lease was lost (ErrLeaseLost).
func (s *Service) Handle(ctx context.Context, r *turns.Run) error {
	in := r.In
	if refused, err := s.overBudget(ctx, r); refused {
		return err
	}
	switch {
	case in.Kind == conversation.KindCommand && in.Command != nil && in.Key.ThreadTS == "":
		return s.workflows.ChannelCommand(ctx, r)
	case in.Kind == conversation.KindAssistantThread && in.Thread != nil:
		return s.assistant.ThreadEvent(ctx, r)
	case in.Kind == conversation.KindAction && in.Action != nil && assistant.IsToolDecision(in.Action.Action.Name) &&
		!conversation.IsWriteApproval(in.Action.Action.Arg): // a workflow write's goes to the workflow
		return s.assistant.ToolDecision(ctx, r)
	case sessionStop(in):
		return s.stopSession(ctx, r)
	case in.IsRetry() && in.Key.ThreadTS != "":
		if handled, err := s.assistant.Retry(ctx, r); handled {
			return err
		}
		fallthrough // a workflow step's Retry
	case (in.Kind == conversation.KindAction && in.Action != nil) || (in.Kind == conversation.KindCommand && in.Command != nil) || in.Kind == conversation.KindPipeline:
		cp, err := r.Load(ctx)
		if errors.Is(err, conversation.ErrNotFound) {
			cp, err = &conversation.Checkpoint{Conversation: conversation.Conversation{Key: in.Key, State: conversation.State{Mode: conversation.ModeAssistant}}}, nil
		}
		if err != nil {
			return err
		}
		if in.Kind == conversation.KindCommand && workflowrun.ForeignCommand(in.Key, in.Command, cp.Conversation.State.Workflow) {
			s.workflows.RefuseForeign(ctx, r) // before anything shows in the thread
			return r.Drop(ctx, conversation.InputDone)
		}
		s.compact(ctx, r.Log, cp)
		handled, err := s.workflowTurn(ctx, r, cp, nil)
		if err == nil && !handled && in.Kind == conversation.KindAction {
			return s.assistant.AnswerQuestion(ctx, r, cp) // "Just a question" (conversation/assistant/answer.go)
		}
		return err
	case (in.Kind == conversation.KindEdit || in.Kind == conversation.KindDelete) && in.Message != nil:
		return s.assistant.MessageChanged(ctx, r) // docs/architecture.md, "Edits and deletions"
	case in.Kind != conversation.KindUserMessage || in.Message == nil:
		r.Log.Error("input dropped: its kind is not handled", "kind", in.Kind)
		return r.Drop(ctx, conversation.InputDropped)
	}
	msg := in.Message
	cp, earlier, err := s.loadFor(ctx, r)
	if err != nil || cp == nil {
		return err
	}
	// A new message overtakes a confirmation nobody gave: its note is saved first.
	earlier = append(s.assistant.VoidToolApproval(ctx, r, cp), earlier...)
	s.assistant.DirectMessage(ctx, r, cp) // docs/tools.md, "Assistant view"
	if cp.Conversation.State.Mode == conversation.ModeWorkflow || ((msg.Mentioned || msg.Direct) && workflowrun.IsTextCommand(msg.Text, s.cfg.Workflows)) {
		// A workflow turn takes one message: the rest of a burst (docs/architecture.md,
		// "Double texting") stays pending and runs next, each as an input of its own.
		burst := r.In.Burst
		r.In.Burst = nil
		if handled, err := s.workflowTurn(ctx, r, cp, earlier); handled {
			return err
		}
		r.In.Burst = burst
	}
	return s.assistant.AnswerMessage(ctx, r, cp, earlier)
}

// loadFor loads the checkpoint of the thread of r's message, or starts its
// conversation when the message mentions the bot or is a DM, with earlier the thread's
// messages from before the bot joined (Messenger.ThreadHistory, as RoleContext). A
// message in a thread the bot is not part of is finished as dropped: cp is nil.
func (s *Service) loadFor(ctx context.Context, r *turns.Run) (cp *conversation.Checkpoint, earlier []conversation.Message, err error) {
	in, msg := r.In, r.In.Message
	cp, err = r.Load(ctx)
	switch {
	case errors.Is(err, conversation.ErrNotFound):
		if !msg.Mentioned && !msg.Direct {
			return nil, nil, r.Drop(ctx, conversation.InputDropped) // a thread the bot is not part of
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

// workflowTurn runs a workflow turn with the thread shown working meanwhile
// (Run.ShowWorking).
func (s *Service) workflowTurn(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, earlier []conversation.Message) (bool, error) {
	shown := r.ShowWorking(ctx)
	handled, err := s.workflows.Turn(ctx, r, cp, earlier)
	if shown && (!handled || err != nil) {
		r.ClearStatus() // finishTurn did not
	}
	return handled, err
}

// sessionStop reports whether in is an agent session's native Stop
// (agent_session_stopped) that found nothing running when it came.
func sessionStop(in conversation.Input) bool {
	return in.Kind == conversation.KindAction && in.Action != nil && in.Action.Action.Name == conversation.ActionStop &&
		in.Action.Action.Arg == conversation.SessionStop
}

// stopSession runs a session's native Stop that found nothing running when it came:
// it stops the thread's pipeline, between two of its turns, as its Stop button does;
// with none under way it does nothing (docs/tools.md, "Agent view").
func (s *Service) stopSession(ctx context.Context, r *turns.Run) error {
	cp, err := r.Load(ctx)
	if errors.Is(err, conversation.ErrNotFound) {
		return r.Drop(ctx, conversation.InputDone)
	}
	if err != nil {
		return err
	}
	if wf := cp.Conversation.State.Workflow; wf == nil || wf.Pipeline == nil || wf.Pipeline.Stopped() {
		return r.Drop(ctx, conversation.InputDone)
	}
	_, err = s.workflowTurn(ctx, r, cp, nil)
	return err
}
