package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// The cases of Run for text: long texts, Unicode, and text a store repairs to store it.

func testLargeText(t *testing.T, s conversation.Store) {
	big := strings.Repeat("0123456789", 5000) // 50,000 characters
	summary := strings.Repeat("s", 10000)
	state := conversation.State{Summary: summary}
	saved := mustSave(t, s, conversation.Turn{Key: key, State: state, Append: []conversation.Message{user(big)}})
	mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, State: state, Append: []conversation.Message{assistant(big + "!")}})
	cp := mustLoad(t, s, key, 10)
	if len(cp.Messages) != 2 || cp.Messages[0].Text != big || cp.Messages[1].Text != big+"!" {
		t.Errorf("large texts did not round-trip (lengths %v)", lengths(cp.Messages))
	}
	if cp.Conversation.State.Summary != summary {
		t.Errorf("large summary did not round-trip (length %d)", len(cp.Conversation.State.Summary))
	}
}

func lengths(msgs []conversation.Message) []int {
	var out []int
	for _, m := range msgs {
		out = append(out, len(m.Text))
	}
	return out
}

func testUnicode(t *testing.T, s conversation.Store) {
	k := conversation.Key{TeamID: "T✓", ChannelID: "Cč", ThreadTS: "1700000000.000100"}
	text := "Grüße, 世界! 👋🏽 नमस्ते — שלום «quotes» \"double\" 'single' \\backslash\\ tab\there\nnew line e\u0301 \u200d"
	state := conversation.State{Mode: conversation.ModeAssistant, Summary: text}
	meta := json.RawMessage(`{"note": "日本語 🎉", "escaped": "\u00e9\n"}`)
	m := user(text)
	m.Meta = meta
	mustSave(t, s, conversation.Turn{Key: k, State: state, Append: []conversation.Message{m}})
	mustEnqueue(t, s, conversation.Input{ID: "msg:T✓:Cč:1", Key: k, Kind: conversation.KindUserMessage, Message: &conversation.UserMessage{Text: text}})

	cp := mustLoad(t, s, k, 1)
	if cp.Conversation.Key != k || cp.Conversation.State.Summary != text {
		t.Errorf("key %q, summary %q; want %q, %q", cp.Conversation.Key, cp.Conversation.State.Summary, k, text)
	}
	if len(cp.Messages) != 1 || cp.Messages[0].Text != text || !jsonEqual(t, cp.Messages[0].Meta, meta) {
		t.Errorf("messages = %+v; want text %q, meta %s", cp.Messages, text, meta)
	}
	if in := mustBeginID(t, s, mustAcquire(t, s, k, ownerA, liveTTL), "msg:T✓:Cč:1", 1); in.Message == nil || in.Message.Text != text {
		t.Errorf("begun input's message = %+v; want text %q", in.Message, text)
	}
}

// testStorableText checks that NUL characters and invalid UTF-8, which PostgreSQL's
// TEXT and JSONB cannot hold, in an input's message, a message's text, user id and
// Slack ts, a state string and a meta string are stored repaired in both backends
// (NUL dropped, each byte that is not UTF-8 U+FFFD), and that a JSON text that only
// looks like the escape \u0000 is kept.
func testStorableText(t *testing.T, s conversation.Store) {
	const (
		bad      = "a\x00b\xffc\xfe\xfdd\x00"
		repaired = "ab\uFFFDc\uFFFD\uFFFDd"
	)
	k := thread("text")
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	in := inputIn(k, "t1", "U\x001")
	in.Message.Text = bad
	in.EventID = "Ev\x00"
	mustEnqueue(t, s, in)
	got := mustBeginID(t, s, l, "t1", 1)
	if got.Message == nil || got.Message.Text != repaired || got.Message.UserID != "U1" || got.EventID != "Ev" {
		t.Errorf("input's message = %+v, event %q; want text %q, user U1, event Ev", got.Message, got.EventID, repaired)
	}
	if st := mustRenew(t, s, ownerA, liveTTL)[k]; st.MessageBy != "U1" {
		t.Errorf("Renew: message by %q; want U1", st.MessageBy)
	}

	m := user(bad)
	m.UserID, m.SlackTS = "U\x002", "1.\xff3"
	m.Meta = json.RawMessage("{\"note\": \"a\\u0000b\xffc\", \"kept\": \"\\\\u0000\", \"k\\u0000ey\": [\"\\u0000\"], \"pair\": \"\\ud83d\\ude00\", \"lone\": \"\\ud83dx\"}")
	state := conversation.State{Mode: conversation.ModeAssistant, Summary: bad, Entities: []conversation.Entity{{ID: bad}}}
	mustSave(t, s, conversation.Turn{Key: k, Lease: l, InputID: "t1", State: state, Append: []conversation.Message{m}})

	cp := mustLoad(t, s, k, 10)
	if c := cp.Conversation.State; c.Summary != repaired || len(c.Entities) != 1 || c.Entities[0].ID != repaired {
		t.Errorf("state = %+v; want the summary and entity id %q", c, repaired)
	}
	if len(cp.Messages) != 1 {
		t.Fatalf("loaded %d messages; want 1", len(cp.Messages))
	}
	gm := cp.Messages[0]
	if gm.Text != repaired || gm.UserID != "U2" || gm.SlackTS != "1.\uFFFD3" {
		t.Errorf("message = text %q, user %q, ts %q; want %q, U2, %q", gm.Text, gm.UserID, gm.SlackTS, repaired, "1.\uFFFD3")
	}
	wantMeta := json.RawMessage(`{"note": "ab\ufffdc", "kept": "\\u0000", "key": [""], "pair": "😀", "lone": "\ufffdx"}`)
	if !jsonEqual(t, gm.Meta, wantMeta) {
		t.Errorf("meta = %s; want %s", gm.Meta, wantMeta)
	}
}
