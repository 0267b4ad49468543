package bot

import (
	"os"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// A file_share reply in a thread, in the shape Slack delivers it
// (testdata/events/file_share.json), becomes a person's message with the files of its
// event, so that none is read back.
func TestInputFromFileShareEvent(t *testing.T) {
	body, err := os.ReadFile("testdata/events/file_share.json")
	if err != nil {
		t.Fatal(err)
	}
	in, ok, reason := inputFromEvent(parse(t, string(body)), me)
	if !ok {
		t.Fatalf("dropped: %s", reason)
	}
	m := in.Message
	if m.FileShare || m.TS != "1733100000.000200" || m.ThreadTS != "1733099000.000100" || m.Text != "what does this error say?" {
		t.Fatalf("got %+v", m)
	}
	want := conversation.FileRef{ID: "F0123ABCDEF", Name: "error.png", MIME: "image/png", Size: 48213, URL: "https://files.slack.com/files-pri/T1-F0123ABCDEF/error.png"}
	if len(m.Files) != 1 || m.Files[0] != want {
		t.Fatalf("files = %+v; want [%+v]", m.Files, want)
	}
}
