package workflowrun

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestWorkflowEvents: the events of a change of a run's state, in order.
func TestWorkflowEvents(t *testing.T) {
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	def := &workflow.Definition{Name: "wf", Artifacts: []workflow.Artifact{{ID: "b"}, {ID: "a"}}}
	run := func(status workflow.RunStatus, arts map[string]workflow.ArtifactState) *workflow.State {
		s := &workflow.State{Name: "wf", Status: status, Artifacts: map[string]*workflow.ArtifactState{}}
		for id, a := range arts {
			s.Artifacts[id] = &a
		}
		return s
	}
	type arts = map[string]workflow.ArtifactState
	pending := workflow.ArtifactState{Status: workflow.StatusPending}
	failed := &conversation.Input{ID: "in1"}
	for _, tc := range []struct {
		name                 string
		prev, next           *workflow.State
		prevRetry, nextRetry *conversation.Input
		want                 string
	}{
		{"NoRun", nil, nil, nil, nil, ""},
		{"Started", nil, run(workflow.RunRunning, arts{"a": pending, "b": pending}), nil, nil, "run.started"},
		{"Unchanged", run(workflow.RunRunning, arts{"a": pending}), run(workflow.RunRunning, arts{"a": pending}), nil, nil, ""},
		{"OptionsAreNotEvents", run(workflow.RunRunning, arts{"a": pending}),
			run(workflow.RunRunning, arts{"a": {Status: workflow.StatusOptionsGenerated, Rev: 1}}), nil, nil, ""},
		{"Generated", run(workflow.RunRunning, arts{"a": {Status: workflow.StatusOptionSelected, Rev: 2}}),
			run(workflow.RunRunning, arts{"a": {Status: workflow.StatusGenerated, Rev: 3, Text: "x"}}), nil, nil, "artifact.generated a/3"},
		{"Rewritten", run(workflow.RunRunning, arts{"a": {Status: workflow.StatusGenerated, Rev: 3, Text: "x"}}),
			run(workflow.RunRunning, arts{"a": {Status: workflow.StatusGenerated, Rev: 4, Text: "y"}}), nil, nil, "artifact.generated a/4"},
		{"ApprovedCompletedInDefinitionOrder",
			run(workflow.RunRunning, arts{"a": {Status: workflow.StatusGenerated, Rev: 3}, "b": {Status: workflow.StatusApproved, Rev: 1}}),
			run(workflow.RunCompleted, arts{"a": {Status: workflow.StatusApproved, Rev: 4}, "b": {Status: workflow.StatusApproved, Rev: 1}}),
			nil, nil, "artifact.approved a/4 run.completed"},
		{"AutoWrittenAndApproved", run(workflow.RunRunning, arts{"a": {Status: workflow.StatusRunning, Rev: 1}}),
			run(workflow.RunRunning, arts{"a": {Status: workflow.StatusApproved, Rev: 2, Text: "x"}}), nil, nil, "artifact.generated a/2 artifact.approved a/2"},
		{"Stale", run(workflow.RunRunning, arts{"a": {Status: workflow.StatusApproved, Rev: 2}, "b": {Status: workflow.StatusApproved, Rev: 1}}),
			run(workflow.RunRunning, arts{"a": {Status: workflow.StatusStale, Rev: 3}, "b": {Status: workflow.StatusGenerated, Rev: 2}}),
			nil, nil, "artifact.generated b/2 artifact.stale a/3"},
		{"Cancelled", run(workflow.RunRunning, arts{"a": pending}), run(workflow.RunCancelled, arts{"a": pending}), nil, nil, "run.failed cancelled"},
		{"StepFailed", run(workflow.RunRunning, arts{"a": pending}), run(workflow.RunRunning, arts{"a": pending}), nil, failed, "run.failed step_failed"},
		{"SameFailureOnce", run(workflow.RunRunning, arts{"a": pending}), run(workflow.RunRunning, arts{"a": pending}), failed, failed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := workflowEvents(def, key, tc.prev, tc.next, tc.prevRetry, tc.nextRetry, "U1", time.Unix(1, 0))
			var got []string
			ids := map[string]bool{}
			for _, e := range evs {
				s := e.Data.Type
				if a := e.Data.Artifact; a != nil {
					s += " " + a.ID + "/" + strconv.Itoa(a.Revision)
				}
				if e.Data.Reason != "" {
					s += " " + e.Data.Reason
				}
				got = append(got, s)
				if ids[e.Data.ID] || !strings.HasPrefix(e.Data.ID, "evt_") || e.Key != key || e.Data.Actor.UserID != "U1" || e.Data.Run.Workflow != "wf" {
					t.Errorf("event %+v", e)
				}
				ids[e.Data.ID] = true
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("events %q; want %q", g, tc.want)
			}
		})
	}
}
