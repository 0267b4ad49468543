package main

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// wideTables returns a Markdown answer of about 9 KB of tables with wide cells, the
// shape that became 2 MB of mrkdwn and 503 messages when every row was padded to
// its table's widest cell.
func wideTables() string {
	var b strings.Builder
	b.WriteString("Here are the figures.\n\n")
	for table := 0; b.Len() < 9<<10; table++ {
		fmt.Fprintf(&b, "| Region %d | Detail |\n|---|---|\n| %s | wide |\n", table, strings.Repeat("a very long explanation ", 60))
		for i := 0; i < 40; i++ {
			fmt.Fprintf(&b, "| %d | ok |\n", i)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// answerOnce checks that the thread of ts holds one answer: the bot's messages, none
// streaming, all within Slack's limit, and at most limit of them besides file shares.
func answerOnce(t *testing.T, h *harness, ts string, limit int) (msgs []emulator.Message, files int) {
	t.Helper()
	h.idle()
	for _, m := range h.emu.BotMessages(general, ts) {
		if m.Subtype == "file_share" {
			files++
			continue
		}
		if m.Streaming || utf8.RuneCountInString(m.Text) > bot.MaxMessageChars {
			t.Fatalf("message %s: streaming %v, %d characters", m.TS, m.Streaming, utf8.RuneCountInString(m.Text))
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 || len(msgs) > limit {
		t.Fatalf("%d bot messages in the thread, want 1 to %d", len(msgs), limit)
	}
	if n := len(h.ai.Requests()); n != 1 {
		t.Fatalf("%d model calls, want 1", n)
	}
	return msgs, files
}

// TestE2EWideTableAnswerBounded: a 9 KB answer of wide tables, posted when done,
// takes a few messages (at most MAX_REPLY_MESSAGES); with a lower maximum the rest
// of it is uploaded as a file, and the last message says so.
func TestE2EWideTableAnswerBounded(t *testing.T) {
	t.Run("Default", func(t *testing.T) {
		h := newHarness(t, emulator.Config{})
		h.start()
		h.ai.Push(openaitest.Response{Text: wideTables()})
		ts := h.post(general, alice, "<@U0BOT> the figures, please", "")
		h.replies(general, ts, 1)
		msgs, files := answerOnce(t, h, ts, 10)
		if files != 0 {
			t.Errorf("%d files for an answer that fits %d messages", files, len(msgs))
		}
		var total int
		for _, m := range msgs {
			total += len(m.Text)
		}
		if in := len(wideTables()); total > 2*in {
			t.Errorf("%d bytes of answer became %d bytes of messages", in, total)
		}
	})
	t.Run("RestInAFile", func(t *testing.T) {
		h := newHarness(t, emulator.Config{})
		h.env["MAX_REPLY_MESSAGES"] = "2"
		h.start()
		h.ai.Push(openaitest.Response{Text: wideTables()})
		ts := h.post(general, alice, "<@U0BOT> the figures, please", "")
		h.replies(general, ts, 3)
		msgs, files := answerOnce(t, h, ts, 2)
		if len(msgs) != 2 || files != 1 || !strings.Contains(msgs[1].Text, bot.OverflowFileName) {
			t.Fatalf("%d messages and %d files, the last message %q", len(msgs), files, msgs[len(msgs)-1].Text)
		}
		var f emulator.File
		for _, x := range h.emu.Files() {
			if x.Name == bot.OverflowFileName && x.ThreadTS == ts {
				f = x
			}
		}
		if end := strings.TrimSpace(string(f.Content)); !strings.HasPrefix(end, "```") || !strings.HasSuffix(end, "| ok\n```") {
			t.Errorf("the file does not hold the end of the answer: %.300q", f.Content)
		}
	})
}

// TestE2EStreamedAnswerBounded: a long streamed answer streams one message and posts
// the rest within MAX_REPLY_MESSAGES, the remainder in a file.
func TestE2EStreamedAnswerBounded(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.env["MAX_REPLY_MESSAGES"] = "2"
	h.start()
	answer := strings.Repeat("This answer goes on and on, sentence after sentence. ", 600) // 32 KB
	h.ai.Push(openaitest.Response{Text: answer})
	ts := h.post(general, alice, "<@U0BOT> tell me everything", "")
	h.replies(general, ts, 4)
	msgs, files := answerOnce(t, h, ts, 3)
	if len(msgs) != 3 || files != 1 {
		t.Fatalf("%d messages and %d files; want the stream, 2 posted messages and a file", len(msgs), files)
	}
}

// TestE2ESpecialMentionsDefused: special mentions in the model's answer reach Slack
// escaped, streamed or posted, and the user mention it copied stays a mention.
func TestE2ESpecialMentionsDefused(t *testing.T) {
	answer := "Done. <!channel> <!here> <!everyone> <!subteam^S0TEAM|@team> — ask <@U0ALICE>."
	for _, stream := range []string{"false", "true"} {
		t.Run("Stream="+stream, func(t *testing.T) {
			h := newHarness(t, emulator.Config{})
			h.env["STREAM_ANSWERS"] = stream
			h.start()
			h.ai.Push(openaitest.Response{Text: answer})
			ts := h.post(general, alice, "<@U0BOT> tell everyone", "")
			h.replies(general, ts, 1)
			msgs, _ := answerOnce(t, h, ts, 1)
			if text := msgs[0].Text; strings.Contains(text, "<!") || !strings.Contains(text, "<@U0ALICE>") {
				t.Fatalf("answer %q: want special mentions escaped, the user mention kept", text)
			}
			if streamed := len(h.emu.Calls("chat.startStream")) > 0; streamed != (stream == "true") {
				t.Fatalf("streamed %v with STREAM_ANSWERS=%s", streamed, stream)
			}
			// The text goes in appends and, the last of it, with the stop.
			for _, c := range append(h.emu.Calls("chat.appendStream"), h.emu.Calls("chat.stopStream")...) {
				if text := c.Params.Get("markdown_text"); strings.Contains(text, "<!") {
					t.Errorf("%s markdown_text %q", c.Method, text)
				}
			}
		})
	}
}

func TestLoadConfigMaxReplyMessages(t *testing.T) {
	setEnv(t, nil)
	var c Config
	if err := LoadConfig(&c); err != nil || c.MaxReplyMessages != bot.DefaultMaxReplyMessages {
		t.Fatalf("MAX_REPLY_MESSAGES default %d (%v), want %d", c.MaxReplyMessages, err, bot.DefaultMaxReplyMessages)
	}
	setEnv(t, map[string]string{"MAX_REPLY_MESSAGES": "0"})
	want := "MAX_REPLY_MESSAGES: expected a whole number above 0"
	if err := LoadConfig(&c); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}
