package workflow

// DefaultPassShare is the share of an artifact's non-critical criteria that must pass
// for its evaluation's verdict to pass, when neither the artifact nor the workflow
// sets pass_share (docs/workflows.md, "Verdicts").
const DefaultPassShare = 0.75

// Verdict is the overall result of one evaluation of an artifact's text: it passes
// when every critical criterion passes and at least the pass share of the others do.
type Verdict struct {
	// Pass is the verdict.
	Pass bool
	// Met and Total count the results that passed and all results.
	Met, Total int
	// CriticalFailed lists the critical criteria that failed, in evaluation order.
	CriticalFailed []string
	// Failed are the failing results (critical or not), in evaluation order: the
	// guidance of an automatic revision.
	Failed []CriterionResult
	// Share is the pass share applied to the non-critical results (0..1).
	Share float64
}

// PassShareOf returns the pass share that applies to artifact a: its own pass_share,
// else the workflow's, else DefaultPassShare.
func (d *Definition) PassShareOf(a *Artifact) float64 {
	switch {
	case a != nil && a.PassShare != nil:
		return *a.PassShare
	case d != nil && d.PassShare != nil:
		return *d.PassShare
	}
	return DefaultPassShare
}

// Critical reports whether criterion id of a is marked critical: true. A result
// whose id a does not declare (a check every artifact gets, such as no_placeholders)
// is not critical.
func (a *Artifact) Critical(id string) bool {
	if a == nil {
		return false
	}
	for _, c := range a.Criteria {
		if c.ID == id {
			return c.Critical
		}
	}
	return false
}

// Judge returns the verdict of eval, an evaluation of artifact a of d: pass when every
// critical criterion passes and at least PassShareOf(a) of the non-critical results
// pass (counted exactly: with share 0.75, 3 of 4 pass and 2 of 4 fail). An empty
// evaluation, or one with no non-critical result, passes on its critical criteria
// alone. It is pure: the cards and the automatic revision both read it.
func (d *Definition) Judge(a *Artifact, eval []CriterionResult) Verdict {
	v := Verdict{Total: len(eval), Share: d.PassShareOf(a)}
	var others, othersMet int
	for _, r := range eval {
		if r.Pass {
			v.Met++
		} else {
			v.Failed = append(v.Failed, r)
		}
		if a.Critical(r.ID) {
			if !r.Pass {
				v.CriticalFailed = append(v.CriticalFailed, r.ID)
			}
			continue
		}
		others++
		if r.Pass {
			othersMet++
		}
	}
	// othersMet/others >= share, without a float division's rounding: a share read
	// from YAML such as 0.7 is not exact, so allow for it by a tiny margin.
	shareMet := others == 0 || float64(othersMet) >= v.Share*float64(others)-1e-9
	v.Pass = len(v.CriticalFailed) == 0 && shareMet
	return v
}
