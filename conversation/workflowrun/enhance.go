package workflowrun

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

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

// profileDefined reports whether the deployment defines model profile name.
func (s *Handler) profileDefined(name string) bool {
	return s.cfg.ProfileDefined != nil && s.cfg.ProfileDefined(name)
}

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
func (t *wfTurn) enhance(ctx context.Context, r conversation.ArtifactRequest, text string) (string, string, error) {
	out, outcome, u, err := enhanceText(ctx, t.s.cfg.Agent, t.log, t.s.profileDefined, r, text)
	t.add(u)
	if err != nil {
		return "", "", conversation.FailedAt(conversation.CauseModel, fmt.Errorf("enhance %s: %w", r.Artifact.ID, err))
	}
	return out, outcome, nil
}

// enhancer is what a pipeline's workers need for the enhancement pass: which profiles
// the deployment defines, and, per auto artifact, how many items' passes failed in
// this turn (read when the artifact completes: enhancedAuto).
type enhancer struct {
	defined func(string) bool
	mu      sync.Mutex
	failed  map[string]int
}

// enhancer returns the turn's enhancer.
func (t *wfTurn) enhancer() *enhancer {
	if t.enh == nil {
		t.enh = &enhancer{defined: t.s.profileDefined, failed: map[string]int{}}
	}
	return t.enh
}

// enhance runs the enhancement pass of job's artifact over text, one try of an item
// written (and edited) with usage u and error err: a try that failed is returned as
// it is. A failed pass keeps text and is counted for the artifact's card.
func (w worker) enhance(ctx context.Context, job itemJob, text string, u conversation.Usage, err error) (string, conversation.Usage, error) {
	if err != nil || w.enh == nil || job.req.Artifact.Enhance == nil {
		return text, u, err
	}
	out, outcome, eu, err := enhanceText(ctx, w.agent, w.log, w.enh.defined, job.req, text)
	if outcome == workflow.EnhanceFailed {
		w.enh.mu.Lock()
		w.enh.failed[job.artifact]++
		w.enh.mu.Unlock()
	}
	return out, u.Add(eu), err
}

// enhancedAuto records, as auto artifact id completes, what became of its items'
// enhancement passes: skipped, failed (for at least one item in this turn), or done.
// A failure counted in an earlier part of the run (before a restart of the bot) is
// not known here.
func (t *wfTurn) enhancedAuto(id string) {
	a, _ := t.def().Artifact(id)
	st := t.ws().Artifacts[id]
	e := t.enhancer()
	e.mu.Lock()
	failed := e.failed[id]
	delete(e.failed, id)
	e.mu.Unlock()
	switch {
	case a.Enhance == nil || len(workflow.FailedItems(st.Items)) == len(st.Items):
		st.Enhancement = ""
	case !t.s.profileDefined(a.Enhance.Model):
		st.Enhancement = workflow.EnhanceSkipped
	case failed > 0:
		st.Enhancement = workflow.EnhanceFailed
	default:
		st.Enhancement = workflow.EnhanceDone
	}
}
