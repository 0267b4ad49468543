package main

import (
	"strings"
	"testing"
)

// TestE2ESlashStartIsNotRefusedByItsOwnCount: with MAX_QUEUED_PER_USER 1, a person
// with nothing else waiting types /threadwright start product-brief. The command is
// admitted; the input it forwards to the new thread is the same request, so it must
// not be counted against the person again (the command itself is still pending
// while it runs) nor take a second token: the workflow starts, and no flood notice
// is shown. Before, the forward was refused: the channel got the workflow's header
// and nothing else, and the person was told they had 1 request waiting.
func TestE2ESlashStartIsNotRefusedByItsOwnCount(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["MAX_QUEUED_PER_USER"] = "1"
	h.start()
	thread := h.startBrief() // waits for the first artifact's options
	if got := h.ephemeralsIn(general, alice); strings.Contains(got, "waiting for me") {
		t.Errorf("alice was told of a flood: %q", got)
	}
	if len(h.emu.BotMessages(general, thread)) == 0 {
		t.Error("the workflow's thread is empty")
	}
}

// TestE2ESlashStartTakesOneToken: with USER_BURST 1 and a slow USER_RATE, one
// /threadwright start is one request: the workflow starts. Before, the forward of the
// command to its new thread took a second token and was refused as a flood.
func TestE2ESlashStartTakesOneToken(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["USER_BURST"], h.env["USER_RATE"] = "1", "0.1"
	h.start()
	h.startBrief() // waits for the first artifact's options
	if got := h.ephemeralsIn(general, alice); strings.Contains(got, "faster than I can answer") {
		t.Errorf("alice's one command was refused: %q", got)
	}
}
