package bot_test

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// TestUpdateOverLimitIsSplit: Slack caps chat.update's text at 4,000 characters even
// where a new message may hold 40,000 (the emulator's LenientTextLimit, with
// MaxUpdateTextLength enforced all the same). A reply of 9,000 characters written
// over a short one (Tag.Replace: a streamed answer replaced by its reply) edits the
// old message with its first piece, within the limit, and posts the rest after it, as
// a long reply's pieces are: every character shows once, in order.
func TestUpdateOverLimitIsSplit(t *testing.T) {
	emu, err := emulator.NewServer(emulator.Config{Logger: discard(), LenientTextLimit: true})
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
	msg := bot.NewMessenger(api, me, discard())
	root, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "explain it at length", "")
	if err != nil {
		t.Fatal(err)
	}
	key := conversation.Key{ChannelID: "C0GENERAL", ThreadTS: root}
	tag := conversation.Tag{InputID: "in-1", Answer: true, Final: true}
	short, err := msg.PostReply(ctx, key, "A short start.", tag)
	if err != nil {
		t.Fatal(err)
	}

	// The emulator refuses an update over the limit, as Slack does.
	long := strings.Repeat("The deploy of api-7 went through its canary stage. ", 180) // 9,180 characters
	if _, _, _, err := api.UpdateMessageContext(ctx, "C0GENERAL", short, slack.MsgOptionText(long, false)); err == nil || !strings.Contains(err.Error(), "msg_too_long") {
		t.Fatalf("chat.update of %d characters: %v; want msg_too_long", len(long), err)
	}

	replace := tag
	replace.Replace = []string{short}
	last, err := msg.PostReply(ctx, key, long, replace)
	if err != nil {
		t.Fatalf("reply written over the short one: %v", err)
	}
	msgs := emu.BotMessages("C0GENERAL", root)
	if len(msgs) < 3 || msgs[0].TS != short || !msgs[0].Edited || msgs[len(msgs)-1].TS != last {
		t.Fatalf("%d messages (first %s edited %v, last %s); want the edited one and at least two more, ending at %s",
			len(msgs), msgs[0].TS, msgs[0].Edited, msgs[len(msgs)-1].TS, last)
	}
	var got []string
	for _, m := range msgs {
		if n := len([]rune(m.Text)); n > emulator.MaxUpdateTextLength {
			t.Errorf("message %s holds %d characters", m.TS, n)
		}
		got = append(got, strings.TrimSpace(m.Text))
	}
	if strings.Join(got, " ") != strings.TrimSpace(long) {
		t.Errorf("the messages do not show the reply once, in order")
	}
}
