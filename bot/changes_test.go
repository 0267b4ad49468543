package bot

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// TestEditAndDeletionSamples reads Slack's shapes of message_changed and
// message_deleted (testdata/edits/SOURCES.md): an edit of the text is a KindEdit input
// carrying the new text, without the bot's mention, for the message's thread; an edit
// of nothing but metadata (an unfurl) is dropped; a deletion is a KindDelete input for
// the deleted message, also when Slack sends no previous_message.
func TestEditAndDeletionSamples(t *testing.T) {
	bot := Identity{TeamID: "T1", UserID: "U0BOT", BotID: "B0BOT"}
	thread := conversation.Key{TeamID: "T123ABC456", ChannelID: "C123ABC456", ThreadTS: "1355517500.000001"}
	for _, tc := range []struct {
		file   string
		want   *conversation.Input // nil: dropped
		reason string
	}{
		{"message_changed.json", &conversation.Input{
			ID: "edit:T123ABC456:C123ABC456:1355517523.000005:1358878755.000001", EventID: "Ev123ABC456", Key: thread, Kind: conversation.KindEdit,
			Message: &conversation.UserMessage{UserID: "U123ABC456", Text: "how many vacation days do I get?", TS: "1355517523.000005", ThreadTS: thread.ThreadTS},
		}, ""},
		{"message_changed_unfurl.json", nil, dropUnchanged},
		{"message_deleted.json", &conversation.Input{
			ID: "delete:T123ABC456:C123ABC456:1355517523.000005", EventID: "Ev123ABC458", Key: thread, Kind: conversation.KindDelete,
			Message: &conversation.UserMessage{UserID: "U123ABC456", TS: "1355517523.000005", ThreadTS: thread.ThreadTS},
		}, ""},
		{"message_deleted_reference.json", &conversation.Input{
			ID: "delete:T123ABC456:C123ABC456:1358878749.000002", EventID: "Ev123ABC456",
			Key: conversation.Key{TeamID: "T123ABC456", ChannelID: "C123ABC456", ThreadTS: "1358878749.000002"}, Kind: conversation.KindDelete,
			Message: &conversation.UserMessage{TS: "1358878749.000002", ThreadTS: "1358878749.000002"},
		}, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "edits", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			in, ok, reason := inputFromEvent(parse(t, string(body)), bot)
			if tc.want == nil {
				if ok || reason != tc.reason {
					t.Fatalf("ok %v, reason %q; want dropped: %q", ok, reason, tc.reason)
				}
				return
			}
			if !ok {
				t.Fatalf("dropped: %s", reason)
			}
			if in.ID != tc.want.ID || in.EventID != tc.want.EventID || in.Key != tc.want.Key || in.Kind != tc.want.Kind ||
				in.Message == nil || !reflect.DeepEqual(*in.Message, *tc.want.Message) {
				t.Errorf("input %+v (message %+v); want %+v (message %+v)", in, in.Message, *tc.want, tc.want.Message)
			}
		})
	}
}

// TestBotMessageChangesDropped: the bot's own messages change all the time (a stream,
// chat.update of a card) and other bots' too; neither is a person's edit or deletion.
func TestBotMessageChangesDropped(t *testing.T) {
	for name, event := range map[string]string{
		"own update": `{"type":"message","subtype":"message_changed","channel":"C1","ts":"2.1",` +
			`"message":{"type":"message","user":"UBOT","bot_id":"BBOT","text":"new","ts":"1.1","edited":{"user":"UBOT","ts":"2.1"}},` +
			`"previous_message":{"type":"message","user":"UBOT","bot_id":"BBOT","text":"old","ts":"1.1"}}`,
		"other bot": `{"type":"message","subtype":"message_changed","channel":"C1","ts":"2.1",` +
			`"message":{"type":"message","subtype":"bot_message","bot_id":"B2","text":"new","ts":"1.1"},` +
			`"previous_message":{"type":"message","subtype":"bot_message","bot_id":"B2","text":"old","ts":"1.1"}}`,
		"own deletion": `{"type":"message","subtype":"message_deleted","channel":"C1","ts":"2.1","deleted_ts":"1.1",` +
			`"previous_message":{"type":"message","user":"UBOT","bot_id":"BBOT","text":"old","ts":"1.1"}}`,
	} {
		if _, ok, reason := inputFromEvent(parse(t, callback(event)), me); ok || reason != dropNotAPerson {
			t.Errorf("%s: ok %v, reason %q; want dropped: %q", name, ok, reason, dropNotAPerson)
		}
	}
}
