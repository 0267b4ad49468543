package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// messengerHarness is a Messenger (on the real slack-go client) posting to an
// emulator, with no Bot running.
type messengerHarness struct {
	emu *emulator.Server
	api *slack.Client
	msg *bot.Messenger
	ctx context.Context
}

func startMessenger(t *testing.T) *messengerHarness {
	t.Helper()
	return startMessengerWith(t, emulator.Config{})
}

// startMessengerWith is startMessenger on an emulator configured with cfg (its Logger
// set to discard), the Messenger made with opts.
func startMessengerWith(t *testing.T, cfg emulator.Config, opts ...bot.MessengerOption) *messengerHarness {
	t.Helper()
	cfg.Logger = discard()
	emu, err := emulator.NewServer(cfg)
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
	return &messengerHarness{emu: emu, api: api, msg: bot.NewMessenger(api, me, discard(), opts...), ctx: ctx}
}

// say posts a person's message (a reply when thread is set) and returns its ts.
func (h *messengerHarness) say(t *testing.T, channel, text, thread string) string {
	t.Helper()
	ts, err := h.emu.PostUserMessage(channel, "U0ALICE", text, thread)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// posted calls Posted and fails the test on an error.
func (h *messengerHarness) posted(t *testing.T, key conversation.Key, inputID, after string) []conversation.Posted {
	t.Helper()
	got, err := h.msg.Posted(h.ctx, key, inputID, after)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// tsOf returns the ts of posted messages.
func tsOf(ps []conversation.Posted) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.TS)
	}
	return out
}

// metadataOf decodes the stored metadata of a message.
func metadataOf(t *testing.T, m emulator.Message) map[string]any {
	t.Helper()
	var meta struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	if err := json.Unmarshal(m.Metadata, &meta); err != nil || meta.EventType != bot.TurnEventType {
		t.Fatalf("metadata %s: %v", m.Metadata, err)
	}
	return meta.EventPayload
}

func TestPostReplyTags(t *testing.T) {
	h := startMessenger(t)
	parent := h.say(t, "C0GENERAL", "<@U0BOT> tell me everything", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}
	tag := conversation.Tag{InputID: "in-1", N: 1, Answer: true, Final: true}
	text := longText(6000)
	var first []conversation.Posted

	t.Run("RoundTrip", func(t *testing.T) {
		last, err := h.msg.PostReply(h.ctx, key, text, tag)
		if err != nil {
			t.Fatal(err)
		}
		first = h.posted(t, key, "in-1", parent)
		if len(first) != 2 || first[1].TS != last {
			t.Fatalf("posted %+v, want 2 ending with %s", first, last)
		}
		for i, p := range first {
			if !reflect.DeepEqual(p.Tag, tag) || p.Piece != i || p.Of != 2 || p.File != "" {
				t.Errorf("piece %d: %+v", i, p)
			}
			if m, _ := h.emu.Message("C0GENERAL", p.TS); m.Text != p.Text || p.Text == "" {
				t.Errorf("piece %d text %q, message %q", i, p.Text, m.Text)
			}
		}
		payload := metadataOf(t, h.emu.BotMessages("C0GENERAL", parent)[1])
		want := map[string]any{"input_id": "in-1", "n": 1.0, "piece": 1.0, "of": 2.0, "answer": true, "final": true}
		if !reflect.DeepEqual(payload, want) {
			t.Errorf("event_payload %v, want %v", payload, want)
		}
	})
	t.Run("ReplaceEdits", func(t *testing.T) {
		before := len(h.emu.Thread("C0GENERAL", parent))
		replace := tag
		replace.Replace = tsOf(first)
		edited := strings.ReplaceAll(text, "soil", "river")
		last, err := h.msg.PostReply(h.ctx, key, edited, replace)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(h.emu.Thread("C0GENERAL", parent)); n != before || last != first[1].TS {
			t.Errorf("%d messages (had %d), last %s", n, before, last)
		}
		again := h.posted(t, key, "in-1", parent)
		if strings.Join(tsOf(again), ",") != strings.Join(tsOf(first), ",") {
			t.Fatalf("posted %v, want %v", tsOf(again), tsOf(first))
		}
		for i, p := range again {
			m, _ := h.emu.Message("C0GENERAL", p.TS)
			if !m.Edited || !strings.Contains(m.Text, "river") || strings.Contains(m.Text, "soil") || p.Of != 2 || p.Piece != i {
				t.Errorf("piece %d: %+v (edited %v)", i, p, m.Edited)
			}
		}
	})
	t.Run("ReplaceWithFewerPieces", func(t *testing.T) {
		replace := tag
		replace.Replace = tsOf(first)
		last, err := h.msg.PostReply(h.ctx, key, "In short: yes.", replace)
		if err != nil {
			t.Fatal(err)
		}
		got := h.posted(t, key, "in-1", parent)
		if last != first[0].TS || len(got) != 1 || got[0].TS != first[0].TS || got[0].Of != 1 || got[0].Text != "In short: yes." {
			t.Errorf("last %s, posted %+v", last, got)
		}
		if _, ok := h.emu.Message("C0GENERAL", first[1].TS); ok {
			t.Error("the second piece was not deleted")
		}
	})
	t.Run("OtherInputsIgnored", func(t *testing.T) {
		if _, err := h.msg.PostReply(h.ctx, key, "For another question.", conversation.Tag{InputID: "in-other", N: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.emu.PostBotMessage("C0GENERAL", "B0OTHER", "another bot", parent); err != nil {
			t.Fatal(err)
		}
		if got := h.posted(t, key, "in-1", parent); len(got) != 1 || got[0].TS != first[0].TS {
			t.Errorf("posted %+v", got)
		}
	})
	t.Run("UntaggedAfter", func(t *testing.T) {
		old, err := h.msg.PostReply(h.ctx, key, "An old untagged reply.", conversation.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := h.emu.Message("C0GENERAL", old); m.Metadata != nil {
			t.Errorf("untagged reply with metadata %s", m.Metadata)
		}
		followUp := h.say(t, "C0GENERAL", "and then?", parent)
		cut, err := h.msg.PostReply(h.ctx, key, "Cut short", conversation.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		got := h.posted(t, key, "in-2", followUp)
		if len(got) != 1 || got[0].TS != cut || got[0].Tag.InputID != "" || got[0].Text != "Cut short" {
			t.Errorf("posted %+v, want only %s", got, cut)
		}
		if got := h.posted(t, key, "in-2", ""); len(got) != 0 {
			t.Errorf("with no after, posted %+v", got)
		}
	})
	t.Run("MalformedMetadataIsUntagged", func(t *testing.T) {
		after := h.say(t, "C0GENERAL", "more", parent)
		bad := slack.SlackMetadata{EventType: bot.TurnEventType, EventPayload: map[string]any{"input_id": 5}}
		_, ts, err := h.api.PostMessageContext(h.ctx, "C0GENERAL", slack.MsgOptionText("odd", false), slack.MsgOptionTS(parent), slack.MsgOptionMetadata(bad))
		if err != nil {
			t.Fatal(err)
		}
		if got := h.posted(t, key, "in-3", after); len(got) != 1 || got[0].TS != ts || got[0].Tag.InputID != "" {
			t.Errorf("posted %+v", got)
		}
	})
}

func TestPostCardTags(t *testing.T) {
	h := startMessenger(t)
	after := h.say(t, "C0RANDOM", "before the card", "")
	top := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0RANDOM"}
	tag := conversation.Tag{InputID: "in-1", N: 1}
	ts, err := h.msg.PostCard(h.ctx, top, artifactCard(longText(30000)), tag)
	if err != nil {
		t.Fatal(err)
	}
	got := h.posted(t, top, "in-1", after)
	if len(got) != 1 || got[0].TS != ts || !reflect.DeepEqual(got[0].Tag, tag) || got[0].Of != 1 {
		t.Fatalf("posted %+v", got)
	}
	if got := h.posted(t, top, "in-1", ts); len(got) != 0 {
		t.Errorf("at the top level, messages up to after are not looked at: %+v", got)
	}

	t.Run("ReplaceAtTopLevel", func(t *testing.T) {
		replace := tag
		replace.Replace = []string{ts}
		again, err := h.msg.PostCard(h.ctx, top, inThread(staleCard(), top), replace)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := h.emu.Message("C0RANDOM", ts)
		if again != ts || len(h.emu.BotMessages("C0RANDOM", "")) != 1 || !m.Edited || m.Text != staleCard().Text {
			t.Errorf("ts %s, message %+v", again, m)
		}
	})
	t.Run("ReplaceInThread", func(t *testing.T) {
		key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0RANDOM", ThreadTS: ts}
		tag := conversation.Tag{InputID: "in-2", N: 1}
		if _, err := h.msg.PostCard(h.ctx, key, inThread(artifactCard(longText(30000)), key), tag); err != nil {
			t.Fatal(err)
		}
		first := h.posted(t, key, "in-2", ts)
		if len(first) != 3 || first[2].Piece != 2 || first[2].Of != 3 {
			t.Fatalf("posted %+v", first)
		}
		tag.Replace = tsOf(first)
		last, err := h.msg.PostCard(h.ctx, key, inThread(artifactCard(budgetText), key), tag)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.posted(t, key, "in-2", ts); last != first[0].TS || len(got) != 1 || got[0].TS != last || got[0].Of != 1 {
			t.Errorf("last %s, posted %+v", last, got)
		}
	})
}

func TestStreamTags(t *testing.T) {
	h := startMessenger(t)
	parent := h.say(t, "C0GENERAL", "<@U0BOT> explain", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}

	t.Run("StopSetsTheTag", func(t *testing.T) {
		st, err := h.msg.StartStream(h.ctx, key, "U0ALICE", conversation.Tag{InputID: "in-1", N: 2, Answer: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Append(h.ctx, "Hello"); err != nil {
			t.Fatal(err)
		}
		ts, err := st.Stop(h.ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		got := h.posted(t, key, "in-1", parent)
		want := conversation.Posted{TS: ts, Tag: conversation.Tag{InputID: "in-1", N: 2, Answer: true}, Piece: 0, Of: 1, Text: "Hello"}
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("posted %+v, want %+v", got, want)
		}
		if p := metadataOf(t, h.emu.BotMessages("C0GENERAL", parent)[0]); p["final"] != false || p["answer"] != true {
			t.Errorf("event_payload %v", p)
		}
	})
	followUp := h.say(t, "C0GENERAL", "and more?", parent)
	var cut string
	t.Run("CutStreamFound", func(t *testing.T) {
		st, err := h.msg.StartStream(h.ctx, key, "U0ALICE", conversation.Tag{InputID: "in-2", N: 1, Answer: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Append(h.ctx, "Half an ans"); err != nil {
			t.Fatal(err)
		}
		got := h.posted(t, key, "in-2", followUp) // the process died here
		if len(got) != 1 || got[0].Tag.InputID != "" || got[0].Text != "Half an ans" {
			t.Fatalf("posted %+v", got)
		}
		cut = got[0].TS
	})
	t.Run("ReplaceDeletesFirst", func(t *testing.T) {
		st, err := h.msg.StartStream(h.ctx, key, "U0ALICE", conversation.Tag{InputID: "in-2", N: 1, Answer: true, Replace: []string{cut}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := h.emu.Message("C0GENERAL", cut); ok {
			t.Error("the cut stream was not deleted")
		}
		if err := st.Append(h.ctx, "A whole answer."); err != nil {
			t.Fatal(err)
		}
		ts, err := st.Stop(h.ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		got := h.posted(t, key, "in-2", followUp)
		if len(got) != 1 || got[0].TS != ts || !got[0].Tag.Final || got[0].Tag.InputID != "in-2" {
			t.Errorf("posted %+v", got)
		}
	})
}

func TestUploadFoundByName(t *testing.T) {
	h := startMessenger(t)
	parent := h.say(t, "C0GENERAL", "<@U0BOT> the report", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}
	tag := conversation.Tag{InputID: "in-1", N: 3, Final: true}
	f := conversation.File{Name: "report.md", Content: []byte("# Report\n"), Comment: "Here it is."}
	if err := h.msg.Upload(h.ctx, key, f, tag); err != nil {
		t.Fatal(err)
	}
	got := h.posted(t, key, "in-1", parent)
	if len(got) != 1 || got[0].File != "report.md" || got[0].Tag.InputID != "" || got[0].Text != "Here it is." {
		t.Fatalf("posted %+v", got)
	}
	tag.Replace = []string{got[0].TS}
	if err := h.msg.Upload(h.ctx, key, f, tag); err != nil {
		t.Fatal(err)
	}
	if files := h.emu.Files(); len(files) != 1 {
		t.Errorf("%d files uploaded; a replaced upload must not upload again", len(files))
	}
}

func TestPostedReadsPages(t *testing.T) {
	h := startMessenger(t)
	const chatter = 450 // more than two pages of 200
	t.Run("Thread", func(t *testing.T) {
		parent := h.say(t, "C0GENERAL", "<@U0BOT> busy thread", "")
		key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}
		for i := range chatter {
			h.say(t, "C0GENERAL", fmt.Sprintf("chatter %d", i), parent)
		}
		ts, err := h.msg.PostReply(h.ctx, key, "At last.", conversation.Tag{InputID: "in-1", N: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := h.posted(t, key, "in-1", parent); len(got) != 1 || got[0].TS != ts {
			t.Errorf("posted %+v", got)
		}
		calls := h.emu.Calls("conversations.replies")
		if len(calls) != 3 || calls[0].Params.Get("include_all_metadata") != "1" || calls[2].Params.Get("cursor") == "" {
			t.Errorf("%d conversations.replies calls: %+v", len(calls), calls)
		}
	})
	t.Run("TopLevel", func(t *testing.T) {
		top := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0RANDOM"}
		after := h.say(t, "C0RANDOM", "start", "")
		ts, err := h.msg.PostCard(h.ctx, top, staleCard(), conversation.Tag{InputID: "in-1", N: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i := range chatter {
			h.say(t, "C0RANDOM", fmt.Sprintf("chatter %d", i), "")
		}
		if got := h.posted(t, top, "in-1", after); len(got) != 1 || got[0].TS != ts {
			t.Errorf("posted %+v", got)
		}
		calls := h.emu.Calls("conversations.history")
		if len(calls) != 3 || calls[0].Params.Get("oldest") != after || calls[0].Params.Get("include_all_metadata") != "1" {
			t.Errorf("%d conversations.history calls: %+v", len(calls), calls)
		}
	})
}

func TestMessengerDelete(t *testing.T) {
	h := startMessenger(t)
	parent := h.say(t, "C0GENERAL", "<@U0BOT> hi", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}
	ts, err := h.msg.PostReply(h.ctx, key, "Oops.", conversation.Tag{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.msg.Delete(h.ctx, key, ts); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.emu.Message("C0GENERAL", ts); ok {
		t.Error("message still there")
	}
	if err := h.msg.Delete(h.ctx, key, parent); err == nil || !strings.Contains(err.Error(), "chat.delete") {
		t.Errorf("deleting a person's message: %v", err)
	}
}

func TestCompareTS(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1700000000.000100", "1700000000.000100", 0},
		{"1700000000.000100", "1700000000.000200", -1},
		{"999999999.999999", "1000000000.000000", -1}, // not as strings
		{"1700000000.1", "1700000000.000100", 1},
		{"1700000001", "1700000000.999999", 1},
		{"", "1700000000.000100", -1},
	} {
		if got := conversation.CompareTS(tc.a, tc.b); got != tc.want {
			t.Errorf("compareTS(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := conversation.CompareTS(tc.b, tc.a); got != -tc.want {
			t.Errorf("compareTS(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

// TestStatusPassingFailureKeepsTheStatus: a passing failure of
// assistant.threads.setStatus (internal_error) is returned and tried again by the
// next status: the channel does not fall back to reactions for good, as it does when
// setStatus is refused.
func TestStatusPassingFailureKeepsTheStatus(t *testing.T) {
	h := startMessenger(t)
	root := h.say(t, "C0GENERAL", "a question", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: root}
	h.emu.FailNext("assistant.threads.setStatus", "internal_error")
	if err := h.msg.SetStatus(h.ctx, key, "is thinking…"); err == nil {
		t.Fatal("a failed setStatus reported no error")
	}
	before := len(h.emu.Calls("assistant.threads.setStatus"))
	if err := h.msg.SetStatus(h.ctx, key, "is thinking…"); err != nil {
		t.Fatal(err)
	}
	if len(h.emu.Calls("assistant.threads.setStatus")) != before+1 {
		t.Error("the status after a passing failure was not set with assistant.threads.setStatus")
	}
	if m, _ := h.emu.Message("C0GENERAL", root); len(m.Reactions) != 0 {
		t.Errorf("%d reactions on the question; want none (the status is Slack's)", len(m.Reactions))
	}
}

// TestStatusReactionRemovedAfterAFailure: where assistant.threads.setStatus is
// refused, the status is an ⏳ reaction; a removal Slack failed is tried again by the
// next clear (it used to be forgotten, and the reaction stuck).
func TestStatusReactionRemovedAfterAFailure(t *testing.T) {
	h := startMessenger(t)
	root := h.say(t, "C0GENERAL", "a question", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: root}
	reactions := func() int {
		m, _ := h.emu.Message("C0GENERAL", root)
		return len(m.Reactions)
	}
	h.emu.FailNext("assistant.threads.setStatus", "not_allowed")
	if err := h.msg.SetStatus(h.ctx, key, "is thinking…"); err != nil {
		t.Fatal(err)
	}
	if reactions() != 1 {
		t.Fatal("no status reaction where setStatus is refused")
	}
	h.emu.FailNext("reactions.remove", "internal_error")
	if err := h.msg.SetStatus(h.ctx, key, ""); err == nil {
		t.Fatal("a failed removal reported no error")
	}
	if err := h.msg.SetStatus(h.ctx, key, ""); err != nil {
		t.Fatal(err)
	}
	if n := reactions(); n != 0 {
		t.Fatalf("%d reactions after the status was cleared again; want 0", n)
	}
}
