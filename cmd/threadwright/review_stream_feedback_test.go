package main

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents/openaitest"
	"github.com/threadwright/threadwright/bot/emulator"
)

// TestE2EFeedbackOnReplacedStream: a streamed answer whose stream does not match the
// reply (here a cut-off answer, which gets a note) is replaced by the reply, and
// the replaced message still ends with the feedback buttons.
func TestE2EFeedbackOnReplacedStream(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	h.ai.Push(openaitest.Response{Text: "Paris is the capital of France and its largest city", FinishReason: "length"})
	thread := h.post(general, alice, "<@U0BOT> what is the capital of France?", "")
	got := h.replies(general, thread, 1)
	h.waitFor("the stream to stop", func() bool {
		m, _ := h.emu.Message(general, got[0].TS)
		return !m.Streaming
	})
	h.idle()
	got = h.replies(general, thread, 1)
	last := got[len(got)-1]
	if !strings.Contains(last.Text, "Paris") {
		t.Fatalf("replies %+v; want the answer", got)
	}
	if !h.emu.HasFeedbackButtons(general, last.TS, alice) {
		m, _ := h.emu.Message(general, last.TS)
		t.Fatalf("the replaced streamed answer has no feedback buttons: text %q blocks %s", m.Text, m.Blocks)
	}
}
