package workflowrun

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// propose asks for options for artifact id and shows them.
func (t author) propose(ctx context.Context, id string, sup supersede) error {
	opts, reviewed, err := t.proposeOptions(ctx, id) // below, in this file
	if err != nil {
		return err
	}
	if err := t.m.Proposed(t.ws(), id, opts); err != nil {
		return err
	}
	t.ws().Artifacts[id].Reviewed = reviewed
	t.show(id, sup)
	return nil
}

// write writes artifact id (from its selected option, if any) and reviews it. A
// tool call that needs the confirmation of the person who asked stops it (ask.go).
func (t author) write(ctx context.Context, id, instructions, why string, sup supersede) error {
	return t.writeFrom(ctx, id, instructions, why, sup, nil)
}

// writeFrom is write; resume, when set, goes on from the write's stop for a
// confirmation (decide).
func (t author) writeFrom(ctx context.Context, id, instructions, why string, sup supersede, resume *conversation.Resume) error {
	if resume == nil {
		t.dropAskFor(id)
	} else {
		t.state.WriteApproval, t.ws().Artifacts[id].Asking = nil, false
	}
	r := t.request(id, instructions)
	r.Ask, r.Resume = t.asker() != "", resume
	taint := &conversation.Taint{} // what the write read and refused (docs/tools.md, "Tool policy")
	text, u, err := t.s.cfg.Agent.Write(conversation.WithTaint(ctx, taint), r)
	t.add(u)
	var ask *conversation.ConfirmationNeeded
	if errors.As(err, &ask) {
		t.askWrite(id, instructions, why, sup, ask.Pending)
		return nil
	}
	if err != nil {
		return conversation.FailedAt(conversation.CauseModel, fmt.Errorf("write %s: %w", id, err))
	}
	text, enhanced, err := t.enhance(ctx, r, text) // enhance.go
	if err != nil {
		return err
	}
	st := t.ws().Artifacts[id]
	st.Tainted, st.Refused = false, nil // a new text: what this write read and refused
	st.Taint(r.Tainted || taint.Read(), taint.Refused())
	if err := t.review(ctx, id, r, text, why, sup, false, true); err != nil {
		return err
	}
	t.ws().Artifacts[id].Enhancement = enhanced
	return nil
}

// rewrite revises artifact id's text following a person's instructions (the editor
// agent) and reviews it; edit says it is an edit (what depends on an approved text
// goes stale). A failing verdict is shown as it is: the person asked for this text.
func (t author) rewrite(ctx context.Context, id, instructions, why string, edit bool) error {
	return t.revise(ctx, id, instructions, why, edit, false)
}

// revise is rewrite; auto lets a failing verdict trigger the automatic revision
// (review), for a text the bot rewrites on its own (a stale artifact regenerated).
func (t author) revise(ctx context.Context, id, instructions, why string, edit, auto bool) error {
	r := t.request(id, instructions)
	text, u, err := t.s.cfg.Agent.Revise(ctx, r)
	t.add(u)
	if err != nil {
		return conversation.FailedAt(conversation.CauseModel, fmt.Errorf("revise %s: %w", id, err))
	}
	return t.review(ctx, id, r, text, why, supersede{why: supersededRevised}, edit, auto)
}

// review evaluates text, records it as artifact id's new revision and shows it.
// A revision note the model left in the text is kept apart (workflow.SplitNotes): the
// card shows it, the text never carries it. Before anyone sees the card, a text gets
// at most one automatic revision by the editor agent, with what failed as its
// guidance: when auto is set (a text the bot wrote on its own), for a failing verdict
// (workflow.Definition.Judge) or a placeholder left ("[product]"), and the card shows
// both verdicts (fixVerdict); otherwise (a person's change) for a placeholder only.
// A placeholder still there fails the placeholders criterion on the card.
func (t author) review(ctx context.Context, id string, r conversation.ArtifactRequest, text, why string, sup supersede, edit, auto bool) error {
	text, note := workflow.SplitNotes(text)
	if ph := workflow.Placeholders(text); len(ph) > 0 && !auto {
		fix := r
		fix.Current, fix.Instructions = text, placeholderFix(ph)
		fixed, u, err := t.s.cfg.Agent.Revise(ctx, fix)
		t.add(u)
		if err != nil {
			return conversation.FailedAt(conversation.CauseModel, fmt.Errorf("revise %s: %w", id, err))
		}
		fixed, fixNote := workflow.SplitNotes(fixed)
		if fixNote != "" {
			note = fixNote
		}
		text, why = fixed, why+"; placeholders replaced: "+strings.Join(ph, ", ")
	}
	eval, err := t.evaluate(ctx, r, text)
	if err != nil {
		return err
	}
	var prior []workflow.CriterionResult
	if auto {
		fixed, err := t.fixVerdict(ctx, r, text, eval)
		if err != nil {
			return err
		}
		if fixed.revised {
			text, eval, prior, why = fixed.text, fixed.eval, fixed.prior, why+fixed.why
			if fixed.note != "" {
				note = fixed.note
			}
		}
	}
	var rev workflow.Revision
	if edit {
		rev, err = t.m.Edited(t.ws(), id, text, eval, t.user, why)
	} else {
		rev, err = t.m.Written(t.ws(), id, text, eval, t.user, why)
	}
	if err != nil {
		return err
	}
	t.ws().Artifacts[id].Note = note
	t.ws().Artifacts[id].PriorEval = prior
	t.ws().Artifacts[id].Enhancement = "" // a new text; write sets it for its own
	t.keep(rev)
	t.show(id, sup)
	return nil
}

// pick chooses option label of artifact id, with optional instructions, and writes
// the artifact from it.
func (t author) pick(ctx context.Context, id, label, instructions string) error {
	opt, err := t.m.Pick(t.ws(), id, label)
	if err != nil {
		return err
	}
	why := "written from option " + opt.Label
	if instructions != "" {
		why += ": " + instructions
	}
	return t.write(ctx, id, instructions, why, supersede{why: supersededChosen, label: opt.Label})
}

// proposeOptions asks for the options of choice artifact id; with self_review
// (workflow.Artifact.SelfReview) the model then reviews them against the artifact's
// criteria and revises them once (a second ProposeOptions whose request carries them
// in ArtifactRequest.Review), and reviewed is true: people see the revised options,
// and the options card says they were reviewed (docs/workflows.md, "Pipelines"). A review
// that fails (not by the end of ctx) leaves the first options, with a warning logged.
func (t author) proposeOptions(ctx context.Context, id string) (opts []workflow.Option, reviewed bool, err error) {
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
