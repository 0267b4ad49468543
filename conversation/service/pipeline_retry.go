package service

import (
	"context"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// retryItems returns the Retry button of auto artifact a as st when some of its items
// failed, or nil.
func (c cards) retryItems(a *workflow.Artifact, st *workflow.ArtifactState) []conversation.Button {
	if st.Status != workflow.StatusApproved || len(workflow.FailedItems(st.Items)) == 0 {
		return nil
	}
	return []conversation.Button{{Label: tr(c.lang, "retry.items"), Style: "primary", Action: c.action(conversation.ActionRetry, a.ID, st.Rev, "")}}
}

// retryItems runs the click on an artifact's Retry failed items: its failed items
// run again in a pipeline part enqueued with the turn. A click on an older card is
// told the Retry is no longer available.
func (t *wfTurn) retryItems(ctx context.Context, a conversation.ActionInput) error {
	id := a.Action.Artifact
	if t.def() == nil || t.m.Current(t.ws(), id, a.Action.Rev) != nil {
		t.ephemeral(ctx, tr(t.lang, "retry.gone"))
		return errTold{&workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}}
	}
	t.m.Reopen(t.ws())
	t.state.Mode = conversation.ModeWorkflow
	rev, err := t.m.RetryFailed(t.ws(), id, t.user)
	if err != nil {
		return err
	}
	t.keep(rev)
	t.m.Resume(t.ws())
	t.events = append(t.events, cardEvent{kind: evProgress})
	t.continuePipeline()
	return nil
}
