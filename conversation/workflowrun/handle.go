package workflowrun

import (
	"context"
	"errors"
	"slices"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Turn runs a workflow turn for r's input and saves it. It returns handled
// false for a person's message that is not for the workflow (the assistant answers
// it). The step runs on ctx; rendering and the save are final writes, on a context
// that neither a stop nor the turn's timeout cancelled. err is not nil when the input
// stays pending (see Service.turn).
func (s *Handler) Turn(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, earlier []conversation.Message) (handled bool, err error) {
	t, err := s.newTurn(r, cp, earlier)
	if err != nil {
		r.Log.Error("workflow turn dropped", "error", err)
		return true, r.Drop(ctx, conversation.InputFailed)
	}
	before := t.mark()
	user, handled, err := decoder{t}.decode(ctx)
	if !handled {
		return false, nil
	}
	fctx, cancel := r.Final(ctx)
	defer cancel()
	if err := s.settle(ctx, fctx, t, err, before); err != nil {
		return true, err
	}
	author{t}.dropStaleAsk() // a restart, an edit or the run's end voids a write's confirmation
	if err := (poster{t}).render(fctx); err != nil {
		return true, err
	}
	msgs := earlier
	if user.Text != "" {
		msgs = append(msgs, user)
	}
	s.observeWorkflow(cp.Conversation.State.Workflow, t.state.Workflow)
	return true, r.Finish(fctx, t.conv, turns.Ending{Msgs: append(msgs, t.appended...), Reply: t.reply, Usage: t.usage,
		Update: func(st *conversation.State) { *st = t.state }, Enqueue: t.enqueue})
}

// newTurn returns the workflow turn of r on checkpoint cp, earlier the thread's
// messages from before the bot joined: its run's state copied (a step changes the
// copy) and bound to its definition. Errors: the run's workflow is no longer
// configured.
func (s *Handler) newTurn(r *turns.Run, cp *conversation.Checkpoint, earlier []conversation.Message) (*wfTurn, error) {
	state := cp.Conversation.State
	state.Workflow = state.Workflow.Clone()
	t := &wfTurn{s: s, r: r, log: r.Log, key: r.In.Key, conv: cp.Conversation, hist: s.clipAll(history.Dialogue(append(slices.Clone(cp.Messages), earlier...))), state: state, lang: "en"}
	if err := t.bind(); err != nil {
		return nil, err
	}
	t.shown = map[string]workflow.ArtifactState{}
	if ws := t.ws(); ws != nil {
		for id, st := range ws.Artifacts {
			t.shown[id] = *st
		}
	}
	// A Retry button is for the step that failed last, until a person's next turn
	// (a pipeline's parts run in between).
	t.retry = t.state.Retry
	if r.In.Kind != conversation.KindPipeline {
		t.state.Retry = nil
	}
	return t, nil
}

// settle decides what a step that ended with err leaves (ctx is the turn's, fctx
// the final writes'): a refusal is told, a person's usage error or a refused click
// changes nothing since before, any other failure is rolled back and offers Retry
// when the step can run again as it was. It returns an error when the input stays
// pending: the lease was lost, or the service shuts down.
func (s *Handler) settle(ctx, fctx context.Context, t *wfTurn, err error, before mark) error {
	var refused *workflow.Refusal
	if errors.As(err, &refused) {
		err = t.refusal(fctx, refused)
	}
	if err == nil {
		return nil
	}
	var u errUsage
	switch {
	case errors.Is(err, conversation.ErrLeaseLost) || errors.Is(context.Cause(ctx), conversation.ErrLeaseLost):
		return conversation.ErrLeaseLost
	case t.r.ShuttingDown():
		return err // shutting down: the input stays pending
	case t.r.In.Kind == conversation.KindPipeline:
		// The pipeline's own checkpoints are kept; only its failure is told.
		t.log.Error("pipeline turn failed", "error", err)
		t.reply = s.failureMessage(t.lang, err, "")
	case errors.As(err, new(errTold)):
		t.rollback(before)
		t.state.Retry = t.retry // a refused click changes nothing, the Retry offered included
	case errors.As(err, &u):
		t.rollback(before)
		t.reply = u.msg
	default:
		t.log.Error("workflow step failed; nothing of it is kept", "error", err)
		t.rollback(before)
		t.reply = s.failureMessage(t.lang, err, "")
		if failed := (decoder{t}).failedInput(); failed != nil {
			// The step can run again as it was: the failure offers Retry.
			t.state.Retry = failed
			t.reply = ""
			return (poster{t}).postCard(fctx, t.cards().Failed("⚠️ "+s.failureMessage(t.lang, err, "retry.step"), failed.ID), nil)
		}
	}
	return nil
}

// failedInput returns the input whose step failed, to be run again by Retry: the one
// a Retry click ran again, or the turn's click, command or message (a typed command,
// decision or choice); nil for what cannot run again as it was (a shortcut). The
// step a Retry click ran again is offered under the click's id, so the older
// failure's button is out of date.
func (t decoder) failedInput() *conversation.Input {
	if t.rerun != nil {
		again := *t.rerun
		again.ID = t.r.In.ID
		return &again
	}
	in := t.r.In
	if in.Kind == conversation.KindUserMessage && in.Message != nil {
		// Kept as a pseudo-click (actionTyped) that holds the message: a Retry of
		// a failed assistant answer is the message itself (conversation/assistant/retry.go).
		in.Kind = conversation.KindAction
		in.Action = &conversation.ActionInput{Action: conversation.Action{Name: actionTyped}, UserID: in.Message.UserID}
		return &in
	}
	if (in.Kind == conversation.KindAction && in.Action != nil) || (in.Kind == conversation.KindCommand && in.Command != nil && in.Command.Source != conversation.SourceShortcut) {
		return &in
	}
	return nil
}
