package workflowrun

import (
	"github.com/threadwright/threadwright/conversation/workflow"
)

// observeWorkflow tells Metrics what a workflow turn changed from before to after:
// a run started, completed, cancelled or reopened; each artifact whose status
// changed; each pipeline item that ended or was tried again.
func (s *Handler) observeWorkflow(before, after *workflow.State) {
	if after == nil || s.cfg.Metrics == nil {
		return
	}
	m, name := s.cfg.Metrics, after.Name
	if before == nil || before.Name != after.Name {
		before = nil // a new run
		m.WorkflowTransition(name, "started")
	}
	if before != nil && before.Status != after.Status {
		switch after.Status {
		case workflow.RunCompleted:
			m.WorkflowTransition(name, "completed")
		case workflow.RunCancelled:
			m.WorkflowTransition(name, "cancelled")
		case workflow.RunRunning:
			m.WorkflowTransition(name, "reopened")
		}
	}
	for id, a := range after.Artifacts {
		var old *workflow.ArtifactState
		if before != nil {
			old = before.Artifacts[id]
		}
		if old == nil || old.Status != a.Status {
			if old != nil || a.Status != workflow.StatusPending {
				m.WorkflowTransition(name, string(a.Status))
			}
		}
		for i, it := range a.Items {
			var prev workflow.ItemState
			if old != nil && i < len(old.Items) {
				prev = old.Items[i]
			}
			if it.Status != prev.Status && (it.Status == workflow.ItemDone || it.Status == workflow.ItemFailed) {
				m.PipelineItem(name, string(it.Status))
			}
			// Every new failure was followed by another try, but that of an item
			// that failed for good.
			retried := max(len(it.Failures)-len(prev.Failures), 0)
			if it.Status == workflow.ItemFailed && prev.Status != workflow.ItemFailed && retried > 0 {
				retried--
			}
			for range retried {
				m.PipelineItem(name, "retried")
			}
		}
	}
}
