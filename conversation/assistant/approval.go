package assistant

import (
	"context"
	"errors"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
)

// Tool confirmation (docs/tools.md, "Tool policy"; docs/architecture.md, "Assistant
// pipeline"): when the executor stops before a tool call that needs the confirmation
// of the person who asked (Findings.Pending), the turn posts a card with the call
// and Approve / Deny, saves the call in the checkpoint (State.ToolApproval) and ends.
// The click is an input like any other, run in the thread's order: it resumes the
// turn (Prompt.Resume), which runs or denies the call and answers. The thread's next
// message voids a confirmation nobody gave.

// IsToolDecision reports whether a click answers a tool confirmation card.
func IsToolDecision(name conversation.ActionName) bool {
	return name == conversation.ActionApproveTool || name == conversation.ActionDenyTool
}

// ToolDecision runs a click on a confirmation card: from the person who asked, on the
// current card, it updates the card with the decision and resumes the turn;
// otherwise it tells only the clicker why nothing happens.
func (s *Handler) ToolDecision(ctx context.Context, r *turns.Run) error {
	a := r.In.Action
	cp, err := r.Load(ctx)
	if errors.Is(err, conversation.ErrNotFound) {
		s.tellClicker(ctx, r, a.UserID, render.Tr("en", "approval.not_current"))
		return r.Drop(ctx, conversation.InputDropped)
	}
	if err != nil {
		return err
	}
	ap := cp.Conversation.State.ToolApproval
	lang := approvalLang(ap)
	switch {
	case ap == nil || ap.ID != a.Action.Arg:
		s.tellClicker(ctx, r, a.UserID, render.Tr(lang, "approval.not_current"))
		return s.unchanged(ctx, r, cp)
	case a.UserID != ap.UserID:
		s.tellClicker(ctx, r, a.UserID, render.Tr(lang, "approval.not_yours", ap.UserID))
		return s.unchanged(ctx, r, cp)
	case a.Action.Name == conversation.ActionApproveTool && !render.ShowArguments(lang, ap.Tool.Arguments).Fits:
		// The card had no Approve: what it could not show cannot be approved from it.
		s.tellClicker(ctx, r, a.UserID, render.Tr(lang, "approval.cannot_approve"))
		return s.unchanged(ctx, r, cp)
	}
	approved := a.Action.Name == conversation.ActionApproveTool
	interrupted := approved && ap.Begun
	if approved && !ap.Begun {
		// At most once: a re-run of this click after the call began must not run it
		// again, so the decision is saved before the call runs.
		if err := s.beginApprovedCall(ctx, r, cp, ap); err != nil {
			return err
		}
	}
	note := render.Tr(lang, "approval.approved", a.UserID)
	if !approved {
		note = render.Tr(lang, "approval.denied", a.UserID)
	}
	fctx, cancel := r.Final(ctx)
	s.closeApprovalCard(fctx, r, ap, note)
	cancel()
	s.cfg.compact(ctx, r.Log, cp)
	prompt := conversation.Prompt{
		Key:      r.In.Key,
		Summary:  cp.Conversation.State.Summary,
		History:  s.cfg.clipAll(history.Dialogue(cp.Messages)),
		UserID:   ap.UserID,
		Text:     ap.Request,
		Entities: cp.Conversation.State.Entities,
		Focus:    cp.Conversation.State.Focus,
		Resume:   &conversation.Resume{Pending: ap.Tool, Approved: approved, Interrupted: interrupted, By: a.UserID},
	}
	prompt.ContextChannelID = pausedChannel(r.In.Key, cp.Conversation.State, ap)
	prompt.Viewing = s.viewing(ctx, r, cp) // the agent view's now: only what the model is told
	if interrupted {
		r.Log.Warn("an approved tool call was begun by an earlier run that did not finish; it is not run again", "tool", ap.Tool.Name)
	}
	return s.respond(ctx, r, cp, prompt, nil)
}

// beginApprovedCall saves ap as begun, without finishing the click's input, so that
// a re-run of the click does not run the call again. cp's version follows the save.
func (s *Handler) beginApprovedCall(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, ap *conversation.ToolApproval) error {
	fctx, cancel := r.Final(ctx)
	defer cancel()
	st := cp.Conversation.State
	begun := *ap
	begun.Begun = true
	st.ToolApproval = &begun
	saved, err := r.Checkpoint(fctx, conversation.Turn{Key: r.In.Key, Version: cp.Conversation.Version, State: st})
	if err != nil {
		return fmt.Errorf("save the approved call before it runs: %w", err)
	}
	cp.Conversation.State = st
	cp.Conversation.Version = saved.Version
	return nil
}

// VoidToolApproval voids the confirmation a new message in the thread overtook: its
// card says the call was not run, and the state loaded in cp no longer has it (the
// turn's save writes that). It returns the note to save before the message, so the
// model knows later that the request was left unfinished; nil when nothing was
// pending.
func (s *Handler) VoidToolApproval(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint) []conversation.Message {
	ap := cp.Conversation.State.ToolApproval
	if ap == nil {
		return nil
	}
	r.Log.Info("a newer message voids the pending tool confirmation", "tool", ap.Tool.Name)
	fctx, cancel := r.Final(ctx)
	defer cancel()
	s.closeApprovalCard(fctx, r, ap, render.Tr(approvalLang(ap), "approval.voided"))
	cp.Conversation.State.ToolApproval = nil
	return []conversation.Message{{Role: conversation.RoleAssistant,
		Text: fmt.Sprintf("(I did not finish this: `%s` needed <@%s>'s confirmation, and a newer message came first, so it did not run.)", ap.Tool.Name, ap.UserID)}}
}

// closeApprovalCard replaces ap's card with its call and note, without buttons.
func (s *Handler) closeApprovalCard(ctx context.Context, r *turns.Run, ap *conversation.ToolApproval, note string) {
	if ap.CardTS == "" || r.Out.Lost() {
		return
	}
	card := render.ClosedApprovalCard(render.ApprovalCard(approvalLang(ap), r.In.Key, ap), note)
	if err := s.cfg.Messenger.UpdateCard(ctx, r.In.Key, ap.CardTS, card); err != nil {
		r.Log.Warn("confirmation card not updated", "ts", ap.CardTS, "error", err)
	}
}

// tellClicker shows text to userID only; failing to is logged.
func (s *Handler) tellClicker(ctx context.Context, r *turns.Run, userID, text string) {
	fctx, cancel := r.Final(ctx)
	defer cancel()
	if err := s.cfg.Messenger.PostEphemeral(fctx, r.In.Key, userID, text); err != nil {
		r.Log.Warn("ephemeral not posted", "error", err)
	}
}

// unchanged ends a click that changes nothing: the input is marked done with the
// conversation as it was.
func (s *Handler) unchanged(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint) error {
	fctx, cancel := r.Final(ctx)
	defer cancel()
	return r.Finish(fctx, cp.Conversation, turns.Ending{Rebase: true})
}

// approvalLang is the language of ap's card and of what its clicks answer: that of
// the request that asked for the call (English for none).
func approvalLang(ap *conversation.ToolApproval) string {
	if ap == nil {
		return "en"
	}
	return render.UILang(render.TextLocale(ap.Request))
}

// pausedChannel is the resumed turn's Prompt.ContextChannelID: the channel whose
// strategy and tool policy the paused turn ran under (ap.PolicyChannel), so that the
// approved call runs as it was asked even when the person views another channel at
// the click; "" when that was the thread's own. A checkpoint written before
// PolicyChannel existed gives the assistant view's channel in st, read before the
// click's view refreshes it.
func pausedChannel(key conversation.Key, st conversation.State, ap *conversation.ToolApproval) string {
	switch ap.PolicyChannel {
	case "":
		return contextChannel(st)
	case key.ChannelID:
		return ""
	}
	return ap.PolicyChannel
}
