package bot_test

import (
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// TestStreamStopWithText: the last text of a stream goes with its stop, one
// chat.stopStream carrying it as markdown_text (its special mentions defused) and no
// chat.appendStream; the message shows it, stopped and tagged final. A stream old
// enough to rotate appends the text (continuing in a fresh message), then stops, so
// that no text reaches a message near Slack's expiry.
func TestStreamStopWithText(t *testing.T) {
	clk := &clock{}
	emu, err := emulator.NewServer(emulator.Config{Logger: discard(), Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	api := slack.New(emu.Config().BotToken, slack.OptionAPIURL(emu.URL()))
	ctx := testContext(t)
	me, err := bot.Authenticate(ctx, api)
	if err != nil {
		t.Fatal(err)
	}
	msg := bot.NewMessenger(api, me, discard(), bot.WithStreamRotation(0, clk.now))
	root, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "a question", "")
	if err != nil {
		t.Fatal(err)
	}
	key := conversation.Key{ChannelID: "C0GENERAL", ThreadTS: root}

	t.Run("OneCall", func(t *testing.T) {
		st, err := msg.StartStream(ctx, key, "U0ALICE", conversation.Tag{InputID: "in-1", Answer: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Append(ctx, "The answer "); err != nil {
			t.Fatal(err)
		}
		appends, stops := len(emu.Calls("chat.appendStream")), len(emu.Calls("chat.stopStream"))
		ts, err := st.(conversation.TextStopper).StopWithText(ctx, "ends here, <!channel>.", true)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(emu.Calls("chat.appendStream")) - appends; n != 0 {
			t.Errorf("%d chat.appendStream calls for the last text, want none", n)
		}
		calls := emu.Calls("chat.stopStream")[stops:]
		if len(calls) != 1 || calls[0].Params.Get("markdown_text") != bot.DefuseMentions("ends here, <!channel>.") {
			t.Fatalf("chat.stopStream calls %v, want one carrying the defused text", calls)
		}
		m := lastBotMessage(t, emu, root)
		if m.TS != ts || m.Streaming || m.Text != "The answer "+bot.DefuseMentions("ends here, <!channel>.") {
			t.Errorf("message %s (streaming %v) reads %q", m.TS, m.Streaming, m.Text)
		}
		posted, err := msg.Posted(ctx, key, "in-1", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(posted) != 1 || !posted[0].Tag.Final {
			t.Errorf("tagged posts %+v, want the message, final", posted)
		}
	})

	t.Run("OldStreamAppendsFirst", func(t *testing.T) {
		st, err := msg.StartStream(ctx, key, "U0ALICE", conversation.Tag{InputID: "in-2", Answer: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Append(ctx, "Begun. "); err != nil {
			t.Fatal(err)
		}
		clk.add(bot.DefaultStreamRotation + time.Second)
		ts, err := st.(conversation.TextStopper).StopWithText(ctx, "Ended.", true)
		if err != nil {
			t.Fatal(err)
		}
		if msgs := st.Messages(); len(msgs) != 2 || msgs[1] != ts {
			t.Fatalf("the stream wrote %v, want two messages, the last %s", msgs, ts)
		}
		m := lastBotMessage(t, emu, root)
		if m.TS != ts || m.Streaming || m.Text != "Ended." {
			t.Errorf("fresh message %s (streaming %v) reads %q, want %q", m.TS, m.Streaming, m.Text, "Ended.")
		}
	})

	// An old stream whose last text could not be appended is stopped, but not tagged
	// final: the message lacks the answer's tail, and the error tells the caller to
	// replace it (a re-run must not take it for the whole answer: Outbox.PriorAnswer).
	t.Run("FailedAppendStopsNotFinal", func(t *testing.T) {
		st, err := msg.StartStream(ctx, key, "U0ALICE", conversation.Tag{InputID: "in-3", Answer: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Append(ctx, "Begun. "); err != nil {
			t.Fatal(err)
		}
		clk.add(bot.DefaultStreamRotation + time.Second)
		emu.FailNext("chat.appendStream", "internal_error")
		ts, err := st.(conversation.TextStopper).StopWithText(ctx, "Lost.", true)
		if err == nil {
			t.Fatal("StopWithText succeeded though its append failed")
		}
		m := lastBotMessage(t, emu, root)
		if m.TS != ts || m.Streaming {
			t.Errorf("message %s (streaming %v), want %s stopped", m.TS, m.Streaming, ts)
		}
		posted, err := msg.Posted(ctx, key, "in-3", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range posted {
			if p.Tag.Final {
				t.Errorf("post %s (text %q) tagged final without the last text", p.TS, p.Text)
			}
		}
	})
}

// lastBotMessage returns the bot's last message in the thread root.
func lastBotMessage(t *testing.T, emu *emulator.Server, root string) emulator.Message {
	t.Helper()
	msgs := emu.BotMessages("C0GENERAL", root)
	if len(msgs) == 0 {
		t.Fatal("no bot message")
	}
	return msgs[len(msgs)-1]
}
