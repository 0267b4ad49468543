package workflowrun

import (
	"slices"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// metricsRecorder records what Metrics is told, as "name:arg:arg".
type metricsRecorder struct{ got []string }

func (m *metricsRecorder) TurnQueued(int)                    {}
func (m *metricsRecorder) TurnStarted(string, time.Duration) {}
func (m *metricsRecorder) TurnEnded(kind, outcome string, _ time.Duration) {
	m.got = append(m.got, "turn:"+kind+":"+outcome)
}
func (m *metricsRecorder) PipelineItem(wf, outcome string) {
	m.got = append(m.got, "item:"+wf+":"+outcome)
}
func (m *metricsRecorder) WorkflowTransition(wf, event string) {
	m.got = append(m.got, "transition:"+wf+":"+event)
}

func TestObserveWorkflow(t *testing.T) {
	art := func(st workflow.ArtifactStatus, items ...workflow.ItemState) *workflow.ArtifactState {
		return &workflow.ArtifactState{Status: st, Items: items}
	}
	run := func(status workflow.RunStatus, arts map[string]*workflow.ArtifactState) *workflow.State {
		return &workflow.State{Name: "proposal", Status: status, Artifacts: arts}
	}
	item := func(st workflow.ItemStatus, failures ...string) workflow.ItemState {
		return workflow.ItemState{Status: st, Failures: failures}
	}
	for _, tc := range []struct {
		name          string
		before, after *workflow.State
		want          []string
	}{
		{"NoRun", nil, nil, nil},
		{"Started", nil, run(workflow.RunRunning, map[string]*workflow.ArtifactState{
			"a": art(workflow.StatusOptionsGenerated), "b": art(workflow.StatusPending)}),
			[]string{"transition:proposal:started", "transition:proposal:options_generated"}},
		{"Unchanged", run(workflow.RunRunning, map[string]*workflow.ArtifactState{"a": art(workflow.StatusGenerated)}),
			run(workflow.RunRunning, map[string]*workflow.ArtifactState{"a": art(workflow.StatusGenerated)}), nil},
		{"ApprovedAndCompleted",
			run(workflow.RunRunning, map[string]*workflow.ArtifactState{"a": art(workflow.StatusGenerated)}),
			run(workflow.RunCompleted, map[string]*workflow.ArtifactState{"a": art(workflow.StatusApproved)}),
			[]string{"transition:proposal:completed", "transition:proposal:approved"}},
		{"Cancelled", run(workflow.RunRunning, nil), run(workflow.RunCancelled, nil), []string{"transition:proposal:cancelled"}},
		{"Items",
			run(workflow.RunRunning, map[string]*workflow.ArtifactState{"r": art(workflow.StatusRunning,
				item(workflow.ItemPending), item(workflow.ItemPending), item(workflow.ItemPending), item(workflow.ItemDone))}),
			run(workflow.RunRunning, map[string]*workflow.ArtifactState{"r": art(workflow.StatusRunning,
				item(workflow.ItemDone),                     // done at once
				item(workflow.ItemDone, "timeout"),          // done after a retry
				item(workflow.ItemFailed, "e1", "e2", "e3"), // failed after two retries
				item(workflow.ItemDone))}),                  // done before
			[]string{"item:proposal:done", "item:proposal:done", "item:proposal:retried", "item:proposal:failed",
				"item:proposal:retried", "item:proposal:retried"}},
		{"RetryPending",
			run(workflow.RunRunning, map[string]*workflow.ArtifactState{"r": art(workflow.StatusRunning, item(workflow.ItemPending, "e1"))}),
			run(workflow.RunRunning, map[string]*workflow.ArtifactState{"r": art(workflow.StatusRunning, item(workflow.ItemPending, "e1", "e2"))}),
			[]string{"item:proposal:retried"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &metricsRecorder{}
			s := &Handler{cfg: Config{Metrics: rec}}
			s.observeWorkflow(tc.before, tc.after)
			if !slices.Equal(rec.got, tc.want) {
				t.Errorf("got %q, want %q", rec.got, tc.want)
			}
		})
	}
}
