package bot_test

import (
	"slices"
	"testing"
	"time"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// TestStatusSetOnlyWhenItChanges: the Messenger calls assistant.threads.setStatus
// only when the thread's status changes. The same status again costs no call; a
// post of the bot in the thread (which clears the status in Slack) makes the next
// status a change again and the clear after it needless; while a stream is open no
// status is set (the streamed message shows the bot working), and after its Stop
// one is; a status older than statusFresh is set again, since Slack drops it after
// two minutes. The emulator shows the status Slack would at each step.
func TestStatusSetOnlyWhenItChanges(t *testing.T) {
	clk := &clock{}
	h := startMessengerWith(t, emulator.Config{Now: clk.now}, bot.WithStreamRotation(0, clk.now))
	emu, msg, ctx := h.emu, h.msg, h.ctx
	root := h.say(t, "C0GENERAL", "a question", "")
	key := conversation.Key{ChannelID: "C0GENERAL", ThreadTS: root}
	var sent []string // the statuses the Messenger should have sent, in order
	step := func(name, status, shows string, calls bool) {
		t.Helper()
		if err := msg.SetStatus(ctx, key, status); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if calls {
			sent = append(sent, status)
		}
		var got []string
		for _, c := range emu.Calls("assistant.threads.setStatus") {
			got = append(got, c.Params.Get("status"))
		}
		if !slices.Equal(got, sent) {
			t.Fatalf("%s: setStatus calls %q, want %q", name, got, sent)
		}
		if s := emu.Status("C0GENERAL", root); s != shows {
			t.Fatalf("%s: the thread shows %q, want %q", name, s, shows)
		}
	}
	step("first status", "is thinking…", "is thinking…", true)
	step("same status", "is thinking…", "is thinking…", false)
	step("new status", "is searching…", "is searching…", true)
	step("same again", "is searching…", "is searching…", false)
	if _, err := msg.PostReply(ctx, key, "a progress note", conversation.Tag{InputID: "in-1"}); err != nil {
		t.Fatal(err)
	}
	step("status after a post", "is searching…", "is searching…", true)
	if _, err := msg.PostReply(ctx, key, "the answer", conversation.Tag{InputID: "in-1", Answer: true}); err != nil {
		t.Fatal(err)
	}
	step("clear after a post", "", "", false)
	step("status of the next turn", "is thinking…", "is thinking…", true)
	st, err := msg.StartStream(ctx, key, "U0ALICE", conversation.Tag{InputID: "in-2", Answer: true})
	if err != nil {
		t.Fatal(err)
	}
	step("status while streaming", "is reading…", "", false)
	step("clear while streaming", "", "", false)
	step("status while still streaming", "is writing…", "", false)
	if _, err := st.Stop(ctx, true); err != nil {
		t.Fatal(err)
	}
	step("status after the stream", "is writing…", "is writing…", true)
	clk.add(100 * time.Second)
	step("same status, older than Slack keeps it", "is writing…", "is writing…", true)
	step("clear", "", "", true)
	step("clear again", "", "", true) // a cleared thread is forgotten: nothing is known
}
