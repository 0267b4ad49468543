package assistant

import (
	"context"
	"errors"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
)

// approvalID names the confirmation of call pending asked by input inputID
// (conversation.ApprovalID).
func approvalID(inputID string, pending *conversation.PendingTool) string {
	return conversation.ApprovalID("", inputID, *pending)
}

// askToolApproval ends a turn whose executor stopped before a call that needs
// confirmation: it posts the card, closes the progress message, and saves the
// turn's messages (msgs) with the confirmation in the state. ctx is the final writes'
// context.
func (s *Handler) askToolApproval(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, p conversation.Prompt, pending *conversation.PendingTool, msgs []conversation.Message, usage conversation.Usage, prog *progressCard) error {
	ap := &conversation.ToolApproval{ID: approvalID(r.In.ID, pending), UserID: p.UserID, Request: p.Text, Tool: *pending, PolicyChannel: p.PolicyChannel()}
	ts, err := r.Out.PostCard(ctx, render.ApprovalCard(approvalLang(ap), r.In.Key, ap))
	if errors.Is(err, conversation.ErrLeaseLost) {
		return err
	}
	reply := ""
	update := func(st *conversation.State) { st.ToolApproval = ap }
	if err != nil {
		// Nobody could approve it: say so, and keep nothing pending.
		r.Log.Error("confirmation card not posted; the call is dropped", "tool", pending.Name, "error", err)
		reply = render.Tr(approvalLang(ap), "approval.not_shown", pending.Name)
		update = func(st *conversation.State) { st.ToolApproval = nil }
	}
	ap.CardTS = ts
	if err == nil && !render.ShowArguments(approvalLang(ap), pending.Arguments).Complete {
		// What the card cuts is one click away (docs/tools.md, "Tool policy").
		if uerr := r.Out.Upload(ctx, render.ArgumentsFile(approvalLang(ap), *pending)); uerr != nil {
			if errors.Is(uerr, conversation.ErrLeaseLost) {
				return uerr
			}
			r.Log.Warn("the arguments' file of a confirmation card not uploaded", "tool", pending.Name, "error", uerr)
		}
	}
	r.Log.Info("tool call waits for confirmation", "tool", pending.Name, "reason", pending.Reason, "user", p.UserID)
	prog.finish(ctx, render.Tr(approvalLang(ap), "progress.confirm", p.UserID, pending.Name))
	return r.Finish(ctx, cp.Conversation, turns.Ending{Msgs: msgs, Reply: reply, Answer: reply != "", Usage: usage, Update: update, Rebase: true})
}
