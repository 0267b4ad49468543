package main

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// VISION_MODELS' default patterns match the models that see and not the others.
func TestModelMatchesVisionModels(t *testing.T) {
	f, _ := reflect.TypeFor[Config]().FieldByName("VisionModels")
	patterns := strings.Split(f.Tag.Get("default"), ",")
	for model, want := range map[string]bool{
		"gpt-4o": true, "gpt-4o-mini": true, "gpt-4.1-nano": true, "gpt-5": true, "o3-mini": true, "o4-mini": true,
		"GPT-4o": true, "claude-3-5-sonnet": true, "gemini-2.0-flash": true,
		"gpt-3.5-turbo": false, "gpt-test": false, "o1-mini": false, "text-embedding-3-small": false,
	} {
		if got := modelMatches(patterns, model); got != want {
			t.Errorf("modelMatches(%q) = %v, want %v", model, got, want)
		}
	}
}

// readBacks is a messageFiles that counts the messages read back and finds no files.
type readBacks struct{ ts []string }

func (r *readBacks) MessageFiles(ctx context.Context, _ conversation.Key, ts string) ([]conversation.FileRef, error) {
	r.ts = append(r.ts, ts)
	return nil, ctx.Err()
}

// A message is read back for its files only when its event said it has files it did
// not carry (FileShare): a mention without files costs no conversations.replies.
func TestReadFilesReadsBackOnlyWhatTheEventLacks(t *testing.T) {
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}
	for _, c := range []struct {
		name string
		msg  conversation.UserMessage
		want int
	}{
		{"Mention", conversation.UserMessage{TS: "10.1", Mentioned: true}, 0},
		{"DirectMessage", conversation.UserMessage{TS: "10.1", Direct: true}, 0},
		{"FilesInTheEvent", conversation.UserMessage{TS: "10.1", Mentioned: true,
			Files: []conversation.FileRef{{ID: "F1", Name: "big.pdf", Size: 1 << 40, URL: "https://files.slack.com/x"}}}, 0},
		{"FilesNotInTheEvent", conversation.UserMessage{TS: "10.1", Mentioned: true, FileShare: true}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rb := &readBacks{}
			f := &fileReader{slack: rb, maxBytes: 1 << 20, log: slog.New(slog.DiscardHandler)}
			if _, err := f.ReadFiles(context.Background(), key, &c.msg); err != nil {
				t.Fatal(err)
			}
			if len(rb.ts) != c.want {
				t.Errorf("messages read back: %v; want %d", rb.ts, c.want)
			}
		})
	}
}
