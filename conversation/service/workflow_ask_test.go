package service_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// A write's confirmation (docs/workflows.md, "Tools and untrusted content"): the
// scripted writer of one artifact stops before a tool call until the person decides.

// askingWriter makes the scripted agent's writer of artifact stop before a call of
// crm__note, asking; on a decision it records the Resume it was given and runs the
// call when approved and not interrupted, then answers fail's next error, if any.
type askingWriter struct {
	mu       sync.Mutex
	artifact string
	resumes  []conversation.Resume
	ran      int
	fail     []error
}

func (w *askingWriter) write(r conversation.ArtifactRequest) (string, error) {
	if r.Artifact.ID != w.artifact {
		return r.Artifact.ID + " text", nil
	}
	if r.Resume == nil {
		if !r.Ask {
			return "", errors.New("the writer may not ask")
		}
		return "", &conversation.ConfirmationNeeded{Pending: conversation.PendingTool{CallID: "c1", Name: "crm__note", Arguments: `{"text":"wire the money"}`, Reason: conversation.ApprovalAfterUntrusted}}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.resumes = append(w.resumes, *r.Resume)
	if r.Resume.Approved && !r.Resume.Interrupted {
		w.ran++
	}
	if len(w.fail) > 0 {
		err := w.fail[0]
		w.fail = w.fail[1:]
		return "", err
	}
	return w.artifact + " text after the call", nil
}

func (w *askingWriter) counts() (ran int, resumes []conversation.Resume) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ran, append([]conversation.Resume(nil), w.resumes...)
}

// conv returns the thread's conversation state, with the write's confirmation.
func (h *wfHarness) conv() conversation.State {
	cp, err := h.st.Load(context.Background(), key, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	return cp.Conversation.State
}

// asking starts product-brief with w writing artifact (problem, or audience after
// problem is approved) and returns the confirmation the run waits on.
func asking(t *testing.T, h *wfHarness, w *askingWriter) *conversation.WriteApproval {
	t.Helper()
	h.agent.write = w.write
	h.say("U1", "start product-brief")
	h.click("U1", conversation.ActionPick, "problem", "A", "")
	if w.artifact == "audience" {
		h.click("U1", conversation.ActionApprove, "problem", "", "")
		h.click("U1", conversation.ActionPick, "audience", "A", "")
	}
	wa := h.conv().WriteApproval
	if wa == nil || !h.artifact(w.artifact).Asking || wa.CardTS == "" {
		t.Fatalf("the write of %s does not wait for a confirmation: %+v, %+v", w.artifact, wa, h.artifact(w.artifact))
	}
	return wa
}

// TestWorkflowAskDenyAfterBegun: Approve begins the call (it runs), then the write
// fails and is rolled back, leaving the card's buttons; a Deny click then must not
// tell the model the call was denied nor the card that it did not run: the call was
// begun and may have run, so it is not run again and both say so.
func TestWorkflowAskDenyAfterBegun(t *testing.T) {
	h := newWF(t, "U1")
	w := &askingWriter{artifact: "problem", fail: []error{errors.New("the model is down")}}
	wa := asking(t, h, w)

	h.clickRev("U1", conversation.ActionApproveTool, "", 0, wa.ID, "")
	if ran, _ := w.counts(); ran != 1 {
		t.Fatalf("Approve ran the call %d times; want 1", ran)
	}
	if got := h.conv().WriteApproval; got == nil || !got.Begun {
		t.Fatalf("after the failed write the confirmation is %+v; want it kept, begun", got)
	}

	h.clickRev("U1", conversation.ActionDenyTool, "", 0, wa.ID, "")
	ran, resumes := w.counts()
	if ran != 1 || len(resumes) != 2 {
		t.Fatalf("after Deny: ran %d, decisions %+v", ran, resumes)
	}
	if r := resumes[1]; !r.Approved || !r.Interrupted {
		t.Errorf("the model was told %+v of a call that was begun; want it approved and interrupted (it may have run)", r)
	}
	card := h.msgr.cardText(wa.CardTS)
	if !strings.Contains(card, "may or may not have taken effect") || strings.Contains(card, "Denied") || strings.Contains(card, ": not run") {
		t.Errorf("the card says:\n%s", card)
	}
	if len(h.msgr.buttons(wa.CardTS)) != 0 {
		t.Errorf("the card still has buttons: %v", h.msgr.buttons(wa.CardTS))
	}
	if st := h.artifact("problem"); st.Status != workflow.StatusGenerated || st.Asking {
		t.Errorf("problem after the decision: %q, asking %v", st.Status, st.Asking)
	}
}

// TestWorkflowAskDroppedWhenInputsChange: a restart or an edit of what the asking
// write depends on, or a restart of the asking artifact, drops the confirmation: its
// card closes saying it is no longer current, and the old card's Approve runs
// nothing.
func TestWorkflowAskDroppedWhenInputsChange(t *testing.T) {
	for _, tt := range []struct{ name, artifact, line string }{
		{"RestartDependency", "audience", "restart problem"},
		{"EditDependency", "audience", "edit problem make it about invoices"},
		{"RestartItself", "problem", "restart problem"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newWF(t, "U1")
			w := &askingWriter{artifact: tt.artifact}
			wa := asking(t, h, w)

			h.say("U1", tt.line)
			if got := h.conv().WriteApproval; got != nil && got.ID == wa.ID {
				t.Fatalf("after %q the old confirmation still waits: %+v", tt.line, got)
			}
			if h.artifact(tt.artifact).Asking && h.conv().WriteApproval == nil {
				t.Fatalf("%s still asks with no confirmation", tt.artifact)
			}
			card := h.msgr.cardText(wa.CardTS)
			if !strings.Contains(card, "no longer current") || len(h.msgr.buttons(wa.CardTS)) != 0 {
				t.Errorf("the old card was not closed as out of date (buttons %v):\n%s", h.msgr.buttons(wa.CardTS), card)
			}

			h.clickRev("U1", conversation.ActionApproveTool, "", 0, wa.ID, "")
			if ran, resumes := w.counts(); ran != 0 || len(resumes) != 0 {
				t.Errorf("the old card's Approve went on: ran %d, decisions %+v", ran, resumes)
			}
		})
	}
}
