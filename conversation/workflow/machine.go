package workflow

import (
	"slices"
	"strings"
	"time"
)

// The workflow machine (docs/architecture.md, "Workflow machine"): every change of a
// run's State is one of Machine's transitions. A transition either applies whole or
// returns a *Refusal and changes nothing. Who may do what is decided in one place,
// May, for every transition that a workflow's permissions rule. The
// machine does no I/O: the agent calls a transition waits for (options, a text, an
// evaluation) are made by the caller, which passes their results in.

// Refusal is a transition the machine refused: the click is out of date, the
// artifact is not where the action applies, or the person may not do it. Reason
// says which; the caller tells the person in their language.
type Refusal struct {
	Reason RefusalReason
	// Artifact is the artifact concerned, when there is one; Source, for NoItems and
	// TooManyItems, the artifact whose text it fans out over.
	Artifact, Source string
	// Action, for NotAllowed, is what the person may not do; Approvers are the Slack
	// users who may (when set by the deployment), and StartedBy the starter who may
	// ("" when the starter may not).
	Action    Permission
	Approvers []string
	StartedBy string
}

// RefusalReason names why a transition was refused.
type RefusalReason string

// The reasons of a Refusal.
const (
	// NotCurrent: the button was drawn for an earlier revision, or the artifact is
	// no longer where the action applies.
	NotCurrent RefusalReason = "not_current"
	// NotAllowed: the person may not do Refusal.Action (Refusal.Approvers or
	// StartedBy may).
	NotAllowed RefusalReason = "not_allowed"
	// NotRunning: the run is not running (completed or cancelled).
	NotRunning RefusalReason = "not_running"
	// AlreadyRunning: a run is under way in the thread.
	AlreadyRunning RefusalReason = "already_running"
	// UnknownArtifact: the definition has no such artifact.
	UnknownArtifact RefusalReason = "unknown_artifact"
	// NoSuchOption: the reply chose no option of the artifact.
	NoSuchOption RefusalReason = "no_such_option"
	// NoText: the artifact has no text to edit yet.
	NoText RefusalReason = "no_text"
	// BeingWritten: the pipeline is writing the artifact; editing it would lose
	// that run.
	BeingWritten RefusalReason = "being_written"
	// NoItems and TooManyItems: a foreach artifact's source splits into no items, or
	// more than MaxItems.
	NoItems      RefusalReason = "no_items"
	TooManyItems RefusalReason = "too_many_items"
	// ChangePending: the stale artifact waits for the artifact whose change made it
	// stale (Source) to be approved again; until then there is nothing to keep it
	// against or regenerate it from.
	ChangePending RefusalReason = "change_pending"
)

func (r *Refusal) Error() string {
	if r.Artifact != "" {
		return "workflow: " + string(r.Reason) + ": " + r.Artifact
	}
	return "workflow: " + string(r.Reason)
}

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
// (Approve, Keep, KeepAll, CheckEdit, Restart, Cancel) and of starting over a
// completed run. The rule is the definition's (Definition.Rule); the deployment's
// approvers (m.Approvers), when set, are the only people who may approve and keep,
// whatever the rule, and may do whatever the starter may.
func (m Machine) May(s *State, p Permission, actor string) error {
	var starter string
	if s != nil {
		starter = s.StartedBy
	}
	approver := slices.Contains(m.Approvers, actor)
	onlyApprovers := func() error {
		if approver {
			return nil
		}
		return &Refusal{Reason: NotAllowed, Action: p, Approvers: slices.Clone(m.Approvers)}
	}
	rule := m.Def.Rule(p)
	switch {
	case len(m.Approvers) > 0 && (p == PermApprove || p == PermKeep):
		return onlyApprovers()
	case rule == RuleAnyone:
		return nil
	case rule == RuleApprovers && len(m.Approvers) > 0:
		return onlyApprovers()
	}
	// RuleStarter; RuleApprovers without approvers; an unknown rule (Validate
	// reports it) is as safe.
	if (actor != "" && actor == starter) || approver {
		return nil
	}
	return &Refusal{Reason: NotAllowed, Action: p, StartedBy: starter, Approvers: slices.Clone(m.Approvers)}
}

// Running checks that s is running (NotRunning otherwise).
func (m Machine) Running(s *State) error {
	if s == nil || s.Status != RunRunning {
		return &Refusal{Reason: NotRunning}
	}
	return nil
}

// Artifact returns artifact id of s, checking that the definition has it.
func (m Machine) Artifact(s *State, id string) (*Artifact, *ArtifactState, error) {
	a, ok := m.Def.Artifact(id)
	st := s.Artifacts[id]
	if !ok || st == nil {
		return nil, nil, &Refusal{Reason: UnknownArtifact, Artifact: id}
	}
	return a, st, nil
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

// touch marks a change of st: buttons drawn before it are out of date.
func touch(st *ArtifactState) { st.Rev++ }

// revise records a revision of artifact id in its current status.
func (m Machine) revise(s *State, id, by, why string) Revision {
	st := s.Artifacts[id]
	st.Revisions++
	return Revision{Artifact: id, Number: st.Revisions, Status: st.Status, By: by, Why: why, At: m.now()}
}

// in checks that artifact id exists and is in one of statuses (NotCurrent
// otherwise).
func (m Machine) in(s *State, id string, statuses ...ArtifactStatus) (*Artifact, *ArtifactState, error) {
	a, st, err := m.Artifact(s, id)
	if err != nil {
		return nil, nil, err
	}
	if !slices.Contains(statuses, st.Status) {
		return nil, nil, &Refusal{Reason: NotCurrent, Artifact: id}
	}
	return a, st, nil
}

// Proposed records opts as the options of choice artifact id, in place of any
// before (pending, or options shown: Regenerate).
func (m Machine) Proposed(s *State, id string, opts []Option) error {
	_, st, err := m.in(s, id, StatusPending, StatusOptionsGenerated)
	if err != nil {
		return err
	}
	touch(st)
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
		m.handled(s, id, StaleRegenerated, by) // written again: its row is done
	}
	touch(st)
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
	touch(st)
	st.Status = StatusApproved
	m.showStale(s)
	return m.revise(s, id, by, "approved"), nil
}

// Keep keeps stale artifact id as it is: approved again, by by. Keeping approves, so
// it takes approve's rule (PermKeep). Errors: NotAllowed, NotCurrent.
func (m Machine) Keep(s *State, id, by string) (Revision, error) {
	if err := m.May(s, PermKeep, by); err != nil {
		return Revision{}, err
	}
	_, st, err := m.stale(s, id, true)
	if err != nil {
		return Revision{}, err
	}
	touch(st)
	st.Status, st.StaleBecause = StatusApproved, ""
	m.handled(s, id, StaleKept, by)
	return m.revise(s, id, by, "kept after a change of a dependency"), nil
}

// KeepAll keeps every stale artifact that may be kept (see Keep). Errors:
// NotAllowed, NotCurrent (nothing stale), ChangePending (every stale one waits).
func (m Machine) KeepAll(s *State, by string) ([]Revision, error) {
	if err := m.May(s, PermApprove, by); err != nil {
		return nil, err
	}
	ids, err := m.Handleable(s, true)
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
	a, st, err := m.stale(s, id, false)
	if err != nil {
		return nil, err
	}
	m.handled(s, id, StaleRegenerated, by)
	if a.Mode != ModeAuto {
		return nil, nil
	}
	touch(st)
	st.Status, st.Items, st.StaleBecause, st.Instructions = StatusPending, nil, "", guidance
	why := "regenerated after a change of a dependency"
	if guidance != "" {
		why += ": " + guidance
	}
	rev := m.revise(s, id, by, why)
	return &rev, nil
}

// stale returns stale artifact id once it may be kept (keep) or regenerated: the
// artifact whose change made it stale, and every artifact it depends on, are
// approved, so there is something to keep it against and to write it from. An auto
// artifact may be regenerated before its dependencies are approved: it goes back to
// pending and the pipeline writes it once they are. Errors: NotCurrent,
// ChangePending (Source: the first that is not approved).
func (m Machine) stale(s *State, id string, keep bool) (*Artifact, *ArtifactState, error) {
	a, st, err := m.in(s, id, StatusStale)
	if err != nil {
		return nil, nil, err
	}
	w := m.StaleWaitsFor(s, id)
	if !keep && a.Mode == ModeAuto {
		w = ""
		if c := s.Artifacts[st.StaleBecause]; c != nil && c.Status != StatusApproved {
			w = st.StaleBecause
		}
	}
	if w != "" {
		return nil, nil, &Refusal{Reason: ChangePending, Artifact: id, Source: w}
	}
	return a, st, nil
}

// StaleWaitsFor returns what stale artifact id waits for before it may be kept or
// regenerated: the artifact whose change made it stale, or else the first it depends
// on, that is not approved; "" when none.
func (m Machine) StaleWaitsFor(s *State, id string) string {
	st := s.Artifacts[id]
	if st == nil {
		return ""
	}
	for _, dep := range append([]string{st.StaleBecause}, m.Def.Dependencies(id)...) {
		if d := s.Artifacts[dep]; d != nil && d.Status != StatusApproved {
			return dep
		}
	}
	return ""
}

// Handleable lists, in order, the stale artifacts that may be kept (keep) or
// regenerated now: Keep all, Regenerate all. Errors: NotCurrent (nothing is stale),
// ChangePending (every stale one waits).
func (m Machine) Handleable(s *State, keep bool) ([]string, error) {
	var ids []string
	var waiting error
	for _, id := range m.Stale(s) {
		if _, _, err := m.stale(s, id, keep); err != nil {
			waiting = err
			continue
		}
		ids = append(ids, id)
	}
	switch {
	case len(ids) > 0:
		return ids, nil
	case waiting != nil:
		return nil, waiting
	}
	return nil, &Refusal{Reason: NotCurrent}
}

// Stale lists the stale artifacts, in order.
func (m Machine) Stale(s *State) []string {
	var ids []string
	for _, id := range m.Def.Order() {
		if st := s.Artifacts[id]; st != nil && st.Status == StatusStale {
			ids = append(ids, id)
		}
	}
	return ids
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
		if _, _, err := m.stale(s, id, true); err != nil {
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
		m.MarkStale(s, id)
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
		m.handled(s, id, StaleRegenerated, by) // produced again: its row is done
	}
	touch(st)
	st.Status, st.Options, st.Selected, st.Items, st.Instructions = StatusPending, nil, "", nil, ""
	if hadText {
		m.MarkStale(s, id)
	}
	return m.revise(s, id, by, "restarted"), nil
}

// MarkStale marks what depends on artifact id, transitively, after a change of id:
// an artifact written from it (generated, approved or stale already) goes stale; one
// whose options were drawn from it, or that the pipeline is writing from it, goes back
// to pending. It returns the stale ones,
// in order, and records them in the stale list, shown once id is approved again.
func (m Machine) MarkStale(s *State, id string) []string {
	var stale []string
	for _, dep := range m.Def.Dependents(id) {
		st := s.Artifacts[dep]
		switch st.Status {
		case StatusGenerated, StatusApproved, StatusStale:
			touch(st)
			st.Status, st.StaleBecause = StatusStale, id
			stale = append(stale, dep)
		case StatusOptionsGenerated, StatusOptionSelected:
			touch(st)
			st.Status, st.Options, st.Selected = StatusPending, nil, ""
		case StatusRunning:
			// The pipeline writes it from the old text: that run ends, and it starts
			// again once what it depends on is approved.
			touch(st)
			st.Status, st.Items = StatusPending, nil
		}
	}
	if len(stale) == 0 {
		return nil
	}
	l := &StaleList{Changed: id}
	if old := s.Stale; old != nil {
		for _, r := range old.Rows {
			if r.Done == "" && !slices.Contains(stale, r.Artifact) {
				l.Rows = append(l.Rows, r) // still stale from an earlier change
			}
		}
	}
	for _, dep := range stale {
		l.Rows = append(l.Rows, StaleRow{Artifact: dep})
	}
	if old := s.Stale; old != nil {
		l.Replaces = old.TS // the earlier list's message is closed
		if l.Replaces == "" {
			l.Replaces = old.Replaces
		}
	}
	s.Stale = l
	if s.Artifacts[id].Status == StatusApproved {
		l.Shown = true
	}
	return stale
}

// showStale shows the stale list once the artifact whose change made it is approved.
func (m Machine) showStale(s *State) {
	if l := s.Stale; l != nil && !l.Shown && s.Artifacts[l.Changed] != nil && s.Artifacts[l.Changed].Status == StatusApproved {
		l.Shown = true
	}
}

// ForgetStaleList drops the stale list once every row of it is handled (the caller
// has shown it closed).
func (m Machine) ForgetStaleList(s *State) {
	if s.Stale != nil && !s.Stale.Open() {
		s.Stale = nil
	}
}

// handled records how stale artifact id was handled in the stale list.
func (m Machine) handled(s *State, id, how, by string) {
	if l := s.Stale; l != nil {
		for i := range l.Rows {
			if l.Rows[i].Artifact == id && l.Rows[i].Done == "" {
				l.Rows[i].Done, l.Rows[i].By = how, by
			}
		}
	}
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
