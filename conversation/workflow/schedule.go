package workflow

import "slices"

// The scheduling rule (docs/architecture.md, "Scheduling rule"), in one place, Next:
// artifacts are taken in Order. An approved artifact is done; a stale one waits for
// Keep or Regenerate, and only what depends on it waits with it. An artifact whose
// dependencies are not all approved waits for them. People work on one artifact at a
// time, in order: the first person's artifact (choice or draft) that is not approved
// or stale is the one they act on (its options or its text), and every artifact after
// it waits for it. An auto artifact whose dependencies are approved, and that no
// person's artifact before it holds back, starts at once; independent auto artifacts
// run together.

// Plan is what a run does next, by the scheduling rule.
type Plan struct {
	// Propose is the choice artifact whose options are to be proposed now, Write the
	// draft artifact to write now ("" for none; at most one of them is set, and then
	// Review is empty).
	Propose, Write string
	// Review is the person's artifact people act on now (its options are shown, or
	// its text awaits review), "" for none.
	Review string
	// Start are the auto artifacts to start now; Running those the pipeline writes.
	Start, Running []string
	// Stale are the artifacts waiting for Keep or Regenerate.
	Stale []string
	// Waits maps each artifact that cannot be produced yet to what it waits for: its
	// dependencies that are not approved, or the person's artifact before it.
	Waits map[string][]string
	// Done is true when every artifact is approved: the report is due.
	Done bool
}

// Busy reports whether something runs or waits for people (nothing is left to the
// stale artifacts alone).
func (p Plan) Busy() bool {
	return p.Propose != "" || p.Write != "" || p.Review != "" || len(p.Start) > 0 || len(p.Running) > 0
}

// Next applies the scheduling rule to s.
func Next(def *Definition, s *State) Plan {
	p := Plan{Waits: map[string][]string{}, Done: true}
	held := "" // the person's artifact later artifacts wait for
	for _, id := range def.Order() {
		a, _ := def.Artifact(id)
		st := s.Artifacts[id]
		if st == nil {
			continue
		}
		if st.Status != StatusApproved {
			p.Done = false
		}
		switch st.Status {
		case StatusApproved:
			continue
		case StatusStale:
			p.Stale = append(p.Stale, id)
			continue
		case StatusRunning:
			p.Running = append(p.Running, id)
			continue
		}
		var waits []string
		if held != "" {
			waits = append(waits, held)
		}
		for _, dep := range def.Dependencies(id) {
			if d := s.Artifacts[dep]; d == nil || d.Status != StatusApproved {
				if !slices.Contains(waits, dep) {
					waits = append(waits, dep)
				}
			}
		}
		person := a.Mode != ModeAuto
		switch {
		case len(waits) > 0:
			p.Waits[id] = waits
		case !person:
			p.Start = append(p.Start, id) // pending, dependencies approved
		case st.Status != StatusPending || st.Asking:
			p.Review = id // a person reviews it, or confirms its writer's tool call
		case a.Mode == ModeChoice:
			p.Propose = id
		default:
			p.Write = id
		}
		if person && held == "" {
			held = id
		}
	}
	return p
}
