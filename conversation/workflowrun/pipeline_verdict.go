package workflowrun

import (
	"context"
	"slices"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// evaluateAuto is the evaluation of a pipeline artifact's text (an evaluator): its
// criteria (assess: checks without a model, the others by the model), then the
// placeholders check. An artifact without criteria is not given to the model. A
// model evaluation that fails (not by the end of ctx) is logged and leaves the
// checks' results: the artifact is approved without the rest. Its only error is
// ctx's.
func (t pipelineRun) evaluateAuto(ctx context.Context, r conversation.ArtifactRequest, text string) ([]workflow.CriterionResult, error) {
	var eval []workflow.CriterionResult
	if len(r.Artifact.Criteria) > 0 {
		e, err := author(t).assess(ctx, r, text)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			t.log.Warn("evaluation of a pipeline artifact failed; approved without it", "artifact", r.Artifact.ID, "error", err)
		}
		eval = e
	}
	if r.Artifact.Fetch != "" {
		return eval, nil // fetched pages are not the model's: their brackets are no slots
	}
	return render.CheckPlaceholders(t.lang, eval, text), nil
}

// pipelineVerdict is what the automatic revision of a finished pipeline artifact did:
// its evaluation to approve it with, and, when the revision was kept, the evaluation
// it replaced (prior, nil when only placeholders were fixed), why (for the revision's
// reason) and the revision's note.
type pipelineVerdict struct {
	eval, prior []workflow.CriterionResult
	why, note   string
}

// judgeAuto evaluates finished auto artifact a, whose items joined are text, and gives
// it the one automatic revision a failing verdict gets (fixVerdict, docs/workflows.md,
// "Verdicts"): the joined text is revised and evaluated again. The revision replaces
// the done items' texts: without foreach, the whole of it; with foreach, split back
// into items by workflow.Items, which must give the items' titles in order (else the
// revision is discarded, logged, and the first evaluation stands). A failed item
// stays failed; the revision is evaluated as it will be approved (rejoin). It returns ctx's error when ctx ends, the artifact left as it was.
func (t pipelineRun) judgeAuto(ctx context.Context, a *workflow.Artifact, text string) (pipelineVerdict, error) {
	st := t.ws().Artifacts[a.ID]
	eval, err := t.evaluateAuto(ctx, t.request(a.ID, ""), text)
	if err != nil {
		return pipelineVerdict{}, err
	}
	out := pipelineVerdict{eval: eval}
	if !anyDone(st.Items) || a.Fetch != "" {
		return out, nil // nothing written to revise, or fetched pages, not the model's text
	}
	// The revision is evaluated as it would be approved: split back into the items,
	// the failed ones as they were; one that does not split is not evaluated.
	evaluate := func(ctx context.Context, r conversation.ArtifactRequest, revised string) ([]workflow.CriterionResult, error) {
		joined, ok := rejoin(a, st.Items, revised)
		if !ok {
			return eval, nil // discarded below
		}
		return t.evaluateAuto(ctx, r, joined)
	}
	fixed, err := author(t).fixVerdictWith(ctx, t.request(a.ID, st.Instructions), text, eval, evaluate)
	if ctx.Err() != nil {
		return pipelineVerdict{}, ctx.Err()
	}
	if err != nil || !fixed.revised {
		return out, err
	}
	texts, ok := splitBack(a, st.Items, fixed.text)
	if !ok {
		t.log.Warn("automatic revision of a pipeline artifact does not split back into its items; the first text stands", "artifact", a.ID, "items", len(st.Items))
		return out, nil
	}
	for i, s := range texts {
		t.m.Pipeline().FixedItem(t.ws(), a.ID, i, s)
	}
	return pipelineVerdict{eval: fixed.eval, prior: fixed.prior, why: fixed.why, note: fixed.note}, nil
}

// rejoin is the text artifact a would be approved with were revised, a revision of
// its items joined, split back into them (splitBack): the done items' texts
// replaced, the failed ones kept. ok is false when revised does not split back.
func rejoin(a *workflow.Artifact, items []workflow.ItemState, revised string) (string, bool) {
	texts, ok := splitBack(a, items, revised)
	if !ok {
		return "", false
	}
	cp := slices.Clone(items)
	for i := range cp {
		if cp[i].Status == workflow.ItemDone {
			cp[i].Text, _ = workflow.SplitNotes(texts[i])
		}
	}
	return workflow.JoinItems(a, cp), true
}

// anyDone reports whether an item is done.
func anyDone(items []workflow.ItemState) bool {
	for _, it := range items {
		if it.Status == workflow.ItemDone {
			return true
		}
	}
	return false
}

// splitBack splits revised, a revision of the items joined (workflow.JoinItems), back
// into one text per item: the whole of it for an artifact without foreach (or with
// one item), else workflow.Items of it, which must give as many items as items, with
// the same titles in order (trimmed, without trailing colons, case-insensitive); ok
// is false otherwise.
func splitBack(a *workflow.Artifact, items []workflow.ItemState, revised string) ([]string, bool) {
	if len(items) == 1 {
		return []string{revised}, true
	}
	got := workflow.Items(revised)
	if len(got) != len(items) {
		return nil, false
	}
	out := make([]string, len(items))
	for i, it := range got {
		if !strings.EqualFold(titleKey(it.Title), titleKey(items[i].Title)) {
			return nil, false
		}
		out[i] = it.Body
	}
	return out, a.Foreach != ""
}

// titleKey is an item title as splitBack compares it.
func titleKey(s string) string {
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ":"))
}

// enhancedAuto records, as auto artifact id completes, what became of its items'
// enhancement passes: skipped, failed (for at least one item in this turn), or done.
// A failure counted in an earlier part of the run (before a restart of the bot) is
// not known here.
func (t pipelineRun) enhancedAuto(id string) {
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
