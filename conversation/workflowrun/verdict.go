package workflowrun

import (
	"context"
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// verdictFixed is the outcome of fixVerdict: whether it revised the text, the
// revised text, its editor's note and evaluation, why (to add to the revision's), and
// prior, the evaluation whose failing verdict it fixed (nil when only placeholders
// were).
type verdictFixed struct {
	revised         bool
	text, note, why string
	eval, prior     []workflow.CriterionResult
}

// fixVerdict gives text, evaluated as eval, its one automatic revision when the
// evaluation's verdict fails (workflow.Definition.Judge) or a placeholder is left in
// it: the editor agent revises it with what failed as its guidance (verdictFix), the
// path of the pipeline's placeholders fix, and the result is evaluated again. It is
// never revised a second time, whatever the new verdict: people see both (docs/workflows.md,
// "Verdicts"). A revision that fails (not by the end of ctx) leaves the text as it
// was.
func (t author) fixVerdict(ctx context.Context, r conversation.ArtifactRequest, text string, eval []workflow.CriterionResult) (verdictFixed, error) {
	return t.fixVerdictWith(ctx, r, text, eval, t.evaluate)
}

// evaluator evaluates a text for fixVerdictWith: t.evaluate for a reviewed artifact,
// t.evaluateAuto for a pipeline's.
type evaluator func(ctx context.Context, r conversation.ArtifactRequest, text string) ([]workflow.CriterionResult, error)

// fixVerdictWith is fixVerdict, the revised text evaluated by evaluate.
func (t author) fixVerdictWith(ctx context.Context, r conversation.ArtifactRequest, text string, eval []workflow.CriterionResult, evaluate evaluator) (verdictFixed, error) {
	v := t.def().Judge(r.Artifact, eval)
	ph := workflow.Placeholders(text)
	if v.Pass && len(ph) == 0 {
		return verdictFixed{}, nil
	}
	fix := r
	fix.Current, fix.Instructions = text, verdictFix(r.Artifact, v, ph, r.Instructions)
	revised, u, err := t.s.cfg.Agent.Revise(ctx, fix)
	t.add(u)
	switch {
	case ctx.Err() != nil:
		return verdictFixed{}, conversation.FailedAt(conversation.CauseModel, fmt.Errorf("revise %s after its evaluation: %w", r.Artifact.ID, err))
	case err != nil:
		t.log.Warn("automatic revision after the evaluation failed; the text is shown as written", "artifact", r.Artifact.ID, "error", err)
		return verdictFixed{}, nil
	}
	revised, note := workflow.SplitNotes(revised)
	after, err := evaluate(ctx, r, revised)
	if err != nil {
		return verdictFixed{}, err
	}
	out := verdictFixed{revised: true, text: revised, note: note, eval: after}
	if len(ph) > 0 {
		out.why += "; placeholders replaced: " + strings.Join(ph, ", ")
	}
	if !v.Pass {
		out.prior = eval
		out.why += "; revised automatically after a failing evaluation"
	}
	return out, nil
}

// verdictFix is the editor's request after verdict v of artifact a failed, or ph,
// placeholders, were left: the placeholders fix (placeholderFix), then every other
// failing criterion with its reason (critical ones marked), as guidance, on lines
// without a blank one. A foreach artifact's joined items are asked to keep their
// headings (judgeAuto splits the revision back by them). asked, the team's
// instructions the text was written with, are kept.
func verdictFix(a *workflow.Artifact, v workflow.Verdict, ph []string, asked string) string {
	var lines []string
	if len(ph) > 0 {
		lines = append(lines, placeholderFix(ph))
	}
	var failed []string
	for _, r := range v.Failed {
		if r.ID == conversation.CriterionPlaceholders {
			continue // asked for above
		}
		line := "- " + render.CriterionTitle("en", a, r.ID)
		if a.Critical(r.ID) {
			line += " (critical)"
		}
		if reason := strings.Join(strings.Fields(r.Reason), " "); reason != "" {
			line += ": " + reason
		}
		failed = append(failed, line)
	}
	if !v.Pass && len(failed) > 0 {
		head := fmt.Sprintf("The evaluation failed: %d of %d criteria met", v.Met, v.Total)
		if len(v.CriticalFailed) > 0 {
			head += ", and a critical criterion failed"
		}
		lines = append(lines, head+". Revise the text so that it meets these criteria; keep everything that already meets the others, and change nothing else:")
		lines = append(lines, failed...)
	}
	if a.Foreach != "" && len(lines) > 0 {
		lines = append(lines, "Keep every \"## \" heading exactly as it is, in the same order: the text is split back into its items by them.")
	}
	if asked = strings.TrimSpace(asked); asked != "" {
		lines = append(lines, "Keep following what the team asked for: "+strings.Join(strings.Fields(asked), " "))
	}
	return strings.Join(lines, "\n")
}

// assess evaluates text against r.Artifact's criteria (without the placeholders
// check): those with a check by workflow.RunChecks, without a model; the others by
// the model's Evaluate, asked about only them (no call when every criterion has a
// check). The results are in criteria order, then any the model gave for an id the
// artifact does not declare. When the model's evaluation fails, the checks' results
// are returned with its error.
func (t author) assess(ctx context.Context, r conversation.ArtifactRequest, text string) ([]workflow.CriterionResult, error) {
	checks := workflow.RunChecks(r.Artifact, text, workflow.CheckEnv{Inputs: r.Inputs, Artifacts: r.Approved, Workflow: r.Workflow})
	if len(checks) == 0 {
		eval, u, err := t.s.cfg.Agent.Evaluate(ctx, r, text)
		t.add(u)
		return eval, err
	}
	var model []workflow.CriterionResult
	var err error
	if rest := r.Artifact.Unchecked(); len(rest.Criteria) > 0 {
		asked := r
		asked.Artifact = rest
		var u conversation.Usage
		model, u, err = t.s.cfg.Agent.Evaluate(ctx, asked, text)
		t.add(u)
	}
	return mergeResults(r.Artifact, render.CheckResults(t.lang, checks), model), err
}

// mergeResults puts checks (the results of a's checked criteria, in criteria order)
// and model (the model's, for the others) in a's criteria order; a criterion the
// model left out is left out, and the model's results for an id a does not declare
// follow, in its order.
func mergeResults(a *workflow.Artifact, checks, model []workflow.CriterionResult) []workflow.CriterionResult {
	byID := make(map[string]workflow.CriterionResult, len(model))
	for _, r := range model {
		if _, dup := byID[r.ID]; !dup {
			byID[r.ID] = r
		}
	}
	out := make([]workflow.CriterionResult, 0, len(checks)+len(model))
	used := map[string]bool{}
	for _, c := range a.Criteria {
		switch r, ok := byID[c.ID]; {
		case c.Check != nil:
			if len(checks) > 0 {
				out, checks = append(out, checks[0]), checks[1:]
			}
			used[c.ID] = true // the check judges it, whatever the model said
		case ok:
			out = append(out, r)
			used[c.ID] = true
		}
	}
	for _, r := range model {
		if !used[r.ID] {
			out = append(out, r)
			used[r.ID] = true
		}
	}
	return out
}

// evaluate judges text against r.Artifact's criteria (assess: checks without a
// model, the others by the model), with the placeholders check added
// (checkPlaceholders).
func (t author) evaluate(ctx context.Context, r conversation.ArtifactRequest, text string) ([]workflow.CriterionResult, error) {
	eval, err := t.assess(ctx, r, text)
	if err != nil {
		return nil, conversation.FailedAt(conversation.CauseModel, fmt.Errorf("evaluate %s: %w", r.Artifact.ID, err))
	}
	return render.CheckPlaceholders(t.lang, eval, text), nil
}

// placeholderFix is the editor's request to fill the template slots ph: the failure
// of the placeholders criterion, as guidance.
func placeholderFix(ph []string) string {
	return "The check \"No placeholders\" failed: " + placeholderReason(ph) + ". " +
		"Replace the placeholders " + strings.Join(ph, ", ") + " with the real names and values from the workflow's inputs, the approved artifacts and the thread; where none is known, rephrase the sentence so no square-bracketed slot is left. Change nothing else."
}

// placeholderReason is the reason the placeholders criterion fails for ph.
func placeholderReason(ph []string) string {
	return "placeholder " + strings.Join(ph, ", ") + " left in the text"
}
