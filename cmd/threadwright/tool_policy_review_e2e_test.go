package main

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EToolPolicyApprovedCallRunsOnceAcrossRestart: Alice approves the delete; it
// runs, and the bot restarts while the model writes the answer. The click's input runs
// again after the restart: the approved call must not run a second time, and the
// answer is posted once.
func TestE2EToolPolicyApprovedCallRunsOnceAcrossRestart(t *testing.T) {
	p := newPolicyHarness(t)
	hold := make(chan struct{})
	entered := make(chan struct{})
	var held atomic.Bool
	t.Cleanup(func() { close(hold) }) // before the model server closes
	p.ai.Handle(func(r openaitest.Request) openaitest.Response {
		res := r.ToolResults()
		if len(res) == 2 && strings.Contains(res[1].Content, "customer 42 deleted") && held.CompareAndSwap(false, true) {
			close(entered) // the approved call ran; the answer is being written
			<-hold
		}
		return p.model(r)
	})
	p.start()
	thread, card := p.ask()
	approve := p.find(card, "Approve", "")
	if _, err := p.emu.ClickButton(general, card, alice, approve.ActionID); err != nil {
		t.Fatal(err)
	}
	<-entered
	p.stop() // shutting down: the click's input stays pending
	if n := p.deletes.Load(); n != 1 {
		t.Fatalf("delete_customer ran %d times before the restart, want 1", n)
	}
	p.start()
	p.idle()
	if n := p.deletes.Load(); n != 1 {
		t.Errorf("delete_customer ran %d times across the restart, want 1 (one Approve)", n)
	}
	// The run after the restart does not run the call again; the model is told it may
	// have taken effect, and the thread shows one answer, which says so.
	if n := p.answers(thread, "The page is a shop."); n != 1 {
		t.Errorf("%d answers, want 1:\n%s", n, p.transcript(thread))
	}
	if n := p.answers(thread, "please check whether it happened"); n != 1 {
		t.Errorf("the answer does not say the call may have run:\n%s", p.transcript(thread))
	}
}
