package workflow

import "slices"

// The stale rule (docs/architecture.md, "Workflow machine"): a change of an artifact
// with a text (an edit, a restart, a retry of failed items) makes what was written
// from it stale (Mark). A stale artifact may be kept or regenerated once the change
// that made it stale, and everything it depends on, are approved (WaitsFor,
// Handleable). The stale list of the last change records how each of its rows was
// handled, is shown once the changed artifact is approved again, and is forgotten
// once every row is handled. Who may keep or regenerate is the machine's (Machine.May,
// from Machine.Keep, KeepAll and Regenerate).

// Staleness keeps the stale artifacts of the runs of one definition and their stale
// list (State.Stale). It needs no clock and no approvers: Machine.Staleness returns
// the machine's, and a renderer may make its own from the definition.
type Staleness struct {
	Def *Definition
}

// Mark marks what depends on artifact id, transitively, after a change of id: an
// artifact written from it (generated, approved or stale already) goes stale; one
// whose options were drawn from it, or that the pipeline is writing from it, goes
// back to pending. It returns the stale ones, in order, and records them in the
// stale list, shown once id is approved again.
func (k Staleness) Mark(s *State, id string) []string {
	var stale []string
	for _, dep := range k.Def.Dependents(id) {
		st := s.Artifacts[dep]
		switch st.Status {
		case StatusGenerated, StatusApproved, StatusStale:
			st.touch()
			st.Status, st.StaleBecause = StatusStale, id
			stale = append(stale, dep)
		case StatusOptionsGenerated, StatusOptionSelected:
			st.touch()
			// A write of it that waits for a confirmation is void: the run layer
			// closes its card (workflowrun, dropStaleAsk).
			st.Status, st.Options, st.Selected, st.Asking = StatusPending, nil, "", false
		case StatusRunning:
			// The pipeline writes it from the old text: that run ends, and it starts
			// again once what it depends on is approved.
			st.touch()
			st.Status, st.Items = StatusPending, nil
		}
	}
	if len(stale) == 0 {
		return nil
	}
	list := &StaleList{Changed: id}
	if old := s.Stale; old != nil {
		for _, r := range old.Rows {
			if r.Done == "" && !slices.Contains(stale, r.Artifact) {
				list.Rows = append(list.Rows, r) // still stale from an earlier change
			}
		}
	}
	for _, dep := range stale {
		list.Rows = append(list.Rows, StaleRow{Artifact: dep})
	}
	if old := s.Stale; old != nil {
		list.Replaces = old.TS // the earlier list's message is closed
		if list.Replaces == "" {
			list.Replaces = old.Replaces
		}
	}
	s.Stale = list
	if s.Artifacts[id].Status == StatusApproved {
		list.Shown = true
	}
	return stale
}

// WaitsFor returns what stale artifact id waits for before it may be kept or
// regenerated: the artifact whose change made it stale, or else the first it depends
// on, that is not approved; "" when none.
func (k Staleness) WaitsFor(s *State, id string) string {
	st := s.Artifacts[id]
	if st == nil {
		return ""
	}
	for _, dep := range append([]string{st.StaleBecause}, k.Def.Dependencies(id)...) {
		if d := s.Artifacts[dep]; d != nil && d.Status != StatusApproved {
			return dep
		}
	}
	return ""
}

// Handleable lists, in order, the stale artifacts that may be kept (keep) or
// regenerated now: Keep all, Regenerate all. Errors: NotCurrent (nothing is stale),
// ChangePending (every stale one waits).
func (k Staleness) Handleable(s *State, keep bool) ([]string, error) {
	var ids []string
	var waiting error
	for _, id := range Next(k.Def, s).Stale {
		if _, _, err := k.ready(s, id, keep); err != nil {
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

// ready returns stale artifact id once it may be kept (keep) or regenerated: the
// artifact whose change made it stale, and every artifact it depends on, are
// approved, so there is something to keep it against and to write it from. An auto
// artifact may be regenerated before its dependencies are approved: it goes back to
// pending and the pipeline writes it once they are. Errors: UnknownArtifact,
// NotCurrent, ChangePending (Source: the first that is not approved).
func (k Staleness) ready(s *State, id string, keep bool) (*Artifact, *ArtifactState, error) {
	a, st, err := s.artifact(k.Def, id, StatusStale)
	if err != nil {
		return nil, nil, err
	}
	w := k.WaitsFor(s, id)
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

// show shows the stale list once the artifact whose change made it is approved.
func (k Staleness) show(s *State) {
	if l := s.Stale; l != nil && !l.Shown && s.Artifacts[l.Changed] != nil && s.Artifacts[l.Changed].Status == StatusApproved {
		l.Shown = true
	}
}

// handled records how stale artifact id was handled (StaleKept, StaleRegenerated),
// and by whom, in the stale list.
func (k Staleness) handled(s *State, id, how, by string) {
	if l := s.Stale; l != nil {
		for i := range l.Rows {
			if l.Rows[i].Artifact == id && l.Rows[i].Done == "" {
				l.Rows[i].Done, l.Rows[i].By = how, by
			}
		}
	}
}

// ForgetList drops the stale list once every row of it is handled (the caller has
// shown it closed).
func (k Staleness) ForgetList(s *State) {
	if s.Stale != nil && !s.Stale.Open() {
		s.Stale = nil
	}
}
