package emulator_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/playground/emulator"
)

// TestInterleavedThreads: threads whose replies interleave in a channel keep their
// own replies in order, a reply to a reply joins the parent's thread, and a deleted
// reply leaves its thread and its count; conversations.replies (the real slack-go
// client) and the Server's own view agree; a deleted parent with replies stays as a
// tombstone with them.
func TestInterleavedThreads(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	post := func(text, threadTS string) string {
		t.Helper()
		ts, err := emu.PostUserMessage("C0RANDOM", "U0ALICE", text, threadTS)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	a, b := post("A", ""), post("B", "")
	a1 := post("A1", a)
	post("B1", b)
	post("A2", a1) // a reply to a reply is a reply to its parent
	post("B2", b)
	if err := emu.DeleteMessage("C0RANDOM", a1); err != nil {
		t.Fatal(err)
	}
	texts := func(msgs []slack.Message) string {
		var out []string
		for _, m := range msgs {
			out = append(out, m.Text)
		}
		return strings.Join(out, ",")
	}
	for parent, want := range map[string]string{a: "A,A2", b: "B,B1,B2"} {
		msgs, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C0RANDOM", Timestamp: parent})
		if err != nil {
			t.Fatal(err)
		}
		if got := texts(msgs); got != want {
			t.Errorf("conversations.replies %s = %s, want %s", parent, got, want)
		}
		if n := strings.Count(want, ","); msgs[0].ReplyCount != n {
			t.Errorf("thread %s: reply_count %d, want %d", want, msgs[0].ReplyCount, n)
		}
		var view []string
		for _, m := range emu.Thread("C0RANDOM", parent) {
			view = append(view, m.Text)
		}
		if got := strings.Join(view, ","); got != want {
			t.Errorf("Thread(%s) = %s, want %s", parent, got, want)
		}
	}
	if _, ok := emu.Message("C0RANDOM", a1); ok {
		t.Error("the deleted reply is still found")
	}
	if err := emu.DeleteMessage("C0RANDOM", b); err != nil { // a parent with replies: a tombstone
		t.Fatal(err)
	}
	if thread := emu.Thread("C0RANDOM", b); len(thread) != 3 || thread[0].Subtype != "tombstone" || thread[2].Text != "B2" {
		t.Errorf("the deleted parent's thread = %+v, want its tombstone and its 2 replies", thread)
	}
	history, err := api.GetConversationHistory(&slack.GetConversationHistoryParameters{ChannelID: "C0RANDOM"})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(history.Messages); !strings.HasPrefix(got, "This message was deleted.,A") {
		t.Errorf("conversations.history = %s, want the parents, newest first", got)
	}
}

// BenchmarkThreadInBusyChannel measures a thread's lookups in a channel of many
// threads: conversations.replies of one of them, which costs the thread's size.
func BenchmarkThreadInBusyChannel(b *testing.B) {
	emu := MustStart(b, emulator.Config{})
	api := NewAPI(emu)
	var parents []string
	for i := range 2000 {
		ts, err := emu.PostUserMessage("C0RANDOM", "U0ALICE", fmt.Sprintf("q%d", i), "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := emu.PostUserMessage("C0RANDOM", "U0ALICE", "reply", ts); err != nil {
			b.Fatal(err)
		}
		parents = append(parents, ts)
	}
	b.ResetTimer()
	for i := range b.N {
		msgs, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C0RANDOM", Timestamp: parents[i%len(parents)]})
		if err != nil || len(msgs) != 2 {
			b.Fatalf("replies = %d, %v", len(msgs), err)
		}
	}
}
