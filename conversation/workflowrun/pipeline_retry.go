package workflowrun

import (
	"context"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Retry of a pipeline's failed items (docs/workflows.md, "Failures and Retry"): the card of an
// auto artifact the pipeline finished with failed items offers Retry failed items.
// Its click (ActionRetry with the artifact and its revision) runs those items again
// through the pipeline, keeping the items that were written; what was written from
// the artifact goes stale (workflow.Machine.RetryFailed).

// retryItems runs the click on an artifact's Retry failed items: its failed items
// run again in a pipeline part enqueued with the turn. A click on an older card is
// told the Retry is no longer available.
func (t *wfTurn) retryItems(ctx context.Context, a conversation.ActionInput) error {
	id := a.Action.Artifact
	if t.def() == nil || t.m.Current(t.ws(), id, a.Action.Rev) != nil {
		t.ephemeral(ctx, render.Tr(t.lang, "retry.gone"))
		return errTold{&workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}}
	}
	t.m.Reopen(t.ws())
	t.state.Mode = conversation.ModeWorkflow
	rev, err := t.m.Pipeline().RetryFailed(t.ws(), id, t.user)
	if err != nil {
		return err
	}
	t.keep(rev)
	t.m.Pipeline().Resume(t.ws())
	t.events = append(t.events, cardEvent{kind: evProgress})
	t.continuePipeline()
	return nil
}
