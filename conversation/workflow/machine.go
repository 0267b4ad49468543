package workflow

import (
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/threadwright/threadwright/internal/textcut"
)

// The workflow machine (docs/architecture.md, "Workflow machine"): every change of a
// run's State by a person's action is one of Machine's transitions, here. A transition
// either applies whole or returns a *Refusal (refusal.go) and changes nothing. Who may
// do what is decided in one place, May, for every transition that a workflow's
// permissions rule. What a change makes stale, and the stale list, are the stale rule's
// (Staleness, stale.go); the auto artifacts' items are the pipeline's (Pipeline,
// pipeline.go); what runs next is the scheduling rule's (Next, schedule.go). The
// machine does no I/O: the agent calls a transition waits for (options, a text, an
// evaluation) are made by the caller, which passes their results in.

// Machine applies the transitions of the runs of one definition.
type Machine struct {
	Def *Definition
	// Approvers are the deployment's approvers (APPROVER_USER_IDS): when set, the
	// only Slack users who may approve, and they may do whatever the starter may
	// (see May).
	Approvers []string
	// Now is the time of revisions (default time.Now).
	Now func() time.Time
}

func (m Machine) now() time.Time {
	if m.Now != nil {
		return m.Now().UTC()
	}
	return time.Now().UTC()
}

// NewRun returns a run of m's definition started by startedBy (a Slack user id) in
// locale: running, every artifact pending.
func (m Machine) NewRun(startedBy, locale string) *State {
	arts := make(map[string]*ArtifactState, len(m.Def.Artifacts))
	for _, a := range m.Def.Artifacts {
		arts[a.ID] = &ArtifactState{Status: StatusPending}
	}
	return &State{Name: m.Def.Name, StartedBy: startedBy, Locale: locale, Status: RunRunning, Artifacts: arts}
}

// May reports whether actor may do p in run s: nil, or a NotAllowed Refusal that
// names the action and who may. It is the one permission check of every transition
// (Approve, Keep, KeepAll, CheckEdit, Restart, Cancel, Pipeline.RetryFailed) and of
// starting over a completed run. The rule is the definition's (Definition.Rule);
// the deployment's approvers (m.Approvers), when set, are the only people who may
// approve and keep, whatever the rule, and may do whatever the starter may.
func (m Machine) May(s *State, p Permission, actor string) error {
	people, anyone, starterRule := m.who(s, p)
	if anyone || (actor != "" && slices.Contains(people, actor)) {
		return nil
	}
	r := &Refusal{Reason: NotAllowed, Action: p, Approvers: slices.Clone(m.Approvers)}
	if starterRule && s != nil {
		r.StartedBy = s.StartedBy
	}
	return r
}

// Who returns who may do p in run s, by the same rule as May: anyone in the
// thread (anyone true), or the Slack user IDs in people (the starter and the
// deployment's approvers, or the approvers alone). A status line says it
// (docs/workflows.md, "Commands").
func (m Machine) Who(s *State, p Permission) (people []string, anyone bool) {
	people, anyone, _ = m.who(s, p)
	return people, anyone
}

// who is Who, and whether the starter rule decided (a refusal then names the
// starter).
func (m Machine) who(s *State, p Permission) (people []string, anyone, starterRule bool) {
	rule := m.Def.Rule(p)
	switch {
	case len(m.Approvers) > 0 && (p == PermApprove || p == PermKeep):
		return slices.Clone(m.Approvers), false, false
	case rule == RuleAnyone:
		return nil, true, false
	case rule == RuleApprovers && len(m.Approvers) > 0:
		return slices.Clone(m.Approvers), false, false
	}
	// RuleStarter; RuleApprovers without approvers; an unknown rule (Validate
	// reports it) is as safe.
	if s != nil && s.StartedBy != "" {
		people = append(people, s.StartedBy)
	}
	for _, a := range m.Approvers {
		if !slices.Contains(people, a) {
			people = append(people, a)
		}
	}
	return people, false, true
}

// Running checks that s is running (NotRunning otherwise).
func (m Machine) Running(s *State) error {
	if s == nil || s.Status != RunRunning {
		return &Refusal{Reason: NotRunning}
	}
	return nil
}

// Artifact returns artifact id of s, checking that the definition has it
// (UnknownArtifact otherwise).
func (m Machine) Artifact(s *State, id string) (*Artifact, *ArtifactState, error) {
	return s.artifact(m.Def, id)
}

// Current checks that a click drawn for revision rev of artifact id is current: the
// run is running and the artifact is still at rev (NotCurrent otherwise).
func (m Machine) Current(s *State, id string, rev int) error {
	if err := m.Running(s); err != nil {
		return &Refusal{Reason: NotCurrent, Artifact: id}
	}
	if _, st, err := m.Artifact(s, id); err != nil || st.Rev != rev {
		return &Refusal{Reason: NotCurrent, Artifact: id}
	}
	return nil
}

// revise records a revision of artifact id in its current status.
func (m Machine) revise(s *State, id, by, why string) Revision {
	st := s.Artifacts[id]
	st.Revisions++
	return Revision{Artifact: id, Number: st.Revisions, Status: st.Status, By: by, Why: why, At: m.now()}
}

// in checks that artifact id exists and is in one of statuses (NotCurrent
// otherwise).
func (m Machine) in(s *State, id string, statuses ...ArtifactStatus) (*Artifact, *ArtifactState, error) {
	return s.artifact(m.Def, id, statuses...)
}

// Staleness returns the stale rule of m's runs (stale.go).
func (m Machine) Staleness() Staleness { return Staleness{Def: m.Def} }

// Proposed records opts as the options of choice artifact id, in place of any
// before (pending, or options shown: Regenerate).
func (m Machine) Proposed(s *State, id string, opts []Option) error {
	_, st, err := m.in(s, id, StatusPending, StatusOptionsGenerated)
	if err != nil {
		return err
	}
	st.touch()
	st.Status, st.Options, st.Selected = StatusOptionsGenerated, slices.Clone(opts), ""
	return nil
}

// Pick chooses the option of artifact id labelled label (letter case aside) and
// returns it; the artifact is then written from it (Written). Errors: NotCurrent,
// NoSuchOption.
func (m Machine) Pick(s *State, id, label string) (Option, error) {
	_, st, err := m.in(s, id, StatusOptionsGenerated)
	if err != nil {
		return Option{}, err
	}
	for _, o := range st.Options {
		if strings.EqualFold(o.Label, label) {
			st.Selected, st.Status = o.Label, StatusOptionSelected
			return o, nil
		}
	}
	return Option{}, &Refusal{Reason: NoSuchOption, Artifact: id}
}

// Written records text, evaluated as eval, as artifact id's new revision, by by for
// why ("written from option B", "changes requested: …"): the text awaits review
// (generated), or is approved at once for an auto artifact. It is not stale any
// more.
// A revision note the editor left in text is kept apart, as the artifact's Note
// (SplitNotes); without one, the Note of an earlier text is cleared.
func (m Machine) Written(s *State, id, text string, eval []CriterionResult, by, why string) (Revision, error) {
	a, st, err := m.Artifact(s, id)
	if err != nil {
		return Revision{}, err
	}
	if st.Status == StatusStale {
		m.Staleness().handled(s, id, StaleRegenerated, by) // written again: its row is done
	}
	st.touch()
	st.Text, st.Note = SplitNotes(text)
	st.Status, st.Eval, st.StaleBecause, st.PriorEval = StatusGenerated, slices.Clone(eval), "", nil
	if a.Mode == ModeAuto {
		st.Status = StatusApproved // auto: no review
	}
	return m.revise(s, id, by, why), nil
}

// Approve approves artifact id, under review, by by. When it is the artifact whose
// change made others stale, their stale list is shown now. Errors: NotAllowed,
// NotCurrent.
func (m Machine) Approve(s *State, id, by string) (Revision, error) {
	if err := m.May(s, PermApprove, by); err != nil {
		return Revision{}, err
	}
	_, st, err := m.in(s, id, StatusGenerated)
	if err != nil {
		return Revision{}, err
	}
	st.touch()
	st.Status = StatusApproved
	m.Staleness().show(s)
	return m.revise(s, id, by, "approved"), nil
}

// Keep keeps stale artifact id as it is: approved again, by by. Keeping approves, so
// it takes approve's rule (PermKeep). Errors: NotAllowed, NotCurrent.
func (m Machine) Keep(s *State, id, by string) (Revision, error) {
	if err := m.May(s, PermKeep, by); err != nil {
		return Revision{}, err
	}
	_, st, err := m.Staleness().ready(s, id, true)
	if err != nil {
		return Revision{}, err
	}
	st.touch()
	st.Status, st.StaleBecause = StatusApproved, ""
	m.Staleness().handled(s, id, StaleKept, by)
	return m.revise(s, id, by, "kept after a change of a dependency"), nil
}

// KeepAll keeps every stale artifact that may be kept (see Keep). Errors:
// NotAllowed, NotCurrent (nothing stale), ChangePending (every stale one waits).
func (m Machine) KeepAll(s *State, by string) ([]Revision, error) {
	if err := m.May(s, PermApprove, by); err != nil {
		return nil, err
	}
	ids, err := m.Staleness().Handleable(s, true)
	if err != nil {
		return nil, err
	}
	revs := make([]Revision, 0, len(ids))
	for _, id := range ids {
		rev, err := m.Keep(s, id, by)
		if err != nil {
			return nil, err // not reached: checked above
		}
		revs = append(revs, rev)
	}
	return revs, nil
}

// Regenerate marks stale artifact id, by by, as being written again from the current
// texts of what it depends on, with guidance: an auto artifact goes back to pending
// with guidance as its items' instructions (the pipeline runs it again; Revision);
// another kind stays stale until its new text is Written. Errors: NotCurrent,
// ChangePending.
func (m Machine) Regenerate(s *State, id, by, guidance string) (*Revision, error) {
	a, st, err := m.Staleness().ready(s, id, false)
	if err != nil {
		return nil, err
	}
	m.Staleness().handled(s, id, StaleRegenerated, by)
	if a.Mode != ModeAuto {
		return nil, nil
	}
	st.touch()
	st.Status, st.Items, st.StaleBecause, st.Instructions = StatusPending, nil, "", guidance
	why := "regenerated after a change of a dependency"
	if guidance != "" {
		why += ": " + guidance
	}
	rev := m.revise(s, id, by, why)
	return &rev, nil
}

// CheckEdit checks that by may edit artifact id: by may edit (PermEdit), it has a
// text, the pipeline is not writing it, a stale one may be handled (see Keep), and
// for an auto artifact, whose edited text is approved as it is, by may approve.
// Errors: NotAllowed, UnknownArtifact, NoText, BeingWritten, ChangePending.
func (m Machine) CheckEdit(s *State, id, by string) error {
	if err := m.May(s, PermEdit, by); err != nil {
		return err
	}
	a, st, err := m.Artifact(s, id)
	switch {
	case err != nil:
		return err
	case st.Status == StatusRunning:
		return &Refusal{Reason: BeingWritten, Artifact: id}
	case st.Text == "":
		return &Refusal{Reason: NoText, Artifact: id}
	case st.Status == StatusStale:
		if _, _, err := m.Staleness().ready(s, id, true); err != nil {
			return err
		}
	}
	if a.Mode == ModeAuto {
		return m.May(s, PermApprove, by)
	}
	return nil
}

// Edited records by's edit of artifact id, its new text (see Written), and, when the
// artifact was approved, marks what depends on it stale. Errors: as CheckEdit.
func (m Machine) Edited(s *State, id, text string, eval []CriterionResult, by, why string) (Revision, error) {
	if err := m.CheckEdit(s, id, by); err != nil {
		return Revision{}, err
	}
	wasApproved := s.Artifacts[id].Status == StatusApproved
	rev, err := m.Written(s, id, text, eval, by, why)
	if err != nil {
		return Revision{}, err
	}
	if wasApproved {
		m.Staleness().Mark(s, id)
	}
	return rev, nil
}

// Restart sends artifact id back to its start, by by: pending, options and selection
// cleared (an auto artifact's items too); when it had a text, what depends on it goes
// stale. The caller then produces it anew. Errors: NotAllowed, UnknownArtifact.
func (m Machine) Restart(s *State, id, by string) (Revision, error) {
	if err := m.May(s, PermRestart, by); err != nil {
		return Revision{}, err
	}
	_, st, err := m.Artifact(s, id)
	if err != nil {
		return Revision{}, err
	}
	hadText := st.Text != ""
	if st.Status == StatusStale {
		m.Staleness().handled(s, id, StaleRegenerated, by) // produced again: its row is done
	}
	st.touch()
	st.Status, st.Options, st.Selected, st.Items, st.Instructions, st.Asking = StatusPending, nil, "", nil, "", false
	if hadText {
		m.Staleness().Mark(s, id)
	}
	return m.revise(s, id, by, "restarted"), nil
}

// Cancel cancels the run, by by. Errors: NotRunning, NotAllowed.
func (m Machine) Cancel(s *State, by string) error {
	if err := m.Running(s); err != nil {
		return err
	}
	if err := m.May(s, PermCancel, by); err != nil {
		return err
	}
	s.Status = RunCancelled
	return nil
}

// Reopen runs a completed run again (an edit or a restart after its report): it
// completes again, with a new report, once everything is approved again.
func (m Machine) Reopen(s *State) {
	if s != nil && s.Status == RunCompleted {
		s.Status = RunRunning
	}
}

// Complete ends a run whose artifacts are all approved (its report is out).
// Errors: NotCurrent when one is not approved.
func (m Machine) Complete(s *State) error {
	for _, st := range s.Artifacts {
		if st.Status != StatusApproved {
			return &Refusal{Reason: NotCurrent}
		}
	}
	s.Status = RunCompleted
	return nil
}

// MaxSubject is the longest Subject, in runes.
const MaxSubject = 200

// Waiting is where a running run stands for people: the artifact its next step is
// about and who that step waits for (docs/workflows.md, "Commands"). The zero
// value is a run that waits for nothing (finished, cancelled, or every artifact
// approved).
type Waiting struct {
	// Artifact is the id of the first artifact, in the definition's order, that is
	// not approved.
	Artifact string
	// Status is that artifact's status.
	Status ArtifactStatus
	// Action is what a person must do: PermApprove for a text under review,
	// PermKeep for a stale one (keep or regenerate), PermRestart to keep or change
	// a held topic (State.TopicHeld), "" for a pick among options
	// (anyone may pick) or while the bot works (Bot).
	Action Permission
	// People are the Slack user IDs who may do Action; empty with Anyone or Bot.
	People []string
	// Anyone is true when anyone in the thread may act (a pick, or the rule
	// "anyone").
	Anyone bool
	// Bot is true when the bot is working on Artifact (pending, option chosen,
	// running), so nobody needs to act.
	Bot bool
}

// Waiting returns where run s stands: its first artifact not approved, and who may
// act on it by the rules of May (Who).
func (m Machine) Waiting(s *State) Waiting {
	if s == nil || s.Status != RunRunning {
		return Waiting{}
	}
	if s.TopicHeld && len(m.Def.Artifacts) > 0 {
		// Nothing is written until the topic is kept or changed (State.TopicHeld).
		w := Waiting{Artifact: m.Def.Order()[0], Status: StatusPending, Action: PermRestart}
		w.People, w.Anyone = m.Who(s, PermRestart)
		return w
	}
	for _, id := range m.Def.Order() {
		st, ok := s.Artifacts[id]
		if !ok || st.Status == StatusApproved {
			continue
		}
		w := Waiting{Artifact: id, Status: st.Status}
		switch st.Status {
		case StatusOptionsGenerated:
			w.Anyone = true
		case StatusGenerated:
			w.Action = PermApprove
			w.People, w.Anyone = m.Who(s, PermApprove)
		case StatusStale:
			w.Action = PermKeep
			w.People, w.Anyone = m.Who(s, PermKeep)
		default:
			w.Bot = true
		}
		return w
	}
	return Waiting{}
}

// Subject is what run s of d is about, for a status line: its topic input, or else
// its first filled input in d's order, cut to MaxSubject runes; "" when it has none.
func Subject(d *Definition, s *State) string {
	if s == nil {
		return ""
	}
	v := s.Inputs["topic"]
	for i := 0; v == "" && i < len(d.Inputs); i++ {
		v = s.Inputs[d.Inputs[i].ID]
	}
	return textcut.Ellipsis(strings.Join(strings.Fields(v), " "), MaxSubject, unicode.IsSpace)
}
