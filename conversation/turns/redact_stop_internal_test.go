package turns

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// TestRedactingStreamScrubsStopText: the last text a stream's stop carries
// (chat.stopStream's markdown_text) is scrubbed like its appends.
func TestRedactingStreamScrubsStopText(t *testing.T) {
	const secret = "sk-stop-secret-1234"
	emu, err := emulator.NewServer(emulator.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	ctx := t.Context()
	api := slack.New(emu.Config().BotToken, slack.OptionAPIURL(emu.URL()))
	me, err := bot.Authenticate(ctx, api)
	if err != nil {
		t.Fatal(err)
	}
	root, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "a question", "")
	if err != nil {
		t.Fatal(err)
	}
	m := redactMessenger(bot.NewMessenger(api, me, slog.New(slog.NewTextHandler(io.Discard, nil))), strings.NewReplacer(secret, "[REDACTED]").Replace)
	key := conversation.Key{ChannelID: "C0GENERAL", ThreadTS: root}
	st, err := m.(conversation.StreamingMessenger).StartStream(ctx, key, "U0ALICE", conversation.Tag{InputID: "in-1", Answer: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.(conversation.TextStopper).StopWithText(ctx, "The key is "+secret+".", true); err != nil {
		t.Fatal(err)
	}
	calls := emu.Calls("chat.stopStream")
	if len(calls) != 1 {
		t.Fatalf("%d chat.stopStream calls, want 1", len(calls))
	}
	if got := calls[0].Params.Get("markdown_text"); got != "The key is [REDACTED]." {
		t.Errorf("chat.stopStream's markdown_text %q, want the secret scrubbed", got)
	}
	for _, msg := range emu.BotMessages("C0GENERAL", root) {
		if strings.Contains(msg.Text, secret) {
			t.Errorf("message %s reads %q", msg.TS, msg.Text)
		}
	}
}
