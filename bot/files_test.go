package bot

import (
	"os"
	"testing"
)

// A file_share reply in a thread, in the shape Slack delivers it
// (testdata/events/file_share.json), becomes a person's message marked FileShare, so
// that its files are read back (slack-go does not decode the event's files array).
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
	if !m.FileShare || m.TS != "1733100000.000200" || m.ThreadTS != "1733099000.000100" || m.Text != "what does this error say?" {
		t.Fatalf("got %+v", m)
	}
}
