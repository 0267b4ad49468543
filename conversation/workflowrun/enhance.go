package workflowrun

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// The enhancement pass (workflow.Artifact.Enhance; docs/workflows.md, "Pipelines"): after a
// draft or auto artifact is written (for auto, each item's text after its editor
// pass), and before it is evaluated, the text is revised by the agent's Revise on the
// model profile Enhance.Model following the expanded Enhance.Prompt. A deployment that
// does not define the profile (Config.ProfileDefined) skips the pass: it is logged,
// and the artifact's card (and, for auto, the pipeline's progress message) says so.
// An enhancement that fails, not by the end of its context, keeps the text as written
// and the card says so too.

// enhanceText runs r.Artifact's enhancement pass over text. It returns the text to
// keep (the enhanced one, or text when the pass is skipped or fails), the outcome
// (workflow.EnhanceDone, EnhanceSkipped, EnhanceFailed; "" without a pass) and the
// call's usage; err is set only when ctx ended during the call.
func enhanceText(ctx context.Context, agent conversation.WorkflowAgent, log *slog.Logger, defined func(string) bool, r conversation.ArtifactRequest, text string) (out, outcome string, u conversation.Usage, err error) {
	e := r.Artifact.Enhance
	if e == nil {
		return text, "", conversation.Usage{}, nil
	}
	if defined == nil || !defined(e.Model) {
		log.Info("enhancement pass skipped: the deployment defines no such model profile (MODEL_PROFILES)", "artifact", r.Artifact.ID, "profile", e.Model)
		return text, workflow.EnhanceSkipped, conversation.Usage{}, nil
	}
	er := r
	er.Current, er.Instructions, er.Profile = text, r.Workflow.ExpandPrompt(e.Prompt, r.Inputs), e.Model
	enhanced, u, err := agent.Revise(ctx, er)
	switch {
	case err != nil && ctx.Err() != nil:
		return "", "", u, err
	case err != nil:
		log.Warn("enhancement pass failed; the text is kept as written", "artifact", r.Artifact.ID, "profile", e.Model, "error", err)
		return text, workflow.EnhanceFailed, u, nil
	case strings.TrimSpace(enhanced) == "":
		log.Warn("enhancement pass returned no text; the text is kept as written", "artifact", r.Artifact.ID, "profile", e.Model)
		return text, workflow.EnhanceFailed, u, nil
	}
	return enhanced, workflow.EnhanceDone, u, nil
}

// enhance runs r.Artifact's enhancement pass over text, just written for a person's
// review (see enhanceText).
func (t author) enhance(ctx context.Context, r conversation.ArtifactRequest, text string) (string, string, error) {
	out, outcome, u, err := enhanceText(ctx, t.s.cfg.Agent, t.log, t.s.profileDefined, r, text)
	t.add(u)
	if err != nil {
		return "", "", conversation.FailedAt(conversation.CauseModel, fmt.Errorf("enhance %s: %w", r.Artifact.ID, err))
	}
	return out, outcome, nil
}

// enhancer returns the turn's enhancer.
func (t pipelineRun) enhancer() *enhancer {
	if t.enh == nil {
		t.enh = &enhancer{defined: t.s.profileDefined, failed: map[string]int{}}
	}
	return t.enh
}
