package conversation

import (
	"context"
	"fmt"
	"strings"

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
// never revised a second time, whatever the new verdict: people see both (README.md,
// "Verdicts"). A revision that fails (not by the end of ctx) leaves the text as it
// was.
func (t *wfTurn) fixVerdict(ctx context.Context, r ArtifactRequest, text string, eval []workflow.CriterionResult) (verdictFixed, error) {
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
		return verdictFixed{}, failedAt(sourceModel, fmt.Errorf("revise %s after its evaluation: %w", r.Artifact.ID, err))
	case err != nil:
		t.log.Warn("automatic revision after the evaluation failed; the text is shown as written", "artifact", r.Artifact.ID, "error", err)
		return verdictFixed{}, nil
	}
	revised, note := workflow.SplitNotes(revised)
	after, err := t.evaluate(ctx, r, revised)
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
// without a blank one. asked, the team's instructions the text was written with, are
// kept.
func verdictFix(a *workflow.Artifact, v workflow.Verdict, ph []string, asked string) string {
	var lines []string
	if len(ph) > 0 {
		lines = append(lines, placeholderFix(ph))
	}
	var failed []string
	for _, r := range v.Failed {
		if r.ID == CriterionPlaceholders {
			continue // asked for above
		}
		line := "- " + criterionTitle("en", a, r.ID)
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
	if asked = strings.TrimSpace(asked); asked != "" {
		lines = append(lines, "Keep following what the team asked for: "+strings.Join(strings.Fields(asked), " "))
	}
	return strings.Join(lines, "\n")
}

// judged is an artifact's evaluation on its card: the evaluation line and failing
// criteria (evaluation), then the verdict; after an automatic revision, both
// verdicts, before → after.
func (c cards) judged(a *workflow.Artifact, st *workflow.ArtifactState) string {
	return c.evaluation(a, st.Eval) + "\n" + c.verdict(a, st)
}

// verdict is the verdict line of st's evaluation, in the card's language: "⚖️
// *Verdict:* ✅ pass", or "… ❌ fail (2 of 4 criteria met) → ✅ pass (4 of 4) after
// one automatic revision".
func (c cards) verdict(a *workflow.Artifact, st *workflow.ArtifactState) string {
	word := func(v workflow.Verdict) string {
		if v.Pass {
			return tr(c.lang, "verdict.pass")
		}
		return tr(c.lang, "verdict.fail")
	}
	after := c.def.Judge(a, st.Eval)
	line := word(after)
	if st.PriorEval != nil {
		before := c.def.Judge(a, st.PriorEval)
		line = tr(c.lang, "verdict.revised", word(before), before.Met, before.Total, word(after), after.Met, after.Total)
	}
	return "⚖️ *" + tr(c.lang, "verdict.label") + ":* " + line
}
