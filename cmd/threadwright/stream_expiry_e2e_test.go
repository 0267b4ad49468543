package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EStreamExpiredBeforeItsStop: Slack ends a stream about five minutes after it
// starts. Here a tool runs for six minutes on the emulator's clock (the bot's own
// clock, which times the rotation, does not move), so the stream that shows the
// turn's task has expired when the answer comes: chat.appendStream and
// chat.stopStream answer message_not_in_streaming_state. The answer is still
// delivered whole, once: written into the expired message (chat.update), no longer
// streaming, tagged as the answer and with the feedback buttons.
func TestE2EStreamExpiredBeforeItsStop(t *testing.T) {
	clk := &testClock{}
	h := newHarness(t, emulator.Config{Now: clk.now})
	h.env["STREAM_ANSWERS"] = "true"
	h.tools = func(r *agents.Registry) error {
		r.MustRegister(agents.ToolSpec{Name: "long_job", Description: "Runs a long job", Category: "Test",
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`), Timeout: time.Minute},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) {
				clk.add(emulator.DefaultStreamExpiry + time.Minute) // six minutes pass in Slack
				return "the job is done", nil
			}))
		return nil
	}
	h.start()
	answer := numbered(30)
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_job", Name: "long_job", Arguments: "{}"}}},
		openaitest.Response{Text: answer},
	)
	ts := h.post(general, alice, "<@U0BOT> run the long job and count to thirty", "")
	h.replies(general, ts, 1)
	h.idle()

	checkExpiredAnswer(t, h, ts, 30)
}

// TestE2EStreamExpiredAtItsStop: the stream expires after the whole answer was
// appended, just before chat.stopStream (emulator's ExpireStreamAt): the text is
// there, but without the answer's tag and feedback buttons that the stop sets. The
// answer is written into the message (chat.update) once, tagged and with its buttons.
func TestE2EStreamExpiredAtItsStop(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	h.emu.ExpireStreamAt("chat.stopStream")
	h.ai.Push(openaitest.Response{Text: numbered(20)})
	ts := h.post(general, alice, "<@U0BOT> count to twenty", "")
	h.replies(general, ts, 1)
	h.idle()
	checkExpiredAnswer(t, h, ts, 20)
}

// checkExpiredAnswer fails t unless a stream call met the expiry and the thread of ts
// shows the n sentences of numbered(n) once, in one message no longer streaming,
// tagged as the answer's final post, with the feedback buttons.
func checkExpiredAnswer(t *testing.T, h *harness, ts string, n int) {
	t.Helper()
	expired := 0
	for _, c := range append(h.emu.Calls("chat.appendStream"), h.emu.Calls("chat.stopStream")...) {
		if c.Error == "message_not_in_streaming_state" {
			expired++
		}
	}
	if expired == 0 {
		t.Fatal("no stream call met the expiry; the test does not test it")
	}
	msgs := h.emu.BotMessages(general, ts)
	shownOnce(t, msgs, n)
	var answered []emulator.Message
	for _, m := range msgs {
		if strings.Contains(m.Text, "Sentence 1 is") {
			answered = append(answered, m)
		}
	}
	if len(answered) != 1 || !h.emu.HasFeedbackButtons(general, answered[0].TS, alice) || answered[0].Streaming {
		t.Fatalf("the answer in %d messages %+v; want one, no longer streaming, with the feedback buttons", len(answered), answered)
	}
	if meta := string(answered[0].Metadata); !strings.Contains(meta, `"final":true`) {
		t.Errorf("the answer's metadata %s; want it tagged as the answer's final post", meta)
	}
}
