package bot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/slack-go/slack/slackevents"

	"github.com/threadwright/threadwright/conversation"
)

var me = Identity{TeamID: "T1", UserID: "UBOT", BotID: "BBOT"}

// parse decodes an event_callback body the way socketmode does.
func parse(t *testing.T, body string) slackevents.EventsAPIEvent {
	t.Helper()
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		t.Fatalf("parse event: %v", err)
	}
	return ev
}

func callback(event string) string {
	return `{"type":"event_callback","team_id":"T1","event_id":"Ev1","event":` + event + `}`
}

func TestInputFromEvent(t *testing.T) {
	tests := []struct {
		name   string
		event  string
		reason string // empty: accepted
		want   conversation.Input
	}{
		{
			name:  "AppMentionTopLevel",
			event: `{"type":"app_mention","user":"U1","text":"<@UBOT> hello there","ts":"10.1","channel":"C1"}`,
			want: conversation.Input{ID: "msg:T1:C1:10.1", EventID: "Ev1", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindUserMessage,
				Message: &conversation.UserMessage{UserID: "U1", Text: "hello there", TS: "10.1", ThreadTS: "10.1", Mentioned: true}},
		},
		{
			name:  "AppMentionInThreadWithLabel",
			event: `{"type":"app_mention","user":"U1","text":"what about <@UBOT|tw> this?","ts":"10.5","thread_ts":"10.1","channel":"C1"}`,
			want: conversation.Input{ID: "msg:T1:C1:10.5", EventID: "Ev1", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindUserMessage,
				Message: &conversation.UserMessage{UserID: "U1", Text: "what about this?", TS: "10.5", ThreadTS: "10.1", Mentioned: true}},
		},
		{
			name:  "DirectMessage",
			event: `{"type":"message","channel_type":"im","user":"U1","text":"hi","ts":"11.1","channel":"D1"}`,
			want: conversation.Input{ID: "msg:T1:D1:11.1", EventID: "Ev1", Key: conversation.Key{TeamID: "T1", ChannelID: "D1", ThreadTS: "11.1"}, Kind: conversation.KindUserMessage,
				Message: &conversation.UserMessage{UserID: "U1", Text: "hi", TS: "11.1", ThreadTS: "11.1", Direct: true}},
		},
		{
			name:  "ThreadReplyWithoutMention",
			event: `{"type":"message","channel_type":"channel","user":"U1","text":"and then?","ts":"10.9","thread_ts":"10.1","channel":"C1"}`,
			want: conversation.Input{ID: "msg:T1:C1:10.9", EventID: "Ev1", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindUserMessage,
				Message: &conversation.UserMessage{UserID: "U1", Text: "and then?", TS: "10.9", ThreadTS: "10.1"}},
		},
		{name: "OwnMessage", event: `{"type":"message","channel_type":"channel","user":"UBOT","bot_id":"BBOT","text":"answer","ts":"10.2","thread_ts":"10.1","channel":"C1"}`, reason: dropOwnMessage},
		{name: "OtherBot", event: `{"type":"message","subtype":"bot_message","bot_id":"BOTHER","text":"beep","ts":"10.3","thread_ts":"10.1","channel":"C1"}`, reason: dropBotMessage},
		{name: "OtherBotMention", event: `{"type":"app_mention","user":"U2","bot_id":"BOTHER","text":"<@UBOT> beep","ts":"10.3","channel":"C1"}`, reason: dropBotMessage},
		// A person's edits and deletions are inputs (changes_test.go); the bot's own are not.
		{name: "OwnMessageChanged", event: `{"type":"message","subtype":"message_changed","channel_type":"channel","channel":"C1","ts":"10.4","message":{"type":"message","user":"UBOT","bot_id":"BBOT","text":"edited","ts":"10.1"}}`, reason: dropNotAPerson},
		{name: "OwnMessageDeleted", event: `{"type":"message","subtype":"message_deleted","channel_type":"channel","channel":"C1","ts":"10.4","deleted_ts":"10.1","previous_message":{"type":"message","user":"UBOT","bot_id":"BBOT","text":"x","ts":"10.1"}}`, reason: dropNotAPerson},
		{name: "ChannelMessageWithoutMention", event: `{"type":"message","channel_type":"channel","user":"U1","text":"lunch?","ts":"12.1","channel":"C1"}`, reason: dropNoMention},
		{
			// Slack may send a message with files that mentions the bot with no
			// app_mention: it is the mention, with the files its event carries.
			name:  "FileShareMentioningTheBot",
			event: `{"type":"message","subtype":"file_share","channel_type":"channel","user":"U1","text":"<@UBOT> summarise this","ts":"10.5","channel":"C1","files":[{"id":"F1","name":"r.pdf","mimetype":"application/pdf","size":2048,"url_private":"https://files.slack.com/files-pri/T1-F1/r.pdf"}]}`,
			want: conversation.Input{ID: "msg:T1:C1:10.5", EventID: "Ev1", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.5"}, Kind: conversation.KindUserMessage,
				Message: &conversation.UserMessage{UserID: "U1", Text: "summarise this", TS: "10.5", ThreadTS: "10.5", Mentioned: true,
					Files: []conversation.FileRef{{ID: "F1", Name: "r.pdf", MIME: "application/pdf", Size: 2048, URL: "https://files.slack.com/files-pri/T1-F1/r.pdf"}}}},
		},
		{
			// A file_share message with no files array: the message is read back.
			name:  "FileShareWithoutFiles",
			event: `{"type":"message","subtype":"file_share","channel_type":"channel","user":"U1","text":"<@UBOT> summarise this","ts":"10.5","channel":"C1"}`,
			want: conversation.Input{ID: "msg:T1:C1:10.5", EventID: "Ev1", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.5"}, Kind: conversation.KindUserMessage,
				Message: &conversation.UserMessage{UserID: "U1", Text: "summarise this", TS: "10.5", ThreadTS: "10.5", Mentioned: true, FileShare: true}},
		},
		{
			// An app_mention carries the message's files: none is read back.
			name:  "AppMentionWithFiles",
			event: `{"type":"app_mention","user":"U1","text":"<@UBOT> summarise this","ts":"10.5","channel":"C1","upload":false,"files":[{"id":"F1","name":"r.pdf","url_private":"https://files.slack.com/files-pri/T1-F1/r.pdf"}]}`,
			want: conversation.Input{ID: "msg:T1:C1:10.5", EventID: "Ev1", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.5"}, Kind: conversation.KindUserMessage,
				Message: &conversation.UserMessage{UserID: "U1", Text: "summarise this", TS: "10.5", ThreadTS: "10.5", Mentioned: true,
					Files: []conversation.FileRef{{ID: "F1", Name: "r.pdf", URL: "https://files.slack.com/files-pri/T1-F1/r.pdf"}}}},
		},
		{
			// An app_mention marked upload without its files: they are read back.
			name:  "AppMentionUploadWithoutFiles",
			event: `{"type":"app_mention","user":"U1","text":"<@UBOT> summarise this","ts":"10.5","channel":"C1","upload":true}`,
			want: conversation.Input{ID: "msg:T1:C1:10.5", EventID: "Ev1", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.5"}, Kind: conversation.KindUserMessage,
				Message: &conversation.UserMessage{UserID: "U1", Text: "summarise this", TS: "10.5", ThreadTS: "10.5", Mentioned: true, FileShare: true}},
		},
		{name: "FileShareWithoutMention", event: `{"type":"message","subtype":"file_share","channel_type":"channel","user":"U1","text":"minutes","ts":"10.6","channel":"C1","files":[{"id":"F1","name":"r.pdf"}]}`, reason: dropNoMention},
		{name: "MessageDuplicatingMention", event: `{"type":"message","channel_type":"channel","user":"U1","text":"<@UBOT> hello","ts":"10.1","channel":"C1"}`, reason: dropMentionCopy},
		{name: "SimilarUserIDIsNotAMention", event: `{"type":"message","channel_type":"channel","user":"U1","text":"<@UBOTX> hello","ts":"10.7","channel":"C1"}`, reason: dropNoMention},
		{name: "MissingUser", event: `{"type":"app_mention","text":"<@UBOT> hi","ts":"10.1","channel":"C1"}`, reason: dropIncomplete},
		{name: "MissingChannel", event: `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"10.1"}`, reason: dropIncomplete},
		{name: "OtherEventType", event: `{"type":"reaction_added","user":"U1","reaction":"eyes","item":{"type":"message","channel":"C1","ts":"10.1"}}`, reason: dropUnhandledType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, ok, reason := inputFromEvent(parse(t, callback(tt.event)), me)
			if tt.reason != "" {
				if ok || reason != tt.reason {
					t.Fatalf("got ok=%v reason=%q, want dropped with %q", ok, reason, tt.reason)
				}
				return
			}
			if !ok {
				t.Fatalf("dropped: %s", reason)
			}
			got, _ := json.Marshal(in)
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Errorf("input\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestInputFromEventSameIDForMentionAndMessage checks that the app_mention and the
// message event of one Slack message deduplicate to one input.
func TestInputFromEventSameIDForMentionAndMessage(t *testing.T) {
	mention, _, _ := inputFromEvent(parse(t, callback(`{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"10.5","thread_ts":"10.1","channel":"C1"}`)), me)
	reply, _, _ := inputFromEvent(parse(t, callback(`{"type":"message","channel_type":"channel","user":"U1","text":"hi","ts":"10.5","thread_ts":"10.1","channel":"C1"}`)), me)
	if mention.ID != reply.ID {
		t.Fatalf("ids differ: %q vs %q", mention.ID, reply.ID)
	}
}

// TestInputFromEventFixtures runs Slack's field-superset samples (all fields present,
// values blank) through the bot's path: a sample slack-go cannot decode reaches the bot
// as socketmode's ErrorBadMessage and must still be ackable by its envelope_id; one it
// decodes must not become an input (user, channel and ts are blank).
func TestInputFromEventFixtures(t *testing.T) {
	files, _ := filepath.Glob("../../shared/fixtures/slack/events/*.json")
	if len(files) == 0 {
		t.Skip("shared fixtures not found beside the repository")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var probe map[string]any
			if err := json.Unmarshal(body, &probe); err != nil {
				t.Fatal(err)
			}
			probe["type"] = "event_callback" // the samples blank it
			body, _ = json.Marshal(probe)
			ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
			if err != nil {
				frame, _ := json.Marshal(map[string]any{"envelope_id": "env-1", "type": "events_api", "payload": json.RawMessage(body)})
				if id, err := envelopeID(frame); err != nil || id != "env-1" {
					t.Fatalf("undecodable sample (%v) cannot be acked: %q, %v", err, id, err)
				}
				return
			}
			if _, ok, _ := inputFromEvent(ev, me); ok {
				t.Errorf("a sample with blank user, channel and ts was accepted")
			}
		})
	}
}

func TestEnvelopeID(t *testing.T) {
	id, err := envelopeID(json.RawMessage(`{"envelope_id":"e-1","type":"events_api","payload":"garbage"}`))
	if err != nil || id != "e-1" {
		t.Fatalf("got %q, %v", id, err)
	}
	for _, raw := range []string{`{"type":"events_api"}`, `not json`} {
		if _, err := envelopeID(json.RawMessage(raw)); err == nil {
			t.Errorf("%s: want an error", raw)
		}
	}
}
