package main

import (
	"fmt"
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

// numbered returns an answer of n numbered sentences ("Sentence 1 is here." …), about
// 20 characters each, so a test can count each one in the thread.
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "Sentence %d is here. ", i)
	}
	return strings.TrimSpace(b.String())
}

// shownOnce fails t unless the thread's bot messages, read in order, show each of the
// n sentences of numbered(n) exactly once, and none is still streaming. It returns
// their texts run together.
func shownOnce(t *testing.T, msgs []emulator.Message, n int) string {
	t.Helper()
	var all strings.Builder
	for _, m := range msgs {
		if m.Streaming {
			t.Errorf("message %s still streaming", m.TS)
		}
		all.WriteString(m.Text)
	}
	// A posted reply's pieces may end or begin without the space between them.
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = m.Text
	}
	text := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	for i := 1; i <= n; i++ {
		if c := strings.Count(text, fmt.Sprintf("Sentence %d is", i)); c != 1 {
			t.Fatalf("sentence %d shown %d times across %d messages; want once:\n%s", i, c, len(msgs), text)
		}
	}
	return all.String()
}

// TestE2EStreamRotationRepeatsNothing: with STREAM_ROTATION set low for the test,
// every append of a streamed answer goes on in a fresh message (as one four minutes
// old does before Slack's five-minute expiry). The messages, read in order, show the
// answer once: when the stream holds the whole answer, and when the reply replaces
// what was streamed (a cut-off answer gets a note), where the reply is written into
// the stream's messages from the first and none of the earlier ones keeps its text
// beside it.
func TestE2EStreamRotationRepeatsNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		finish string
	}{
		{"WholeAnswerStreamed", ""},
		{"ReplyReplacesTheStream", "length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, emulator.Config{})
			h.env["STREAM_ANSWERS"] = "true"
			h.env["STREAM_ROTATION"] = "1ns"
			h.start()
			answer := numbered(120) // about 2,500 characters: appended in about three pieces
			h.ai.Push(openaitest.Response{Text: answer, FinishReason: tc.finish})
			ts := h.post(general, alice, "<@U0BOT> count to a hundred and twenty", "")
			h.replies(general, ts, 1)
			h.idle()
			if n := len(h.emu.Calls("chat.startStream")); n < 2 {
				t.Fatalf("chat.startStream called %d times; want the stream to continue in fresh messages", n)
			}
			msgs := h.emu.BotMessages(general, ts)
			text := shownOnce(t, msgs, 120)
			if tc.finish == "" && text != answer {
				t.Errorf("the messages show %q; want the answer %q", text, answer)
			}
			if last := msgs[len(msgs)-1]; !h.emu.HasFeedbackButtons(general, last.TS, alice) {
				t.Errorf("the answer's last message has no feedback buttons: %s", last.Blocks)
			}
		})
	}
}
