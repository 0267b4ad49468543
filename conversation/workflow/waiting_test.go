package workflow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestWhoAgreesWithMay checks that Who names exactly the people May lets act, for
// every permission, rule and set of deployment approvers: a status line never names
// someone who would be refused, nor leaves out someone who may.
func TestWhoAgreesWithMay(t *testing.T) {
	actors := []string{"U1", "U2", "U3", ""}
	for _, approvers := range [][]string{nil, {"U2"}, {"U1", "U3"}} {
		for _, rule := range []string{workflow.RuleAnyone, workflow.RuleStarter, workflow.RuleApprovers} {
			m := machine(t, approvers...)
			def := *m.Def
			def.Permissions = workflow.Permissions{Approve: rule, Restart: rule, Edit: rule, Cancel: rule}
			m.Def = &def
			s := run(m)
			for _, p := range []workflow.Permission{workflow.PermApprove, workflow.PermKeep, workflow.PermRestart, workflow.PermEdit, workflow.PermCancel} {
				people, anyone := m.Who(s, p)
				for _, actor := range actors {
					allowed := m.May(s, p, actor) == nil
					named := anyone || (actor != "" && slices.Contains(people, actor))
					if allowed != named {
						t.Errorf("approvers %v, rule %s, %s by %q: May allows %v, Who names %v (people %v, anyone %v)", approvers, rule, p, actor, allowed, named, people, anyone)
					}
				}
			}
		}
	}
}

// TestWaiting checks where a run stands: the first artifact not approved, in the
// definition's order, and who its step waits for.
func TestWaiting(t *testing.T) {
	m := machine(t, "U2")
	for _, c := range []struct {
		statuses []string
		want     string
	}{
		{nil, "idea pending bot"},
		{[]string{"idea=options_generated"}, "idea options_generated anyone"},
		{[]string{"idea=option_selected"}, "idea option_selected bot"},
		{[]string{"idea=approved", "plan=generated"}, "plan generated approve [U2]"},
		{[]string{"idea=approved", "plan=stale"}, "plan stale keep [U2]"},
		{[]string{"idea=approved", "plan=approved", "notes=approved", "pitch=approved", "parts=approved", "aside=approved"}, "nothing"},
	} {
		w := m.Waiting(run(m, c.statuses...))
		got := "nothing"
		if w.Artifact != "" {
			got = w.Artifact + " " + string(w.Status)
			switch {
			case w.Bot:
				got += " bot"
			case w.Anyone:
				got += " anyone"
			default:
				got += " " + string(w.Action) + " " + strings.Join([]string{"[", strings.Join(w.People, ","), "]"}, "")
			}
		}
		if got != c.want {
			t.Errorf("%v: waiting %q, want %q", c.statuses, got, c.want)
		}
	}
	cancelled := run(m)
	cancelled.Status = workflow.RunCancelled
	if w := m.Waiting(cancelled); w.Artifact != "" {
		t.Errorf("a cancelled run waits for %q", w.Artifact)
	}
}

// TestSubject checks that a run's subject is its topic, else its first filled
// input, on one line and cut to MaxSubject runes.
func TestSubject(t *testing.T) {
	def := machineDef(t)
	def.Inputs = []workflow.Input{{ID: "audience"}, {ID: "topic"}}
	s := &workflow.State{Inputs: map[string]string{"audience": "nurses", "topic": "night\nshifts"}}
	if got := workflow.Subject(def, s); got != "night shifts" {
		t.Errorf("subject %q, want the topic on one line", got)
	}
	s.Inputs["topic"] = ""
	if got := workflow.Subject(def, s); got != "nurses" {
		t.Errorf("subject %q, want the first filled input", got)
	}
	s.Inputs["audience"] = strings.Repeat("word ", 100)
	if got := workflow.Subject(def, s); len([]rune(got)) > workflow.MaxSubject || !strings.HasSuffix(got, "…") {
		t.Errorf("subject of %d runes %q, want at most %d ending in …", len([]rune(got)), got, workflow.MaxSubject)
	}
}
