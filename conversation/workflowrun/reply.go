package workflowrun

import (
	"context"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
)

// Typed decisions (docs/workflows.md, "Typed decisions"): a reply typed in the thread of an
// artifact under review is read as an approval, a change request or a question. The
// phrase list (workflow.ClassifyReply) decides the common replies without a model
// call; the small model (WorkflowAgent.ClassifyReview) the rest. An approval is the
// Approve button's, under the same permission rule; a change request is the editor's
// rewrite; a question is left to the assistant, which answers it in the thread and
// leaves the artifact as it is (so does the "Just a question" button). A reply that reads more than one way is asked about
// with buttons that carry it.

// maxCarriedReply is the most bytes of a reply the buttons of the "what did you mean"
// card carry (a button's value holds MaxActionValue with the rest of the Action).
const maxCarriedReply = 1200

// decide reads the reply text to artifact id, under review, and acts on it. handled is
// false for a question: the assistant answers it.
func (t decoder) decide(ctx context.Context, id, text string) (handled bool, err error) {
	d := workflow.ClassifyReply(text)
	if d == workflow.DecisionUnknown {
		rd, u, err := t.s.cfg.Agent.ClassifyReview(ctx, t.request(id, ""), text)
		t.add(u)
		if err != nil {
			return true, fmt.Errorf("classify reply: %w", err)
		}
		d = rd.Decision
		if rd.Confidence < conversation.MinReviewConfidence {
			d = workflow.DecisionAmbiguous
		}
	}
	t.log.Debug("typed reply to an artifact under review", "artifact", id, "decision", d)
	switch d {
	case workflow.DecisionApprove:
		return true, t.approve(ctx, id)
	case workflow.DecisionQuestion:
		return false, nil
	case workflow.DecisionAmbiguous:
		return true, t.askMeaning(ctx, id, text)
	}
	return true, author(t).rewrite(ctx, id, text, "changes requested: "+text, false)
}

// askMeaning posts a card that asks what reply text meant, with buttons that act on
// it: Approve (the artifact's own), Request this change, Just a question.
func (t decoder) askMeaning(ctx context.Context, id, text string) error {
	st := t.ws().Artifacts[id]
	a, _ := t.def().Artifact(id)
	card := t.cards().Meaning(a, st, textcut.Bytes(text, maxCarriedReply))
	t.reply = ""
	if _, err := t.r.Out.PostCard(ctx, card); err != nil {
		return fmt.Errorf("post the reply's meaning card: %w", err)
	}
	return nil
}

// replyAction runs click a on the card of askMeaning for artifact id; the card
// loses its buttons, saying what was chosen and by whom.
func (t decoder) replyAction(ctx context.Context, id string, a conversation.ActionInput) error {
	act := a.Action
	if st := t.ws().Artifacts[id]; st.Status != workflow.StatusGenerated {
		return &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
	}
	poster(t).closeMeaning(ctx, a.MessageTS, render.Tr(t.lang, string(act.Name)))
	if act.Name == conversation.ActionReplyChange {
		return author(t).rewrite(ctx, id, act.Arg, "changes requested: "+act.Arg, false)
	}
	// A question: the artifact stays as it is; the assistant answers it in the
	// thread (assistant.Handler.AnswerQuestion).
	t.question = act.Arg
	return nil
}
