package service_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// callsSince returns the agent's calls after the first n.
func (h *wfHarness) callsSince(n int) string {
	h.agent.mu.Lock()
	defer h.agent.mu.Unlock()
	return strings.Join(h.agent.calls[n:], "|")
}

func (h *wfHarness) callCount() int {
	h.agent.mu.Lock()
	defer h.agent.mu.Unlock()
	return len(h.agent.calls)
}

// TestWorkflowTypedDecisions: typed replies to an artifact under review are read as
// decisions (docs/workflows.md, "Typed decisions"): phrases approve without a model call and
// under the button's permission rule, other replies go to the classifier and then
// the editor, an ambiguous one is asked about with buttons that carry it, and a
// question leaves the artifact to the assistant.
func TestWorkflowTypedDecisions(t *testing.T) {
	h := newWF(t, "U1")
	h.say("U1", "start product-brief")
	h.click("U1", conversation.ActionPick, "problem", "A", "")
	h.drain()

	// A bystander's typed approval is refused with who may approve.
	n := h.callCount()
	h.say("U2", "looks good 👍")
	if st := h.artifact("problem").Status; st != workflow.StatusGenerated {
		t.Fatalf("a bystander's typed approval made problem %s", st)
	}
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "only the approvers (<@U1>) may approve") {
		t.Fatalf("the bystander was told %q", got)
	}

	// An ambiguous reply: the buttons carry it, and a click applies it.
	h.say("U1", "hmm, the second paragraph")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "not sure what your reply means") {
		t.Fatalf("an ambiguous reply got %q", got)
	}
	if got := h.callsSince(n); got != "classify problem" {
		t.Fatalf("calls for the bystander's approval and the ambiguous reply: %q", got)
	}
	if st := h.artifact("problem"); st.Status != workflow.StatusGenerated || strings.Contains(st.Text, "hmm") {
		t.Fatalf("an ambiguous reply changed problem: %+v", st)
	}
	h.click("U1", conversation.ActionReplyQuestion, "problem", "hmm, the second paragraph", "")
	// Just a question: the assistant answers the reply the button carries.
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "re: ") || !strings.Contains(got, "hmm, the second paragraph") {
		t.Fatalf("Just a question answered %q", got)
	}
	if st := h.artifact("problem"); st.Status != workflow.StatusGenerated || strings.Contains(st.Text, "hmm") {
		t.Fatalf("Just a question changed problem: %+v", st)
	}
	h.click("U1", conversation.ActionReplyChange, "problem", "hmm, the second paragraph", "")
	if st := h.artifact("problem"); !strings.Contains(st.Text, "hmm, the second paragraph") {
		t.Fatalf("Request this change did not revise problem: %q", st.Text)
	}

	// A question leaves the artifact as it is; the assistant answers it.
	before := h.artifact("problem")
	n = h.callCount()
	h.say("U1", "Why is the budget so low?")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "re: ") || !strings.Contains(got, "Why is the budget so low?") {
		t.Fatalf("a question was answered %q", got)
	}
	if st := h.artifact("problem"); st.Text != before.Text || st.Rev != before.Rev || st.Status != workflow.StatusGenerated {
		t.Fatalf("a question changed problem: %+v", st)
	}
	if got := h.callsSince(n); got != "" {
		t.Fatalf("a question called the workflow agent: %q", got)
	}

	// A change request goes through the classifier to the editor.
	n = h.callCount()
	h.say("U1", "make it shorter")
	if got := h.callsSince(n); got != "classify problem|revise problem|evaluate problem" && !strings.HasPrefix(got, "classify problem|revise problem") {
		t.Fatalf("calls for a change request: %q", got)
	}

	// Russian approval by the approver approves without a model call for it.
	n = h.callCount()
	h.say("U1", "Подтверждаю!")
	if st := h.artifact("problem").Status; st != workflow.StatusApproved {
		t.Fatalf("a typed approval left problem %s", st)
	}
	if got := h.callsSince(n); strings.Contains(got, "classify") || strings.Contains(got, "revise") {
		t.Fatalf("a typed approval called %q", got)
	}
}
