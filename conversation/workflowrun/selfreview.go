package workflowrun

import (
	"context"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// proposeOptions asks for the options of choice artifact id; with self_review
// (workflow.Artifact.SelfReview) the model then reviews them against the artifact's
// criteria and revises them once (a second ProposeOptions whose request carries them
// in ArtifactRequest.Review), and reviewed is true: people see the revised options,
// and the options card says they were reviewed (docs/workflows.md, "Pipelines"). A review
// that fails (not by the end of ctx) leaves the first options, with a warning logged.
func (t *wfTurn) proposeOptions(ctx context.Context, id string) (opts []workflow.Option, reviewed bool, err error) {
	r := t.request(id, "")
	opts, u, err := t.s.cfg.Agent.ProposeOptions(ctx, r)
	t.add(u)
	if err != nil {
		return nil, false, conversation.FailedAt(conversation.CauseModel, fmt.Errorf("propose options for %s: %w", id, err))
	}
	if !r.Artifact.SelfReview || len(opts) == 0 {
		return opts, false, nil
	}
	rr := r
	rr.Review = opts
	revised, u, err := t.s.cfg.Agent.ProposeOptions(ctx, rr)
	t.add(u)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, false, conversation.FailedAt(conversation.CauseModel, fmt.Errorf("review the options for %s: %w", id, err))
	case err != nil:
		t.log.Warn("self review of the options failed; the first options are shown", "artifact", id, "error", err)
		return opts, false, nil
	case len(revised) == 0:
		t.log.Warn("self review of the options gave none; the first options are shown", "artifact", id)
		return opts, false, nil
	}
	return revised, true, nil
}
