package emulator_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/playground/emulator"
)

// A person's file share: conversations.replies shows the message with subtype
// file_share and the file objects the bot's fixture has (bot/testdata/events/
// file_share.json), the size a test announces, and url_private serves the content to
// the bot token only, counting the downloads.
func TestPostUserFiles(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "thread", "")
	ts, ids, err := emu.PostUserFiles("C0GENERAL", "U0ALICE", "see attached", parent,
		emulator.Upload{Name: "notes.txt", Content: []byte("hello")},
		emulator.Upload{Name: "dump.csv", Content: []byte("a,b"), Size: 200 << 20})
	if err != nil || len(ids) != 2 {
		t.Fatalf("PostUserFiles: %v, %v", ids, err)
	}
	msgs, _, _, err := api.GetConversationRepliesContext(testContext(t), &slack.GetConversationRepliesParameters{
		ChannelID: "C0GENERAL", Timestamp: parent, Oldest: ts, Latest: ts, Inclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	var m *slack.Message
	for i := range msgs {
		if msgs[i].Timestamp == ts {
			m = &msgs[i]
		}
	}
	if m == nil || m.SubType != "file_share" || m.User != "U0ALICE" || len(m.Files) != 2 {
		t.Fatalf("the shared message: %+v", m)
	}
	if f := m.Files[1]; f.Size != 200<<20 || f.URLPrivate == "" || f.User != "U0ALICE" || f.Name != "dump.csv" {
		t.Fatalf("the second file object: %+v", f)
	}

	// The file object has the fields of Slack's (the bot's fixture) that the bot reads.
	body, err := os.ReadFile("../../bot/testdata/events/file_share.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Event struct {
			Files []slack.File `json:"files"`
		} `json:"event"`
	}
	if err := json.Unmarshal(body, &fixture); err != nil || len(fixture.Event.Files) != 1 {
		t.Fatalf("the fixture: %v", err)
	}
	if want := fixture.Event.Files[0]; want.URLPrivate == "" || want.Size == 0 || want.Mimetype == "" {
		t.Fatalf("the fixture's file object lacks what the bot reads: %+v", want)
	}

	get := func(token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, m.Files[0].URLPrivate, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(""); code != http.StatusForbidden {
		t.Fatalf("url_private without a token: HTTP %d, want 403", code)
	}
	if code, b := get(emu.Config().BotToken); code != http.StatusOK || b != "hello" {
		t.Fatalf("url_private with the bot token: HTTP %d %q", code, b)
	}
	if n := emu.FileDownloads(ids[0]); n != 1 {
		t.Fatalf("downloads %d, want 1", n)
	}
}

// A file share that mentions the bot delivers its message event and an app_mention,
// both with the message's files, as Slack's payloads carry them.
func TestPostUserFilesMentionCarriesTheFiles(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	ts, ids, err := emu.PostUserFiles("C0GENERAL", "U0ALICE", "<@U0BOT> read this", "", emulator.Upload{Name: "notes.txt", Content: []byte("hello")})
	if err != nil || len(ids) != 1 {
		t.Fatalf("PostUserFiles: %v, %v", ids, err)
	}
	kinds := map[string]bool{}
	for _, e := range emu.Envelopes() {
		if e.TS != ts {
			continue
		}
		var body struct {
			Event struct {
				Files []slack.File `json:"files"`
			} `json:"event"`
		}
		if err := json.Unmarshal(e.Payload, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Event.Files) != 1 || body.Event.Files[0].ID != ids[0] || body.Event.Files[0].URLPrivate == "" {
			t.Errorf("the %s event's files: %+v; want the file %s", e.EventType, body.Event.Files, ids[0])
		}
		kinds[e.EventType] = true
	}
	if !kinds["message"] || !kinds["app_mention"] {
		t.Fatalf("events of the message: %v; want message and app_mention", kinds)
	}
}
