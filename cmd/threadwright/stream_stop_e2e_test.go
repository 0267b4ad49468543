package main

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EStreamStopFailedStopsAgain: the chat.stopStream that carries the answer's
// last text fails (not because Slack ended the stream): the stream is stopped again,
// with no text, so it does not stay open, and the reply replaces the streamed
// message: the answer once, no longer streaming, tagged final, with the feedback
// buttons.
func TestE2EStreamStopFailedStopsAgain(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	h.emu.FailNext("chat.stopStream", "internal_error")
	h.ai.Push(openaitest.Response{Text: numbered(5)})
	ts := h.post(general, alice, "<@U0BOT> count to five", "")
	h.replies(general, ts, 1)
	h.idle()

	calls := h.emu.Calls("chat.stopStream")
	if len(calls) != 2 || calls[0].Error != "internal_error" || calls[0].Params.Get("markdown_text") == "" {
		t.Fatalf("chat.stopStream calls %+v; want the failed one with the last text, then another", calls)
	}
	if again := calls[1]; again.Params.Get("markdown_text") != "" || again.Params.Get("ts") != calls[0].Params.Get("ts") {
		t.Errorf("second chat.stopStream %+v; want the same stream stopped with no text", again)
	}
	msgs := h.emu.BotMessages(general, ts)
	shownOnce(t, msgs, 5)
	var answered []emulator.Message
	for _, m := range msgs {
		if m.Streaming {
			t.Errorf("message %s still streaming", m.TS)
		}
		if strings.Contains(m.Text, "Sentence 1 is") {
			answered = append(answered, m)
		}
	}
	if len(answered) != 1 || !h.emu.HasFeedbackButtons(general, answered[0].TS, alice) || !strings.Contains(string(answered[0].Metadata), `"final":true`) {
		t.Fatalf("the answer in %d messages %+v; want one, tagged final, with the feedback buttons", len(answered), answered)
	}
}
