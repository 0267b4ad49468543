package bot_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// clock is real time plus an offset the test sets forward.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time      { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) add(d time.Duration) { c.offset.Add(int64(d)) }

// TestStreamRotatesBeforeSlackExpires: a streamed answer that goes on for six and a
// half minutes, on a clock the test sets forward, continues in a fresh message each
// time its message is four minutes old (bot.DefaultStreamRotation), before the
// emulator's five-minute expiry (emulator.DefaultStreamExpiry) would refuse its
// appends: every appended piece shows once, in order, across the messages, each
// stopped and tagged with the answer, only the last as its final part. Without the
// rotation, the emulator refuses the late append as Slack does.
func TestStreamRotatesBeforeSlackExpires(t *testing.T) {
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
	root, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "a long question", "")
	if err != nil {
		t.Fatal(err)
	}
	key := conversation.Key{ChannelID: "C0GENERAL", ThreadTS: root}
	tag := conversation.Tag{InputID: "in-1", Answer: true}
	st, err := msg.StartStream(ctx, key, "U0ALICE", tag)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range 14 { // one piece every 30 s: 6.5 minutes
		piece := strings.Repeat(string(rune('a'+i)), 3) + " "
		if err := st.Append(ctx, piece); err != nil {
			t.Fatalf("append %d at %s: %v", i, time.Duration(i)*30*time.Second, err)
		}
		want.WriteString(piece)
		clk.add(30 * time.Second)
	}
	written := st.Messages()
	last, err := st.Stop(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	msgs := emu.BotMessages("C0GENERAL", root)
	if len(msgs) != 2 {
		t.Fatalf("%d messages; want the answer in 2 (rotated once at 4 minutes)", len(msgs))
	}
	var got strings.Builder
	for _, m := range msgs {
		if m.Streaming {
			t.Errorf("message %s still streaming", m.TS)
		}
		got.WriteString(m.Text)
	}
	if got.String() != want.String() {
		t.Errorf("the messages show %q; want %q", got.String(), want.String())
	}
	if len(written) != 2 || written[0] != msgs[0].TS || written[1] != msgs[1].TS {
		t.Errorf("the stream says it wrote %v; want %s, %s", written, msgs[0].TS, msgs[1].TS)
	}
	if msgs[len(msgs)-1].TS != last {
		t.Errorf("Stop returned %s; want the last message, %s", last, msgs[len(msgs)-1].TS)
	}
	posted, err := msg.Posted(ctx, key, "in-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(posted) != 2 || posted[0].Tag.Final || !posted[1].Tag.Final || posted[1].TS != last {
		t.Errorf("tagged posts %+v; want both, only the last final", posted)
	}

	// Without the rotation, the append after five minutes is refused, as by Slack.
	plain := bot.NewMessenger(api, me, discard(), bot.WithStreamRotation(time.Hour, clk.now))
	st, err = plain.StartStream(ctx, key, "U0ALICE", conversation.Tag{InputID: "in-2", Answer: true})
	if err != nil {
		t.Fatal(err)
	}
	clk.add(emulator.DefaultStreamExpiry)
	if err := st.Append(ctx, "late"); err == nil || !strings.Contains(err.Error(), "message_not_in_streaming_state") {
		t.Fatalf("append after the expiry: %v; want message_not_in_streaming_state", err)
	}
	if _, err := st.Stop(ctx, true); !errors.Is(err, conversation.ErrStreamEnded) {
		t.Errorf("stop after the expiry: %v; want conversation.ErrStreamEnded", err)
	}
}
