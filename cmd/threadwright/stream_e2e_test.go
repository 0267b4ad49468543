package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EStreamedAnswer: the answer streams into one bot message (chat.startStream,
// chat.appendStream, chat.stopStream) that holds the whole text and is no longer
// streaming at the end; nothing else is posted.
func TestE2EStreamedAnswer(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()

	answer := "**Paris** is the capital of France, and it has been for a very long time."
	h.ai.Push(openaitest.Response{Text: answer})
	ts := h.post(general, alice, "<@U0BOT> what is the capital of France?", "")
	got := h.replies(general, ts, 1)
	h.waitFor("the stream to stop", func() bool {
		m, _ := h.emu.Message(general, got[0].TS)
		return !m.Streaming
	})
	h.idle()
	msgs := h.emu.BotMessages(general, ts)
	if len(msgs) != 1 {
		t.Fatalf("%d bot messages in the thread, want 1: %+v", len(msgs), msgs)
	}
	if m := msgs[0]; m.Text != answer || m.Streaming {
		t.Fatalf("streamed message %q (streaming %v), want %q", m.Text, m.Streaming, answer)
	}
}

// TestE2EStreamingRefused: when chat.startStream answers an error, the answer is
// posted as a normal reply, once.
func TestE2EStreamingRefused(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()

	h.emu.FailNext("chat.startStream", "not_allowed")
	h.ai.Push(openaitest.Response{Text: "**Paris** is the capital of France."})
	ts := h.post(general, alice, "<@U0BOT> what is the capital of France?", "")
	h.replies(general, ts, 1)
	h.idle()
	msgs := h.emu.BotMessages(general, ts)
	if len(msgs) != 1 || msgs[0].Text != "*Paris* is the capital of France." || msgs[0].Streaming {
		t.Fatalf("bot messages %+v, want one normal reply in mrkdwn", msgs)
	}
}

// TestE2EStreamedLongAnswer: an answer longer than one message streams its first
// part and posts the rest, every message within Slack's limits, the text whole.
func TestE2EStreamedLongAnswer(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()

	var b strings.Builder
	for i := 0; b.Len() < 9000; i++ {
		b.WriteString("This is sentence number ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(" of a long answer. ")
		if i%10 == 9 {
			b.WriteString("\n\n")
		}
	}
	answer := strings.TrimSpace(b.String())
	h.ai.Push(openaitest.Response{Text: answer})
	ts := h.post(general, alice, "<@U0BOT> tell me everything", "")
	h.replies(general, ts, 2)
	h.idle()
	msgs := h.emu.BotMessages(general, ts)
	var all strings.Builder
	for _, m := range msgs {
		if m.Streaming {
			t.Fatalf("message %s still streaming", m.TS)
		}
		if n := utf8.RuneCountInString(m.Text); n > 4000 {
			t.Fatalf("message of %d characters", n)
		}
		all.WriteString(m.Text + "\n")
	}
	if strings.Join(strings.Fields(all.String()), " ") != strings.Join(strings.Fields(answer), " ") {
		t.Fatalf("%d messages do not hold the answer whole:\n%s", len(msgs), all.String())
	}
}
