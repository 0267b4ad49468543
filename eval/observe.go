package eval

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Transcript is what a run observed, the material of its checks: the steps and the
// bot's replies (from the emulated Slack), the model calls, tool runs and scope
// verdicts (from the taps), the workflow run's state (from the store) and the files
// uploaded to the thread.
type Transcript struct {
	Steps      []StepResult   `json:"steps"`
	ModelCalls []ModelCall    `json:"model_calls,omitempty"`
	Tools      []ToolRun      `json:"tools,omitempty"`
	Scope      []ScopeVerdict `json:"scope,omitempty"`
	Approvals  []Approval     `json:"approvals,omitempty"`
	Workflow   *WorkflowRun   `json:"workflow,omitempty"`
	Files      []FileInfo     `json:"files,omitempty"`

	// answer is the reply to the last step; thread the text of every bot message
	// in the thread; answers the replies to the steps that are messages (say), where
	// an answer cites its sources; reports the uploaded files' contents.
	answer, thread string
	answers        []string
	reports        []string
}

// WorkflowRun is the state a thread's workflow run reached.
type WorkflowRun struct {
	Name      string                   `json:"name"`
	Status    string                   `json:"status"`
	Artifacts map[string]ArtifactState `json:"artifacts"`
}

// ArtifactState is an artifact's status and its criteria checks.
type ArtifactState struct {
	Status string `json:"status"`
	// Selected is the label of the option picked, for a choice artifact.
	Selected string `json:"selected,omitempty"`
	// Checks counts the criteria checks of its latest text, Failing names those that
	// failed.
	Checks  int      `json:"checks,omitempty"`
	Failing []string `json:"failing,omitempty"`
}

// FileInfo is a file uploaded to the thread.
type FileInfo struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// observe collects the transcript of a run whose steps the driver did.
func observe(ctx context.Context, d *driver, steps []Step) (*Transcript, error) {
	calls, tools, scope, _ := d.tap.snapshot()
	tr := &Transcript{Steps: d.steps, ModelCalls: calls, Tools: tools, Scope: scope, Approvals: d.approvals}
	for i, s := range d.steps {
		if steps[i].Kind() == "say" {
			tr.answers = append(tr.answers, s.Reply)
		}
	}
	if n := len(d.steps); n > 0 {
		tr.answer = d.steps[n-1].Reply
	}
	if d.thread == "" {
		return tr, nil
	}
	tr.thread = d.threadText()
	for _, f := range d.emu.Files() {
		if f.Complete && f.Channel == d.channel && (f.ThreadTS == d.thread) {
			tr.Files = append(tr.Files, FileInfo{Name: f.Name, Bytes: len(f.Content)})
			tr.reports = append(tr.reports, string(f.Content))
		}
	}
	cp, err := d.bot.Store().Load(ctx, d.key(), 0)
	switch {
	case errors.Is(err, conversation.ErrNotFound):
		return tr, nil
	case err != nil:
		return tr, fmt.Errorf("read the thread's checkpoint: %w", err)
	}
	if w := cp.Conversation.State.Workflow; w != nil {
		tr.Workflow = workflowRun(w)
	}
	return tr, nil
}

// workflowRun summarizes a workflow run's state.
func workflowRun(w *workflow.State) *WorkflowRun {
	run := &WorkflowRun{Name: w.Name, Status: string(w.Status), Artifacts: map[string]ArtifactState{}}
	for _, id := range slices.Sorted(maps.Keys(w.Artifacts)) {
		a := w.Artifacts[id]
		st := ArtifactState{Status: string(a.Status), Selected: a.Selected, Checks: len(a.Eval)}
		for _, r := range a.Eval {
			if !r.Pass {
				st.Failing = append(st.Failing, r.ID)
			}
		}
		run.Artifacts[id] = st
	}
	return run
}
