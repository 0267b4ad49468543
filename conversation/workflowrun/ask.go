package workflowrun

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// A writer's tool call that needs a person's confirmation (docs/workflows.md, "Tools
// and untrusted content"; docs/tools.md, "Tool policy"). The write of an artifact
// people review can ask the person who asked for it (asker): it stops before the
// call (conversation.ConfirmationNeeded), the turn posts the confirmation card and
// saves the call with the writer's transcript in the checkpoint
// (State.WriteApproval; the artifact is Asking, so the scheduling rule does not write
// it again), and the workflow waits. The click is an input like any other: from that
// person, on the current card, it resumes the write (ArtifactRequest.Resume), which
// runs the call (once: the decision is saved first) or tells the model it was
// denied, and the text goes to review as usual; a call once begun is never run again,
// whatever the click. The card is for the write as it was asked: a restart or an edit
// of its artifact or of what that is written from drops it (dropStaleAsk), and its
// buttons then run nothing. An auto artifact's writer cannot ask: its calls are
// refused, and its card says so.

// askWrite records that the write of artifact id stopped before pending, a call that
// needs the confirmation of the turn's person: the card is posted with the turn
// (evAsk) and the write goes on from it (decide).
func (t author) askWrite(id, instructions, why string, sup supersede, pending conversation.PendingTool) {
	t.state.WriteApproval = &conversation.WriteApproval{
		ToolApproval: conversation.ToolApproval{
			ID:     conversation.ApprovalID(conversation.WriteApprovalPrefix, t.r.In.ID, pending),
			UserID: t.asker(), Request: instructions, Tool: pending,
		},
		Artifact: id, Instructions: instructions, Why: why, Superseded: sup.why, Label: sup.label,
		Inputs: map[string]int{},
	}
	t.ws().Artifacts[id].Asking = true
	for _, a := range append([]string{id}, t.def().Dependencies(id)...) {
		if st := t.ws().Artifacts[a]; st != nil {
			t.state.WriteApproval.Inputs[a] = st.Rev
		}
	}
	t.events = append(t.events, cardEvent{kind: evAsk, id: id})
	t.log.Info("a write's tool call waits for confirmation", "artifact", id, "tool", pending.Name, "reason", pending.Reason, "user", t.asker())
}

// asker is who may confirm a tool call of the turn's write, as for the assistant the
// person who asked: the person whose action the turn runs, or, in a pipeline's turn
// (no person's), the person who started the run. It is "" when that is an HTTP API
// token (conversation.APIActorPrefix), which no card can ask: the call is refused.
func (t author) asker() string {
	who := t.user
	if who == "" {
		who = t.ws().StartedBy
	}
	if strings.HasPrefix(who, conversation.APIActorPrefix) {
		return ""
	}
	return who
}

// dropAsk closes the card of the confirmation the run waits on, if any, with note,
// and forgets it: the write it belongs to is not resumed.
func (t author) dropAsk(note string) {
	wa := t.state.WriteApproval
	if wa == nil {
		return
	}
	if ws := t.ws(); ws != nil && ws.Artifacts[wa.Artifact] != nil {
		ws.Artifacts[wa.Artifact].Asking = false
	}
	t.state.WriteApproval = nil
	t.events = append(t.events, cardEvent{kind: evDecided, ask: wa, why: note})
}

// askCurrent reports whether the run's WriteApproval is still the one its card was
// made for: the run goes on, its artifact still waits for it, and neither that
// artifact nor anything it depends on changed since (WriteApproval.Inputs).
func (t author) askCurrent() bool {
	wa := t.state.WriteApproval
	ws := t.ws()
	if wa == nil || ws == nil || ws.Status != workflow.RunRunning {
		return false
	}
	if st := ws.Artifacts[wa.Artifact]; st == nil || !st.Asking {
		return false
	}
	for id, rev := range wa.Inputs {
		if st := ws.Artifacts[id]; st == nil || st.Rev != rev {
			return false
		}
	}
	return true
}

// dropStaleAsk drops the run's WriteApproval when it is no longer current
// (askCurrent): a restart or an edit of its artifact or of what that depends on, a
// change that sent the artifact back, or the run's end. Its card closes saying why;
// a later click on it runs nothing (decide). Every turn calls it before rendering.
func (t author) dropStaleAsk() {
	if t.state.WriteApproval == nil || t.askCurrent() {
		return
	}
	note := render.Tr(t.lang, "write_approval.outdated")
	if ws := t.ws(); ws != nil && ws.Status == workflow.RunCancelled {
		note = render.Tr(t.lang, "write_approval.cancelled")
	}
	t.log.Info("a write's confirmation is out of date; dropped", "artifact", t.state.WriteApproval.Artifact)
	t.dropAsk(note)
}

// dropAskFor drops the run's WriteApproval, if any, before a new write of artifact
// id, its card saying why: that text is written again; what it is written from
// changed (askCurrent); or another text is written first, and this one asks again
// when its write comes round.
func (t author) dropAskFor(id string) {
	wa := t.state.WriteApproval
	switch {
	case wa == nil:
	case wa.Artifact == id:
		t.dropAsk(render.Tr(t.lang, "write_approval.rewritten"))
	case !t.askCurrent():
		t.dropAsk(render.Tr(t.lang, "write_approval.outdated"))
	default:
		t.dropAsk(render.Tr(t.lang, "write_approval.later"))
	}
}

// decide runs a click on a write's confirmation card: from the person who asked, on
// the current card, it resumes the write with the decision; otherwise it tells only
// the clicker why nothing happens.
func (t author) decide(ctx context.Context, a conversation.ActionInput) error {
	wa := t.state.WriteApproval
	var st *workflow.ArtifactState
	if wa != nil && t.ws() != nil {
		st = t.ws().Artifacts[wa.Artifact]
	}
	approved := a.Action.Name == conversation.ActionApproveTool
	switch {
	case st == nil || wa.ID != a.Action.Arg || !t.askCurrent():
		t.ephemeral(ctx, render.Tr(t.lang, "approval.not_current"))
		return errTold{errors.New("the confirmation is not current")}
	case a.UserID != wa.UserID:
		t.ephemeral(ctx, render.Tr(t.lang, "approval.not_yours", wa.UserID))
		return errTold{errors.New("only the asker decides")}
	case approved && !render.ShowArguments(t.lang, wa.Tool.Arguments).Fits:
		// The card had no Approve: what it could not show cannot be approved from it.
		t.ephemeral(ctx, render.Tr(t.lang, "approval.cannot_approve"))
		return errTold{errors.New("the arguments do not fit the card")}
	}
	// An approved call once begun may have run, whatever the click now: it is not run
	// again, and the model and the card say it may have taken effect (a Deny cannot
	// undo it).
	interrupted := wa.Begun
	note := render.Tr(t.lang, "approval.approved", a.UserID)
	switch {
	case interrupted:
		t.log.Warn("an approved tool call of a write was begun by an earlier run that did not finish; it is not run again", "tool", wa.Tool.Name, "clicked", a.Action.Name)
		approved, note = true, render.Tr(t.lang, "write_approval.begun", a.UserID)
	case approved:
		if err := t.beginApproved(ctx, wa); err != nil {
			return err
		}
	default:
		note = render.Tr(t.lang, "write_approval.denied", a.UserID)
	}
	resume := &conversation.Resume{Pending: wa.Tool, Approved: approved, Interrupted: interrupted, By: a.UserID}
	if err := t.writeFrom(ctx, wa.Artifact, wa.Instructions, wa.Why, supersede{why: wa.Superseded, label: wa.Label}, resume); err != nil {
		return err
	}
	t.events = append(t.events, cardEvent{kind: evDecided, ask: wa, why: note})
	return nil
}

// beginApproved saves wa as begun before its call runs, without finishing the
// click's input, so that a re-run of the click does not run the call again. wa is
// marked in place, so that a step rolled back (mark) keeps it begun.
func (t author) beginApproved(ctx context.Context, wa *conversation.WriteApproval) error {
	fctx, cancel := t.r.Final(ctx)
	defer cancel()
	begun := *wa
	begun.Begun = true
	st := t.state
	st.WriteApproval = &begun
	saved, err := t.r.Checkpoint(fctx, conversation.Turn{Key: t.key, Version: t.conv.Version, State: st})
	if err != nil {
		return fmt.Errorf("save the approved call before it runs: %w", err)
	}
	wa.Begun = true
	t.conv.Version = saved.Version
	return nil
}

// renderAsk shows an evAsk event: the confirmation card of the run's
// WriteApproval, with the file of its arguments when the card cannot show them whole.
func (t poster) renderAsk(ctx context.Context) error {
	wa := t.state.WriteApproval
	if wa == nil || t.def() == nil {
		return nil
	}
	a, _ := t.def().Artifact(wa.Artifact)
	if err := t.postCard(ctx, render.WriteApprovalCard(t.lang, t.key, wa, a.Title), &wa.CardTS); err != nil {
		return err
	}
	if wa.CardTS != "" && !render.ShowArguments(t.lang, wa.Tool.Arguments).Complete {
		// What the card cuts is one click away (docs/tools.md, "Tool policy").
		if err := t.r.Out.Upload(ctx, render.ArgumentsFile(t.lang, wa.Tool)); err != nil {
			if errors.Is(err, conversation.ErrLeaseLost) {
				return err
			}
			t.log.Warn("the arguments' file of a confirmation card not uploaded", "tool", wa.Tool.Name, "error", err)
		}
	}
	return nil
}

// renderDecided shows an evDecided event: the card of e.ask without its buttons,
// saying e.why (who decided, or why nothing ran).
func (t poster) renderDecided(ctx context.Context, e cardEvent) {
	if e.ask == nil || e.ask.CardTS == "" || t.def() == nil {
		return
	}
	a, _ := t.def().Artifact(e.ask.Artifact)
	t.update(ctx, e.ask.CardTS, render.ClosedApprovalCard(render.WriteApprovalCard(t.lang, t.key, e.ask, a.Title), e.why))
}
