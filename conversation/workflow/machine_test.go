package workflow_test

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// machineYAML: a choice artifact, a draft and an auto artifact written from it, and a
// draft written from both; an auto artifact fanning out over the draft's sections;
// and an independent draft.
const machineYAML = `
name: m
title: Machine
description: A workflow for the machine's tests.
artifacts:
  - id: idea
    title: Idea
    mode: choice
    options: 2
  - id: plan
    title: Plan
    depends_on: [idea]
  - id: notes
    title: Notes
    mode: auto
    depends_on: [idea]
  - id: pitch
    title: Pitch
    depends_on: [plan, notes]
  - id: parts
    title: Parts
    mode: auto
    depends_on: [plan]
    foreach: plan
  - id: aside
    title: Aside
report: |
  {{ .Artifacts.pitch }}
`

func machineDef(t *testing.T) *workflow.Definition {
	t.Helper()
	def, err := workflow.Parse("m.yaml", []byte(machineYAML))
	if err != nil {
		t.Fatal(err)
	}
	return def
}

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func machine(t *testing.T, approvers ...string) workflow.Machine {
	return workflow.Machine{Def: machineDef(t), Approvers: approvers, Now: func() time.Time { return epoch }}
}

// run returns a run of m started by U1 with the artifacts in the statuses given as
// "id=status" (the rest pending); written artifacts get a text.
func run(m workflow.Machine, statuses ...string) *workflow.State {
	s := m.NewRun("U1", "en")
	for _, st := range statuses {
		id, status, _ := strings.Cut(st, "=")
		a := s.Artifacts[id]
		a.Status = workflow.ArtifactStatus(status)
		switch a.Status {
		case workflow.StatusOptionsGenerated, workflow.StatusOptionSelected:
			a.Options = []workflow.Option{{Label: "A", Title: "First", Text: "first"}, {Label: "B", Title: "Second", Text: "second"}}
		case workflow.StatusGenerated, workflow.StatusApproved, workflow.StatusStale:
			a.Text = "text of " + id
		}
	}
	if p := s.Artifacts["plan"]; p.Text != "" {
		p.Text = "## One\n\nfirst part\n\n## Two\n\nsecond part\n"
	}
	return s
}

// statuses renders the artifacts' statuses in order, "id=status".
func statuses(m workflow.Machine, s *workflow.State) string {
	var out []string
	for _, id := range m.Def.Order() {
		out = append(out, id+"="+string(s.Artifacts[id].Status))
	}
	return strings.Join(out, " ")
}

func reason(err error) workflow.RefusalReason {
	var r *workflow.Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	if err != nil {
		return "error: " + workflow.RefusalReason(err.Error())
	}
	return ""
}

func TestNext(t *testing.T) {
	m := machine(t)
	for _, tt := range []struct {
		name  string
		state []string
		want  workflow.Plan
	}{
		{"Fresh", nil, workflow.Plan{Propose: "idea", Waits: map[string][]string{
			"plan": {"idea"}, "notes": {"idea"}, "pitch": {"idea", "plan", "notes"}, "parts": {"idea", "plan"}, "aside": {"idea"}}}},
		{"OptionsShown", []string{"idea=options_generated"}, workflow.Plan{Review: "idea", Waits: map[string][]string{
			"plan": {"idea"}, "notes": {"idea"}, "pitch": {"idea", "plan", "notes"}, "parts": {"idea", "plan"}, "aside": {"idea"}}}},
		// People work in order: notes (auto) waits for plan, the person's artifact
		// before it, although what notes depends on is approved.
		{"IdeaApproved", []string{"idea=approved"}, workflow.Plan{Write: "plan", Waits: map[string][]string{
			"notes": {"plan"}, "pitch": {"plan", "notes"}, "parts": {"plan"}, "aside": {"plan"}}}},
		{"PlanUnderReview", []string{"idea=approved", "plan=generated"}, workflow.Plan{Review: "plan",
			Waits: map[string][]string{"notes": {"plan"}, "pitch": {"plan", "notes"}, "parts": {"plan"}, "aside": {"plan"}}}},
		// Independent auto artifacts start together.
		{"PlanApproved", []string{"idea=approved", "plan=approved"}, workflow.Plan{Start: []string{"notes"},
			Waits: map[string][]string{"pitch": {"notes"}, "parts": {"pitch"}, "aside": {"pitch"}}}},
		{"NotesRunning", []string{"idea=approved", "plan=approved", "notes=running"}, workflow.Plan{Running: []string{"notes"},
			Waits: map[string][]string{"pitch": {"notes"}, "parts": {"pitch"}, "aside": {"pitch"}}}},
		{"PitchUnderReview", []string{"idea=approved", "plan=approved", "notes=approved", "pitch=generated"}, workflow.Plan{Review: "pitch",
			Waits: map[string][]string{"parts": {"pitch"}, "aside": {"pitch"}}}},
		{"PitchApproved", []string{"idea=approved", "plan=approved", "notes=approved", "pitch=approved"}, workflow.Plan{Start: []string{"parts"}, Write: "aside",
			Waits: map[string][]string{}}},
		// A stale artifact waits for Keep or Regenerate; what depends on it waits with
		// it (and, people working in order, what comes after a person's artifact that
		// waits).
		{"Stale", []string{"idea=approved", "plan=stale", "notes=approved"}, workflow.Plan{Stale: []string{"plan"},
			Waits: map[string][]string{"pitch": {"plan"}, "parts": {"pitch", "plan"}, "aside": {"pitch"}}}},
		{"StaleAuto", []string{"idea=approved", "plan=approved", "notes=stale"}, workflow.Plan{Stale: []string{"notes"},
			Waits: map[string][]string{"pitch": {"notes"}, "parts": {"pitch"}, "aside": {"pitch"}}}},
		{"OnlyStaleLeft", []string{"idea=approved", "plan=approved", "notes=approved", "pitch=stale", "parts=approved", "aside=approved"},
			workflow.Plan{Stale: []string{"pitch"}, Waits: map[string][]string{}}},
		{"Done", []string{"idea=approved", "plan=approved", "notes=approved", "pitch=approved", "parts=approved", "aside=approved"},
			workflow.Plan{Done: true, Waits: map[string][]string{}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := workflow.Next(m.Def, run(m, tt.state...))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Next =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestNextAsking: a draft whose write waits for a person's confirmation of a tool
// call (ArtifactState.Asking) is not written again: people act on it, and what comes
// after it waits.
func TestNextAsking(t *testing.T) {
	m := machine(t)
	s := run(m, "idea=approved")
	s.Artifacts["plan"].Asking = true
	want := workflow.Plan{Review: "plan", Waits: map[string][]string{
		"notes": {"plan"}, "pitch": {"plan", "notes"}, "parts": {"plan"}, "aside": {"plan"}}}
	if got := workflow.Next(m.Def, s); !reflect.DeepEqual(got, want) {
		t.Errorf("Next =\n%+v\nwant\n%+v", got, want)
	}
}

// TestTransitions applies one transition to a run in a given state, by an actor, and
// checks the statuses after it, or the refusal; a refused transition changes nothing.
func TestTransitions(t *testing.T) {
	opts := []workflow.Option{{Label: "A", Text: "a"}, {Label: "B", Text: "b"}}
	eval := []workflow.CriterionResult{{ID: "c", Pass: true}}
	for _, tt := range []struct {
		name      string
		approvers []string
		state     []string
		do        func(m workflow.Machine, s *workflow.State) error
		want      string                 // statuses after, when it succeeds
		refused   workflow.RefusalReason // or the reason it is refused
	}{
		{"Proposed", nil, nil, func(m workflow.Machine, s *workflow.State) error { return m.Proposed(s, "idea", opts) },
			"idea=options_generated plan=pending notes=pending pitch=pending parts=pending aside=pending", ""},
		{"ProposedAgain", nil, []string{"idea=options_generated"}, func(m workflow.Machine, s *workflow.State) error { return m.Proposed(s, "idea", opts) },
			"idea=options_generated plan=pending notes=pending pitch=pending parts=pending aside=pending", ""},
		{"ProposedForAReviewedText", nil, []string{"idea=generated"}, func(m workflow.Machine, s *workflow.State) error { return m.Proposed(s, "idea", opts) },
			"", workflow.NotCurrent},
		{"Pick", nil, []string{"idea=options_generated"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Pick(s, "idea", "b"); return err },
			"idea=option_selected plan=pending notes=pending pitch=pending parts=pending aside=pending", ""},
		{"PickNoSuchOption", nil, []string{"idea=options_generated"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Pick(s, "idea", "Z"); return err },
			"", workflow.NoSuchOption},
		{"PickWithoutOptions", nil, nil, func(m workflow.Machine, s *workflow.State) error { _, err := m.Pick(s, "idea", "A"); return err },
			"", workflow.NotCurrent},
		{"WrittenForReview", nil, []string{"idea=option_selected"}, func(m workflow.Machine, s *workflow.State) error {
			_, err := m.Written(s, "idea", "t", eval, "U1", "written")
			return err
		}, "idea=generated plan=pending notes=pending pitch=pending parts=pending aside=pending", ""},
		{"WrittenAutoIsApproved", nil, []string{"idea=approved"}, func(m workflow.Machine, s *workflow.State) error {
			_, err := m.Written(s, "notes", "t", nil, "", "written")
			return err
		}, "idea=approved plan=pending notes=approved pitch=pending parts=pending aside=pending", ""},
		{"WrittenUnknown", nil, nil, func(m workflow.Machine, s *workflow.State) error {
			_, err := m.Written(s, "nope", "t", nil, "", "")
			return err
		},
			"", workflow.UnknownArtifact},
		{"Approve", nil, []string{"idea=generated"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Approve(s, "idea", "U2"); return err },
			"idea=approved plan=pending notes=pending pitch=pending parts=pending aside=pending", ""},
		{"ApproveTwice", nil, []string{"idea=approved"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Approve(s, "idea", "U1"); return err },
			"", workflow.NotCurrent},
		{"ApproveNotAnApprover", []string{"UBOSS"}, []string{"idea=generated"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Approve(s, "idea", "U1"); return err },
			"", workflow.NotAllowed},
		{"ApproveByAnApprover", []string{"UBOSS"}, []string{"idea=generated"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Approve(s, "idea", "UBOSS"); return err },
			"idea=approved plan=pending notes=pending pitch=pending parts=pending aside=pending", ""},
		// Keeping a stale artifact approves it: only approvers may (a Keep click used to
		// bypass them).
		{"KeepNotAnApprover", []string{"UBOSS"}, []string{"idea=approved", "plan=stale"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Keep(s, "plan", "U1"); return err },
			"", workflow.NotAllowed},
		{"Keep", []string{"UBOSS"}, []string{"idea=approved", "plan=stale"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Keep(s, "plan", "UBOSS"); return err },
			"idea=approved plan=approved notes=pending pitch=pending parts=pending aside=pending", ""},
		{"KeepNotStale", nil, []string{"idea=approved", "plan=generated"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Keep(s, "plan", "U1"); return err },
			"", workflow.NotCurrent},
		{"KeepAllNotAnApprover", []string{"UBOSS"}, []string{"idea=approved", "plan=stale", "notes=stale"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.KeepAll(s, "U1"); return err },
			"", workflow.NotAllowed},
		{"KeepAll", nil, []string{"idea=approved", "plan=stale", "notes=stale"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.KeepAll(s, "U1"); return err },
			"idea=approved plan=approved notes=approved pitch=pending parts=pending aside=pending", ""},
		{"KeepAllNothingStale", nil, []string{"idea=approved"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.KeepAll(s, "U1"); return err },
			"", workflow.NotCurrent},
		{"RegenerateAuto", nil, []string{"idea=approved", "notes=stale"}, func(m workflow.Machine, s *workflow.State) error {
			_, err := m.Regenerate(s, "notes", "U1", "shorter")
			return err
		},
			"idea=approved plan=pending notes=pending pitch=pending parts=pending aside=pending", ""},
		{"RegenerateDraftStaysStaleUntilWritten", nil, []string{"idea=approved", "plan=stale"}, func(m workflow.Machine, s *workflow.State) error {
			_, err := m.Regenerate(s, "plan", "U1", "")
			return err
		},
			"idea=approved plan=stale notes=pending pitch=pending parts=pending aside=pending", ""},
		{"RegenerateNotStale", nil, []string{"idea=approved", "plan=approved"}, func(m workflow.Machine, s *workflow.State) error {
			_, err := m.Regenerate(s, "plan", "U1", "")
			return err
		},
			"", workflow.NotCurrent},
		// An edited auto artifact is approved as it is: editing it takes MayApprove.
		{"EditAutoNotAnApprover", []string{"UBOSS"}, []string{"idea=approved", "notes=approved"}, func(m workflow.Machine, s *workflow.State) error { return m.CheckEdit(s, "notes", "U1") },
			"", workflow.NotAllowed},
		{"EditAutoByAnApprover", []string{"UBOSS"}, []string{"idea=approved", "notes=approved"}, func(m workflow.Machine, s *workflow.State) error { return m.CheckEdit(s, "notes", "UBOSS") },
			"idea=approved plan=pending notes=approved pitch=pending parts=pending aside=pending", ""},
		// pitch is written from plan: while plan is stale there is nothing to keep
		// pitch against, nor to write it from.
		{"KeepWhileADependencyIsStale", nil, []string{"idea=approved", "plan=stale", "notes=approved", "pitch=stale"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Keep(s, "pitch", "U1"); return err },
			"", workflow.ChangePending},
		{"RegenerateWhileADependencyIsStale", nil, []string{"idea=approved", "plan=stale", "notes=approved", "pitch=stale"}, func(m workflow.Machine, s *workflow.State) error {
			_, err := m.Regenerate(s, "pitch", "U1", "")
			return err
		}, "", workflow.ChangePending},
		{"KeepAllSkipsWaiting", nil, []string{"idea=approved", "plan=stale", "notes=approved", "pitch=stale"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.KeepAll(s, "U1"); return err },
			"idea=approved plan=approved notes=approved pitch=stale parts=pending aside=pending", ""},
		{"EditNoText", nil, nil, func(m workflow.Machine, s *workflow.State) error { return m.CheckEdit(s, "idea", "U1") },
			"", workflow.NoText},
		{"EditRunning", nil, []string{"idea=approved", "notes=running"}, func(m workflow.Machine, s *workflow.State) error { return m.CheckEdit(s, "notes", "U1") },
			"", workflow.BeingWritten},
		{"EditedApprovedMakesDependentsStale", nil, []string{"idea=approved", "plan=approved", "notes=approved", "pitch=generated", "parts=running"},
			func(m workflow.Machine, s *workflow.State) error {
				_, err := m.Edited(s, "idea", "new", eval, "U1", "edited")
				return err
			},
			"idea=generated plan=stale notes=stale pitch=stale parts=pending aside=pending", ""},
		{"RestartWithText", nil, []string{"idea=approved", "plan=approved", "notes=approved"}, func(m workflow.Machine, s *workflow.State) error { _, err := m.Restart(s, "idea", "U1"); return err },
			"idea=pending plan=stale notes=stale pitch=pending parts=pending aside=pending", ""},
		{"RestartUnknown", nil, nil, func(m workflow.Machine, s *workflow.State) error { _, err := m.Restart(s, "nope", "U1"); return err },
			"", workflow.UnknownArtifact},
		{"Cancel", nil, nil, func(m workflow.Machine, s *workflow.State) error { return m.Cancel(s, "U1") },
			"idea=pending plan=pending notes=pending pitch=pending parts=pending aside=pending", ""},
		{"Complete", nil, []string{"idea=generated"}, func(m workflow.Machine, s *workflow.State) error { return m.Complete(s) },
			"", workflow.NotCurrent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := machine(t, tt.approvers...)
			s := run(m, tt.state...)
			before := s.Clone()
			err := tt.do(m, s)
			if got := reason(err); got != tt.refused {
				t.Fatalf("refusal %q; want %q", got, tt.refused)
			}
			if err != nil {
				if !reflect.DeepEqual(s, before) {
					t.Fatalf("a refused transition changed the state:\n%+v\nwas\n%+v", s, before)
				}
				return
			}
			if got := statuses(m, s); got != tt.want {
				t.Fatalf("statuses %s; want %s", got, tt.want)
			}
		})
	}
}

// TestRevisionsAndRev: a transition that changes an artifact bumps its Rev (buttons
// drawn before are out of date) and records a revision by its actor.
func TestRevisionsAndRev(t *testing.T) {
	m := machine(t)
	s := run(m, "idea=generated")
	rev0 := s.Artifacts["idea"].Rev
	r, err := m.Approve(s, "idea", "U2")
	if err != nil {
		t.Fatal(err)
	}
	want := workflow.Revision{Artifact: "idea", Number: 1, Status: workflow.StatusApproved, By: "U2", Why: "approved", At: epoch}
	if r != want {
		t.Errorf("revision %+v; want %+v", r, want)
	}
	if s.Artifacts["idea"].Rev != rev0+1 {
		t.Errorf("Rev %d; want %d", s.Artifacts["idea"].Rev, rev0+1)
	}
	if err := m.Current(s, "idea", rev0); reason(err) != workflow.NotCurrent {
		t.Errorf("a click drawn for the old Rev = %v; want NotCurrent", err)
	}
	if err := m.Current(s, "idea", rev0+1); err != nil {
		t.Errorf("a click drawn for the new Rev = %v", err)
	}
}

// TestMay checks every action under every rule, for the starter (U1), a bystander
// (U9) and a deployment approver (UBOSS), with and without APPROVER_USER_IDS.
func TestMay(t *testing.T) {
	const starter, bystander, boss = "U1", "U9", "UBOSS"
	perms := []workflow.Permission{workflow.PermApprove, workflow.PermKeep, workflow.PermRestart, workflow.PermEdit, workflow.PermCancel}
	set := func(d *workflow.Definition, p workflow.Permission, rule string) {
		switch p {
		case workflow.PermApprove, workflow.PermKeep:
			d.Permissions.Approve = rule // keep follows approve
		case workflow.PermRestart:
			d.Permissions.Restart = rule
		case workflow.PermEdit:
			d.Permissions.Edit = rule
		case workflow.PermCancel:
			d.Permissions.Cancel = rule
		}
	}
	approving := func(p workflow.Permission) bool { return p == workflow.PermApprove || p == workflow.PermKeep }
	for _, p := range perms {
		for _, rule := range []string{"", workflow.RuleAnyone, workflow.RuleStarter, workflow.RuleApprovers} {
			for _, withBoss := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/approvers=%v", p, cmp.Or(rule, "default"), withBoss)
				t.Run(name, func(t *testing.T) {
					var ids []string
					if withBoss {
						ids = []string{boss}
					}
					m := machine(t, ids...)
					set(m.Def, p, rule)
					s := run(m)
					effective := m.Def.Rule(p)
					if rule == "" {
						want := workflow.RuleStarter
						if approving(p) {
							want = workflow.RuleAnyone
						}
						if effective != want {
							t.Fatalf("default rule %q; want %q", effective, want)
						}
					}
					// Who may, by the documented rules.
					var want map[string]bool
					switch {
					case withBoss && approving(p):
						want = map[string]bool{boss: true}
					case effective == workflow.RuleAnyone:
						want = map[string]bool{starter: true, bystander: true, boss: true}
					case effective == workflow.RuleApprovers && withBoss:
						want = map[string]bool{boss: true}
					default: // starter, or approvers without any: the starter (and approvers)
						want = map[string]bool{starter: true, boss: withBoss}
					}
					for _, actor := range []string{starter, bystander, boss} {
						err := m.May(s, p, actor)
						if got := err == nil; got != want[actor] {
							t.Errorf("%s may: %v (%v); want %v", actor, got, err, want[actor])
						}
						var r *workflow.Refusal
						if errors.As(err, &r) {
							if r.Reason != workflow.NotAllowed || r.Action != p {
								t.Errorf("refusal %+v; want NotAllowed for %s", r, p)
							}
							if r.StartedBy == "" && len(r.Approvers) == 0 {
								t.Errorf("refusal %+v names nobody who may", r)
							}
						}
					}
				})
			}
		}
	}
	t.Run("ApproversShorthand", func(t *testing.T) {
		m := machine(t)
		m.Def.Approvers = workflow.RuleStarter
		s := run(m)
		if err := m.May(s, workflow.PermApprove, bystander); reason(err) != workflow.NotAllowed {
			t.Errorf("approvers: starter, a bystander approves: %v", err)
		}
		if err := m.May(s, workflow.PermKeep, bystander); reason(err) != workflow.NotAllowed {
			t.Errorf("approvers: starter, a bystander keeps: %v", err)
		}
		if err := m.May(s, workflow.PermApprove, starter); err != nil {
			t.Errorf("approvers: starter, the starter approves: %v", err)
		}
	})
}

// TestTransitionsCheckPermissions: the transitions a permission rules refuse a
// bystander under the defaults and change nothing.
func TestTransitionsCheckPermissions(t *testing.T) {
	m := machine(t)
	for name, do := range map[string]func(s *workflow.State) error{
		"Cancel":  func(s *workflow.State) error { return m.Cancel(s, "U9") },
		"Restart": func(s *workflow.State) error { _, err := m.Restart(s, "idea", "U9"); return err },
		"Edit":    func(s *workflow.State) error { return m.CheckEdit(s, "idea", "U9") },
		"Edited": func(s *workflow.State) error {
			_, err := m.Edited(s, "idea", "mine now", nil, "U9", "edited")
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := run(m, "idea=approved", "plan=approved")
			before := s.Clone()
			if err := do(s); reason(err) != workflow.NotAllowed {
				t.Fatalf("bystander: %v; want NotAllowed", err)
			}
			if !reflect.DeepEqual(s, before) {
				t.Errorf("a refused transition changed the run")
			}
		})
	}
}

// TestStaleListShownOnceApprovedAgain: the artifacts a restart makes stale are listed
// only once the restarted artifact is approved again (keeping one before would keep
// it against a text that does not exist yet); each row records how it was handled.
func TestStaleListShownOnceApprovedAgain(t *testing.T) {
	m := machine(t)
	s := run(m, "idea=approved", "plan=approved", "notes=approved")
	if _, err := m.Restart(s, "idea", "U1"); err != nil {
		t.Fatal(err)
	}
	l := s.Stale
	if l == nil || l.Changed != "idea" || l.Shown || len(l.Rows) != 2 {
		t.Fatalf("stale list after a restart %+v; want plan and notes, not shown", l)
	}
	// Until the new idea is approved there is nothing to keep plan against or
	// regenerate it from: every way of handling it is refused and changes nothing.
	before := s.Clone()
	for name, do := range map[string]func() error{
		"Keep":          func() error { _, err := m.Keep(s, "plan", "U1"); return err },
		"KeepAll":       func() error { _, err := m.KeepAll(s, "U1"); return err },
		"Regenerate":    func() error { _, err := m.Regenerate(s, "notes", "U1", ""); return err },
		"RegenerateAll": func() error { _, err := m.Staleness().Handleable(s, false); return err },
	} {
		var r *workflow.Refusal
		if err := do(); !errors.As(err, &r) || r.Reason != workflow.ChangePending || r.Source != "idea" {
			t.Fatalf("%s before the new idea is approved: %v; want change_pending of idea", name, err)
		}
		if !reflect.DeepEqual(s, before) {
			t.Fatalf("a refused %s changed the state", name)
		}
	}
	if err := m.Proposed(s, "idea", []workflow.Option{{Label: "A"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Pick(s, "idea", "A"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Written(s, "idea", "new idea", nil, "U1", "written"); err != nil {
		t.Fatal(err)
	}
	if s.Stale.Shown {
		t.Fatal("stale list shown before the new idea was approved")
	}
	if _, err := m.Approve(s, "idea", "U1"); err != nil {
		t.Fatal(err)
	}
	if !s.Stale.Shown || !s.Stale.Open() {
		t.Fatalf("stale list after approval %+v; want shown and open", s.Stale)
	}
	if _, err := m.Keep(s, "plan", "U2"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Regenerate(s, "notes", "U3", ""); err != nil {
		t.Fatal(err)
	}
	want := []workflow.StaleRow{{Artifact: "plan", Done: workflow.StaleKept, By: "U2"}, {Artifact: "notes", Done: workflow.StaleRegenerated, By: "U3"}}
	if !reflect.DeepEqual(s.Stale.Rows, want) || s.Stale.Open() {
		t.Fatalf("rows %+v; want %+v, closed", s.Stale.Rows, want)
	}
}

// TestPipelineBookkeeping: an auto artifact fans out over its foreach source's items,
// records each item's end, and is approved with the results joined once every item
// has ended.
func TestPipelineBookkeeping(t *testing.T) {
	m := machine(t)
	s := run(m, "idea=approved", "plan=approved")
	items, err := m.Pipeline().ItemsOf(s, "parts")
	if err != nil || len(items) != 2 || items[0].Title != "One" || items[1].Brief != "second part" {
		t.Fatalf("ItemsOf = %+v, %v", items, err)
	}
	if err := m.Pipeline().Started(s, "parts", items); err != nil {
		t.Fatal(err)
	}
	if s.Artifacts["parts"].Status != workflow.StatusRunning || s.Pipeline == nil || s.Pipeline.Artifacts[0] != "parts" {
		t.Fatalf("after Started: %s, pipeline %+v", s.Artifacts["parts"].Status, s.Pipeline)
	}
	m.Pipeline().RecordItem(s, "parts", 0, workflow.ItemEnd{Step: true, Attempts: 1, Failures: []string{"no luck"}})
	m.Pipeline().RecordItem(s, "parts", 0, workflow.ItemEnd{Text: "part one", Attempts: 2})
	if m.Pipeline().Finished(s) != "" {
		t.Fatal("finished with an item pending")
	}
	m.Pipeline().RecordItem(s, "parts", 1, workflow.ItemEnd{Cut: true, Interrupted: true, TimeoutReason: "too slow"})
	m.Pipeline().RecordItem(s, "parts", 1, workflow.ItemEnd{Cut: true, Interrupted: true, TimeoutReason: "too slow"})
	if it := s.Artifacts["parts"].Items[1]; it.Status != workflow.ItemFailed || it.Reason != "too slow" {
		t.Fatalf("item cut twice: %+v; want failed", it)
	}
	if m.Pipeline().Finished(s) != "parts" {
		t.Fatal("not finished with every item ended")
	}
	rev, err := m.Pipeline().Completed(s, "parts", nil)
	if err != nil {
		t.Fatal(err)
	}
	st := s.Artifacts["parts"]
	if st.Status != workflow.StatusApproved || !strings.Contains(st.Text, "## One\n\npart one") || !strings.Contains(st.Text, "_No result: too slow_") ||
		rev.Why != "written by the pipeline (1 of 2 items failed)" {
		t.Fatalf("completed: %s %q, revision %q", st.Status, st.Text, rev.Why)
	}

	noItems := run(m, "idea=approved", "plan=approved")
	noItems.Artifacts["plan"].Text = "one paragraph"
	if _, err := m.Pipeline().ItemsOf(noItems, "parts"); reason(err) != workflow.NoItems {
		t.Fatalf("ItemsOf a text without items = %v; want NoItems", err)
	}
}

// TestPipelineStopContinue: a run stopped waits for Continue; stopping it again does
// nothing; Continue of a run that is not stopped, or of another run, is out of date.
func TestPipelineStopContinue(t *testing.T) {
	m := machine(t)
	s := run(m, "idea=approved")
	if err := m.Pipeline().Started(s, "notes", []workflow.ItemState{{Title: "Notes", Status: workflow.ItemPending}}); err != nil {
		t.Fatal(err)
	}
	id := s.Pipeline.ID
	if err := m.Pipeline().Continue(s, id); reason(err) != workflow.NotCurrent {
		t.Errorf("Continue of a running run = %v", err)
	}
	if err := m.Pipeline().Stop(s, "other", "U1"); reason(err) != workflow.NotCurrent {
		t.Errorf("Stop of another run = %v", err)
	}
	if err := m.Pipeline().Stop(s, id, "U1"); err != nil || !s.Pipeline.Stopped() {
		t.Fatalf("Stop = %v, stopped %v", err, s.Pipeline.Stopped())
	}
	if err := m.Pipeline().Stop(s, id, "U2"); err != nil || s.Pipeline.StoppedBy != "U1" {
		t.Errorf("second Stop = %v, by %q; want nothing changed", err, s.Pipeline.StoppedBy)
	}
	if err := m.Pipeline().Continue(s, id); err != nil || s.Pipeline.Stopped() {
		t.Errorf("Continue = %v, stopped %v", err, s.Pipeline.Stopped())
	}
	m.Pipeline().Halt(s, "it failed 3 times")
	if !s.Pipeline.Stopped() {
		t.Error("a halted run is not stopped")
	}
}

// TestPipelineRetryFailed: Retry of an auto artifact's failed items runs them again
// and only them; what was written from it goes stale and is listed once it is
// approved again; an artifact without failed items, or already running again, is out
// of date.
func TestPipelineRetryFailed(t *testing.T) {
	m := machine(t)
	s := run(m, "idea=approved", "plan=approved", "notes=approved", "pitch=approved", "parts=approved")
	s.Artifacts["notes"].Items = []workflow.ItemState{{Title: "Notes", Status: workflow.ItemFailed, Reason: "down", Attempts: 3, Failures: []string{"a", "b", "down"}}}
	s.Artifacts["parts"].Items = []workflow.ItemState{{Title: "One", Status: workflow.ItemDone, Text: "part one", Attempts: 1}}
	if _, err := m.Pipeline().RetryFailed(s, "notes", "U9"); reason(err) != workflow.NotAllowed {
		t.Fatalf("RetryFailed by someone who may not restart = %v; want NotAllowed", err)
	}
	if _, err := m.Pipeline().RetryFailed(s, "parts", "U1"); reason(err) != workflow.NotCurrent {
		t.Fatalf("RetryFailed without failed items = %v; want NotCurrent", err)
	}
	if _, err := m.Pipeline().RetryFailed(s, "plan", "U1"); reason(err) != workflow.NotCurrent {
		t.Fatalf("RetryFailed of a draft = %v; want NotCurrent", err)
	}
	rev0 := s.Artifacts["notes"].Rev
	rev, err := m.Pipeline().RetryFailed(s, "notes", "U1")
	if err != nil {
		t.Fatal(err)
	}
	st := s.Artifacts["notes"]
	if st.Status != workflow.StatusRunning || st.Rev == rev0 || st.Items[0].Status != workflow.ItemPending || st.Items[0].Attempts != 0 || st.Items[0].Failures != nil {
		t.Fatalf("after RetryFailed: %s rev %d, item %+v", st.Status, st.Rev, st.Items[0])
	}
	if rev.By != "U1" || rev.Why != "failed items retried" || s.Pipeline == nil || s.Pipeline.Artifacts[0] != "notes" {
		t.Fatalf("revision %+v, pipeline %+v", rev, s.Pipeline)
	}
	if s.Artifacts["pitch"].Status != workflow.StatusStale || s.Stale == nil || s.Stale.Shown {
		t.Fatalf("pitch %s, stale list %+v; want stale, listed once notes is approved", s.Artifacts["pitch"].Status, s.Stale)
	}
	if _, err := m.Pipeline().RetryFailed(s, "notes", "U1"); reason(err) != workflow.NotCurrent {
		t.Fatalf("RetryFailed while running = %v; want NotCurrent", err)
	}
	m.Pipeline().RecordItem(s, "notes", 0, workflow.ItemEnd{Text: "the notes", Attempts: 1})
	if _, err := m.Pipeline().Completed(s, "notes", nil); err != nil {
		t.Fatal(err)
	}
	if st.Text != "the notes" || !s.Stale.Shown {
		t.Fatalf("completed again: %q, stale list shown %v", st.Text, s.Stale.Shown)
	}
}

// TestPipelineTaint: an item's taint and refused calls are recorded on its artifact
// (a failed try's refusals too, its taint not: its text is not kept), survive the
// checkpoint's JSON and Clone, make every later write read tainted content, and are
// cleared when the artifact runs again.
func TestPipelineTaint(t *testing.T) {
	m := machine(t)
	s := run(m, "idea=approved", "plan=approved")
	items, _ := m.Pipeline().ItemsOf(s, "parts")
	if err := m.Pipeline().Started(s, "parts", items); err != nil {
		t.Fatal(err)
	}
	if s.ReadsTainted("parts") || s.ReadsTainted("idea") {
		t.Fatal("a run without untrusted content reads tainted content")
	}
	refused := workflow.RefusedCall{Tool: "crm__note", Reason: "after_untrusted_content"}
	m.Pipeline().RecordItem(s, "parts", 0, workflow.ItemEnd{Reason: "no luck", Attempts: 1, Tainted: true, Refused: []workflow.RefusedCall{refused}})
	if st := s.Artifacts["parts"]; st.Tainted || !reflect.DeepEqual(st.Refused, []workflow.RefusedCall{refused}) {
		t.Fatalf("after a failed item: tainted %v, refused %+v; want untainted, the refusal kept", st.Tainted, st.Refused)
	}
	m.Pipeline().RecordItem(s, "parts", 1, workflow.ItemEnd{Text: "part two", Attempts: 1, Tainted: true, Refused: []workflow.RefusedCall{refused}})
	var back workflow.State
	b, _ := json.Marshal(s.Clone())
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if st := back.Artifacts["parts"]; !st.Tainted || len(st.Refused) != 1 {
		t.Fatalf("checkpointed: tainted %v, refused %+v; want tainted, one refusal", st.Tainted, st.Refused)
	}
	// Its own text (a rewrite) is tainted; an approved one is in every prompt.
	if !back.ReadsTainted("parts") {
		t.Error("parts' rewrite does not read its own tainted text")
	}
	if back.ReadsTainted("idea") {
		t.Error("idea reads parts, which is not approved yet")
	}
	back.Artifacts["parts"].Status = workflow.StatusApproved
	if !back.ReadsTainted("idea") {
		t.Error("idea does not read the approved, tainted parts")
	}
	s.Artifacts["parts"].Status = workflow.StatusPending
	if err := m.Pipeline().Started(s, "parts", items); err != nil {
		t.Fatal(err)
	}
	if st := s.Artifacts["parts"]; st.Tainted || st.Refused != nil {
		t.Errorf("run again: tainted %v, refused %+v; want both cleared", st.Tainted, st.Refused)
	}
}

// TestChangesEndAsking: a write that waits for a confirmation (Asking) is void once
// its artifact is sent back: by a restart of it, or by a change of what it is drawn
// from (Mark resets a choice to pending).
func TestChangesEndAsking(t *testing.T) {
	def, err := workflow.Parse("a.yaml", []byte(`
name: a
title: Asking
artifacts:
  - id: brief
    title: Brief
  - id: angle
    title: Angle
    mode: choice
    depends_on: [brief]
`))
	if err != nil {
		t.Fatal(err)
	}
	m := workflow.Machine{Def: def, Now: func() time.Time { return epoch }}
	asking := func() *workflow.State {
		s := m.NewRun("U1", "en")
		s.Artifacts["brief"].Status, s.Artifacts["brief"].Text = workflow.StatusApproved, "the brief"
		a := s.Artifacts["angle"]
		a.Status, a.Selected, a.Asking = workflow.StatusOptionSelected, "A", true
		a.Options = []workflow.Option{{Label: "A", Title: "First", Text: "first"}}
		return s
	}
	s := asking()
	m.Staleness().Mark(s, "brief")
	if a := s.Artifacts["angle"]; a.Status != workflow.StatusPending || a.Asking {
		t.Errorf("after a change of brief: angle %q, asking %v; want pending, not asking", a.Status, a.Asking)
	}
	s = asking()
	if _, err := m.Restart(s, "angle", "U1"); err != nil {
		t.Fatal(err)
	}
	if a := s.Artifacts["angle"]; a.Asking {
		t.Error("a restarted artifact still asks")
	}
}
