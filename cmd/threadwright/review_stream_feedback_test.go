package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
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
	h.replies(general, thread, 1)
	h.idle() // the turn has ended: its stream stopped and was replaced
	got := h.replies(general, thread, 1)
	last := got[len(got)-1]
	if !strings.Contains(last.Text, "Paris") {
		t.Fatalf("replies %+v; want the answer", got)
	}
	if !h.emu.HasFeedbackButtons(general, last.TS, alice) {
		m, _ := h.emu.Message(general, last.TS)
		t.Fatalf("the replaced streamed answer has no feedback buttons: text %q blocks %s", m.Text, m.Blocks)
	}
}

// TestE2ENoFeedbackOnErrorsAndStops: an error reply and a stopped turn's note are not
// answers to rate: they carry no feedback buttons; the next real answer does.
func TestE2ENoFeedbackOnErrorsAndStops(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.tools = registerSlowReport
	h.start()
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		switch {
		case strings.Contains(r.LastUserMessage(), "broken"):
			return openaitest.Response{Status: 400, ErrorMessage: "bad request"}
		case strings.Contains(r.LastUserMessage(), "report") && len(r.ToolResults()) == 0:
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "slow_report", Arguments: "{}"}}}
		}
		return openaitest.Response{Text: "Here is the answer to: " + r.LastUserMessage()}
	})

	ts := h.post(general, alice, "<@U0BOT> a broken question", "")
	got := h.replies(general, ts, 1)
	h.idle()
	if h.emu.HasFeedbackButtons(general, got[0].TS, alice) {
		t.Errorf("the error reply %q has feedback buttons", got[0].Text)
	}

	ts = h.post(general, alice, "<@U0BOT> build the quarterly report", "")
	progress := h.replies(general, ts, 1)[0]
	if _, err := h.emu.ClickButtonByLabel(general, progress.TS, alice, "Stop"); err != nil {
		t.Fatal(err)
	}
	got = h.replies(general, ts, 2)
	h.idle()
	if !strings.HasPrefix(got[1].Text, "Stopped at") {
		t.Fatalf("reply %q", got[1].Text)
	}
	if h.emu.HasFeedbackButtons(general, got[1].TS, alice) {
		t.Errorf("the stopped note %q has feedback buttons", got[1].Text)
	}

	h.post(general, alice, "what day is it?", ts)
	got = h.replies(general, ts, 3)
	h.idle()
	if !h.emu.HasFeedbackButtons(general, got[2].TS, alice) {
		t.Errorf("the answer %q has no feedback buttons", got[2].Text)
	}
}

// TestE2EFeedbackInAssistantThreadAndDM: an answer in an assistant thread and a
// direct message's broadcast answer carry the feedback buttons, and a click on each
// is stored with the turn that wrote it.
func TestE2EFeedbackInAssistantThreadAndDM(t *testing.T) {
	h := newAssistantViewHarness(t)
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	im, thread, err := h.emu.StartAssistantThread(alice, general)
	if err != nil {
		t.Fatal(err)
	}
	h.replies(im, thread, 1)
	h.ai.Push(openaitest.Response{Text: "Paris."})
	h.post(im, alice, "What is the capital of France?", thread)
	answer := h.replies(im, thread, 2)[1]
	h.idle()

	h.ai.Push(openaitest.Response{Text: "Hi Alice!"})
	ts := h.post(dm, alice, "hello", "")
	got := h.replies(dm, ts, 1) // greeted already in the assistant view
	dmAnswer := got[len(got)-1]
	h.idle()
	if dmAnswer.Text != "Hi Alice!" {
		t.Fatalf("DM replies %+v", got)
	}

	for _, c := range []struct{ ch, ts string }{{im, answer.TS}, {dm, dmAnswer.TS}} {
		if !h.emu.HasFeedbackButtons(c.ch, c.ts, alice) {
			m, _ := h.emu.Message(c.ch, c.ts)
			t.Fatalf("the answer %q in %s has no feedback buttons: %s", m.Text, c.ch, m.Blocks)
		}
		if _, err := h.emu.ClickFeedback(c.ch, c.ts, alice, false); err != nil {
			t.Fatal(err)
		}
		h.idle()
	}
	r := h.feedbackJSON()
	if len(r.Negative) != 2 {
		t.Fatalf("negative %+v; want both clicks", r.Negative)
	}
	for _, n := range r.Negative {
		if n.Model != "gpt-test" {
			t.Errorf("feedback on %s/%s stored without its turn: %+v", n.Key.ChannelID, n.MessageTS, n)
		}
	}
}

// TestE2EAssistantTitleCutDoesNotLeakASecret: a thread title made from a long first
// question is scrubbed before it is cut, so a secret at the cut shows no part of it.
func TestE2EAssistantTitleCutDoesNotLeakASecret(t *testing.T) {
	h := newAssistantViewHarness(t)
	h.start()
	im, thread, err := h.emu.StartAssistantThread(alice, general)
	if err != nil {
		t.Fatal(err)
	}
	h.replies(im, thread, 1)
	h.ai.Push(openaitest.Response{Text: "Please do not paste keys."})
	question := strings.Repeat("x", 70) + " sk-test-secret is my key, is it valid?"
	h.post(im, alice, question, thread)
	h.replies(im, thread, 2)
	at := waitThread(h, im, thread, "the title", func(a emulator.AssistantThread) bool { return a.Title != "" })
	if strings.Contains(at.Title, "sk-test") {
		t.Errorf("title %q shows part of the secret", at.Title)
	}
}

// TestE2ETaskOutputCutDoesNotLeakASecret: a tool result quoting a secret where the
// task's short output is cut shows no part of the secret in the task card.
func TestE2ETaskOutputCutDoesNotLeakASecret(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.tools = func(r *agents.Registry) error {
		r.MustRegister(agents.ToolSpec{Name: "leaky", Description: "Echoes a configuration", Category: "Test",
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) {
				return strings.Repeat("y", 190) + " sk-test-secret and more", nil
			}))
		return nil
	}
	h.start()
	const answer = "Done."
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_l", Name: "leaky", Arguments: "{}"}}},
		openaitest.Response{Text: answer},
	)
	ts := h.post(general, alice, "<@U0BOT> show the configuration", "")
	m := h.streamedTurn(t, ts, answer)
	if len(m.TaskUpdates) == 0 {
		t.Fatal("no task shown")
	}
	for _, u := range m.TaskUpdates {
		if strings.Contains(u.Output, "sk-t") || strings.Contains(u.Title, "sk-t") {
			t.Errorf("task %q shows part of the secret: output %q", u.Title, u.Output)
		}
	}
}

// TestE2ELongReplacedStreamLosesItsStop: a cut-off answer longer than one message
// replaces its stream: the stream's message becomes the reply's first part, its Stop
// button gone (blocks would hide the text), and the last part has the feedback
// buttons. Sessions are refused, so that the stream starts with a Stop of its own.
func TestE2ELongReplacedStreamLosesItsStop(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	h.emu.RefuseSessions(true)
	long := strings.TrimSpace(strings.Repeat("Paris is the capital of France. ", 200)) // ~6,400 characters
	h.ai.Push(openaitest.Response{Text: long, FinishReason: "length"})
	thread := h.post(general, alice, "<@U0BOT> tell me about Paris", "")
	h.replies(general, thread, 1)
	h.idle()
	if c := h.emu.Calls("chat.startStream"); len(c) == 0 || !strings.Contains(c[0].Params.Get("chunks"), `"Stop"`) {
		t.Fatal("the stream did not start with its Stop")
	}
	got := h.emu.BotMessages(general, thread)
	if len(got) != 2 {
		t.Fatalf("%d bot messages; want the reply in two", len(got))
	}
	if strings.Contains(string(got[0].Blocks), `"Stop"`) || !strings.HasPrefix(got[0].Text, "Paris is") {
		t.Errorf("first part: text %.40q…, blocks %s; want the reply's text and no Stop", got[0].Text, got[0].Blocks)
	}
	if !h.emu.HasFeedbackButtons(general, got[1].TS, alice) {
		t.Errorf("the last part has no feedback buttons: %s", got[1].Blocks)
	}
}
