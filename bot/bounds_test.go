package bot_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// withMaxReplies replaces the harness's Messenger with one of at most n messages a reply.
func (h *messengerHarness) withMaxReplies(t *testing.T, n int) {
	t.Helper()
	me, err := bot.Authenticate(h.ctx, h.api)
	if err != nil {
		t.Fatal(err)
	}
	h.msg = bot.NewMessenger(h.api, me, discard(), bot.WithMaxReplyMessages(n))
}

// overflowFiles returns the uploaded files named bot.OverflowFileName.
func overflowFiles(emu *emulator.Server) []emulator.File {
	var out []emulator.File
	for _, f := range emu.Files() {
		if f.Name == bot.OverflowFileName {
			out = append(out, f)
		}
	}
	return out
}

// words returns the words of s, mrkdwn's escapes undone and ``` fences left out.
func words(s string) []string {
	s = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "```", " ").Replace(s)
	return strings.Fields(s)
}

func TestPostReplyBounded(t *testing.T) {
	h := startMessenger(t)
	h.withMaxReplies(t, 3)
	parent := h.say(t, "C0GENERAL", "<@U0BOT> tell me everything", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}
	tag := conversation.Tag{InputID: "in-1", N: 1, Answer: true, Final: true}
	text := longText(30000) + "\n\n```\n" + strings.Repeat("code & <more>\n", 400) + "```\nThe end."
	var first []conversation.Posted

	t.Run("RestInAFile", func(t *testing.T) {
		last, err := h.msg.PostReply(h.ctx, key, text, tag)
		if err != nil {
			t.Fatal(err)
		}
		first = h.posted(t, key, "in-1", parent)
		var msgs []conversation.Posted
		for _, p := range first {
			if p.File == "" {
				msgs = append(msgs, p)
			}
		}
		if len(msgs) != 3 || msgs[2].TS != last || msgs[2].Of != 3 {
			t.Fatalf("posted %+v, want 3 messages ending with %s", first, last)
		}
		for i, p := range msgs {
			if n := utf8.RuneCountInString(p.Text); n > bot.MaxMessageChars {
				t.Errorf("message %d has %d characters", i, n)
			}
		}
		if !strings.HasSuffix(msgs[2].Text, bot.OverflowFileName+"._") {
			t.Errorf("the last message does not point to the file: %q", msgs[2].Text[max(0, len(msgs[2].Text)-200):])
		}
		files := overflowFiles(h.emu)
		if len(files) != 1 || files[0].ThreadTS != parent || !files[0].Complete {
			t.Fatalf("overflow files %+v, want one shared in the thread", files)
		}
		var shown []string
		for _, p := range msgs {
			shown = append(shown, words(strings.TrimSuffix(p.Text, "_✂ The rest of the answer is in the attached file, "+bot.OverflowFileName+"._"))...)
		}
		shown = append(shown, words(string(files[0].Content))...)
		if want := words(text); strings.Join(shown, " ") != strings.Join(want, " ") {
			t.Errorf("messages and file hold %d words, the text %d", len(shown), len(want))
		}
		if !strings.Contains(string(files[0].Content), "code & <more>") {
			t.Errorf("the file keeps mrkdwn escapes: %.200q", files[0].Content)
		}
	})
	t.Run("ReplaceUploadsNoSecondFile", func(t *testing.T) {
		replace := tag
		for _, p := range first {
			if p.File == "" {
				replace.Replace = append(replace.Replace, p.TS)
			}
		}
		if _, err := h.msg.PostReply(h.ctx, key, text, replace); err != nil {
			t.Fatal(err)
		}
		if n := len(h.emu.BotMessages("C0GENERAL", parent)); n != 4 {
			t.Errorf("%d bot messages in the thread, want 3 and the file share", n)
		}
		if files := overflowFiles(h.emu); len(files) != 1 {
			t.Errorf("%d overflow files after a re-run, want 1", len(files))
		}
	})
	t.Run("FitsWithoutAFile", func(t *testing.T) {
		thread := h.say(t, "C0GENERAL", "<@U0BOT> a little less", "")
		k := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: thread}
		text := longText(2 * bot.MaxMessageChars)
		if n := len(bot.SplitText(text, bot.MaxMessageChars)); n != 3 {
			t.Fatalf("the text splits into %d pieces; the test needs 3", n)
		}
		if _, err := h.msg.PostReply(h.ctx, k, text, conversation.Tag{}); err != nil {
			t.Fatal(err)
		}
		if n := len(h.emu.BotMessages("C0GENERAL", thread)); n != 3 || len(overflowFiles(h.emu)) != 1 {
			t.Errorf("%d messages, %d files; want 3 messages and no new file", n, len(overflowFiles(h.emu)))
		}
	})
}

func TestPostEphemeralBounded(t *testing.T) {
	h := startMessenger(t)
	h.withMaxReplies(t, 2)
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL"}
	if err := h.msg.PostEphemeral(h.ctx, key, "U0ALICE", longText(20000)); err != nil {
		t.Fatal(err)
	}
	got := h.emu.Ephemerals("C0GENERAL", "U0ALICE")
	if len(got) != 2 || !strings.HasSuffix(got[1].Text, "_✂ Shortened to fit Slack._") {
		t.Fatalf("%d ephemeral messages, want 2, the last shortened", len(got))
	}
	for i, m := range got {
		if n := utf8.RuneCountInString(m.Text); n > bot.MaxMessageChars {
			t.Errorf("message %d has %d characters", i, n)
		}
	}
}

func TestStreamBounded(t *testing.T) {
	h := startMessenger(t)
	parent := h.say(t, "C0GENERAL", "<@U0BOT> explain", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}
	st, err := h.msg.StartStream(h.ctx, key, "U0ALICE", conversation.Tag{InputID: "in-1", N: 1, Answer: true})
	if err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat("x", 1000)
	var appended int
	for i := 0; i < 10; i++ {
		if err := st.Append(h.ctx, chunk); err != nil {
			break
		}
		appended++
	}
	if _, err := st.Stop(h.ctx, true); err != nil {
		t.Fatal(err)
	}
	msgs := h.emu.BotMessages("C0GENERAL", parent)
	if appended != bot.MaxMessageChars/1000 || len(msgs) != 1 || utf8.RuneCountInString(msgs[0].Text) > bot.MaxMessageChars {
		t.Fatalf("%d appends taken, messages %d (%d characters); want the stream to stop at %d characters",
			appended, len(msgs), utf8.RuneCountInString(msgs[0].Text), bot.MaxMessageChars)
	}
}

// specialMentions is model text with every special mention, and a user mention.
const specialMentions = "Hey <!channel> and <!here|here>, <!everyone>, <!subteam^S0TEAM|@team>, on <!date^1392734382^{date}|Feb 18>; <@U0ALICE> knows."

// noSpecialMention fails the test when what, as the emulator recorded it, holds <!.
func noSpecialMention(t *testing.T, what string, recorded ...[]byte) {
	t.Helper()
	for _, r := range recorded {
		if s := string(r); strings.Contains(s, "<!") || strings.Contains(s, `\u003c!`) {
			t.Errorf("%s carries a special mention: %.300s", what, s)
		}
	}
}

func TestSpecialMentionsDefused(t *testing.T) {
	h := startMessenger(t)
	parent := h.say(t, "C0GENERAL", "<@U0BOT> hello", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}

	t.Run("PostReply", func(t *testing.T) {
		ts, err := h.msg.PostReply(h.ctx, key, specialMentions, conversation.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		m, _ := h.emu.Message("C0GENERAL", ts)
		noSpecialMention(t, "the reply", []byte(m.Text))
		if !strings.Contains(m.Text, "<@U0ALICE>") || !strings.Contains(m.Text, "&lt;!channel&gt;") {
			t.Errorf("reply %q: the user mention must stay, the special ones show as written", m.Text)
		}
	})
	t.Run("Stream", func(t *testing.T) {
		st, err := h.msg.StartStream(h.ctx, key, "U0ALICE", conversation.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		// A mention split between two appends.
		for _, chunk := range []string{specialMentions + " then <", "!here> again <", "@U0ALICE>"} {
			if err := st.Append(h.ctx, chunk); err != nil {
				t.Fatal(err)
			}
		}
		ts, err := st.Stop(h.ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := h.emu.Message("C0GENERAL", ts)
		noSpecialMention(t, "the streamed message", []byte(m.Text))
	})
	t.Run("Card", func(t *testing.T) {
		c := conversation.Card{Text: specialMentions, Blocks: []conversation.Block{
			{Kind: conversation.BlockHeader, Text: "<!channel> report"},
			{Kind: conversation.BlockSection, Text: specialMentions},
			{Kind: conversation.BlockContext, Text: "by <!subteam^S0TEAM>"},
		}}
		ts, err := h.msg.PostCard(h.ctx, key, c, conversation.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.msg.UpdateCard(h.ctx, key, ts, conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockSection, Text: "now <!here>"}}}); err != nil {
			t.Fatal(err)
		}
		m, _ := h.emu.Message("C0GENERAL", ts)
		noSpecialMention(t, "the card's text", []byte(m.Text))
		noSpecialMention(t, "the card's mrkdwn", mrkdwnTexts(t, m.Blocks)...)
		long := conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockSection, Text: strings.Repeat(specialMentions+"\n\n", 400)}}}
		if _, err := h.msg.PostCard(h.ctx, key, long, conversation.Tag{}); err != nil {
			t.Fatal(err)
		}
		for _, m := range h.emu.BotMessages("C0GENERAL", parent) {
			noSpecialMention(t, "a long card's message", []byte(m.Text))
			noSpecialMention(t, "a long card's mrkdwn", mrkdwnTexts(t, m.Blocks)...)
		}
	})
	t.Run("Ephemeral", func(t *testing.T) {
		if err := h.msg.PostEphemeral(h.ctx, key, "U0ALICE", specialMentions); err != nil {
			t.Fatal(err)
		}
		if err := h.msg.PostEphemeralCard(h.ctx, key, "U0ALICE", conversation.Card{Text: specialMentions,
			Blocks: []conversation.Block{{Kind: conversation.BlockSection, Text: specialMentions}}}); err != nil {
			t.Fatal(err)
		}
		for _, m := range h.emu.Ephemerals("C0GENERAL", "U0ALICE") {
			noSpecialMention(t, "an ephemeral message", []byte(m.Text))
			noSpecialMention(t, "an ephemeral card", mrkdwnTexts(t, m.Blocks)...)
		}
	})
	t.Run("FileComment", func(t *testing.T) {
		f := conversation.File{Name: "notes.md", Content: []byte("# Notes\n"), Comment: specialMentions}
		if err := h.msg.Upload(h.ctx, key, f, conversation.Tag{}); err != nil {
			t.Fatal(err)
		}
		for _, m := range h.emu.BotMessages("C0GENERAL", parent) {
			if m.Subtype == "file_share" {
				noSpecialMention(t, "a file's comment", []byte(m.Text))
			}
		}
	})
	t.Run("OverflowFile", func(t *testing.T) {
		h.withMaxReplies(t, 1)
		if _, err := h.msg.PostReply(h.ctx, key, strings.Repeat(specialMentions+"\n\n", 60), conversation.Tag{}); err != nil {
			t.Fatal(err)
		}
		files := overflowFiles(h.emu)
		if len(files) != 1 {
			t.Fatalf("%d overflow files", len(files))
		}
		noSpecialMention(t, "the overflow file", files[0].Content)
		for _, m := range h.emu.BotMessages("C0GENERAL", parent) {
			noSpecialMention(t, "a message", []byte(m.Text))
		}
	})
}

// mrkdwnTexts returns the mrkdwn texts of Block Kit blocks as the emulator recorded
// them: the text of sections and the elements of contexts.
func mrkdwnTexts(t *testing.T, blocks json.RawMessage) [][]byte {
	t.Helper()
	if blocks == nil {
		return nil
	}
	var bs []struct {
		Text     *struct{ Type, Text string }  `json:"text"`
		Elements []struct{ Type, Text string } `json:"elements"`
	}
	if err := json.Unmarshal(blocks, &bs); err != nil {
		t.Fatalf("blocks %s: %v", blocks, err)
	}
	var out [][]byte
	for _, b := range bs {
		if b.Text != nil && b.Text.Type == "mrkdwn" {
			out = append(out, []byte(b.Text.Text))
		}
		for _, e := range b.Elements {
			if e.Type == "mrkdwn" {
				out = append(out, []byte(e.Text))
			}
		}
	}
	return out
}

// BenchmarkSplitText2MB splits 2 MB of text, the size a 9 KB table answer once became,
// into messages.
func BenchmarkSplitText2MB(b *testing.B) {
	text := longText(2 << 20)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		bot.SplitText(text, bot.MaxMessageChars)
	}
}
