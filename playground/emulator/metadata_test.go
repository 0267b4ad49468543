package emulator_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/playground/emulator"
)

// replies reads a whole thread with conversations.replies.
func replies(t *testing.T, api *slack.Client, channel, ts string, withMetadata bool) []slack.Message {
	t.Helper()
	msgs, _, _, err := api.GetConversationRepliesContext(testContext(t), &slack.GetConversationRepliesParameters{
		ChannelID: channel, Timestamp: ts, IncludeAllMetadata: withMetadata,
	})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// history reads a channel's top-level messages with conversations.history.
func history(t *testing.T, api *slack.Client, channel string, withMetadata bool) []slack.Message {
	t.Helper()
	resp, err := api.GetConversationHistoryContext(testContext(t), &slack.GetConversationHistoryParameters{
		ChannelID: channel, IncludeAllMetadata: withMetadata,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Messages
}

// byTS returns the message with ts among msgs.
func byTS(msgs []slack.Message, ts string) (slack.Message, bool) {
	for _, m := range msgs {
		if m.Timestamp == ts {
			return m, true
		}
	}
	return slack.Message{}, false
}

func turnMetadata(input string, n int) slack.SlackMetadata {
	return slack.SlackMetadata{EventType: "threadwright_turn", EventPayload: map[string]any{"input_id": input, "n": n}}
}

func TestMessageMetadata(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> hi", "")

	_, ts, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("answer", false), slack.MsgOptionTS(parent),
		slack.MsgOptionMetadata(turnMetadata("in-1", 1)))
	if err != nil {
		t.Fatal(err)
	}
	_, top, err := api.PostMessage("C0RANDOM", slack.MsgOptionText("new thread", false), slack.MsgOptionMetadata(turnMetadata("in-2", 1)))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("RepliesOnlyWithIncludeAllMetadata", func(t *testing.T) {
		if m, ok := byTS(replies(t, api, "C0GENERAL", parent, false), ts); !ok || m.Metadata.EventType != "" {
			t.Errorf("without include_all_metadata: %+v", m.Metadata)
		}
		m, ok := byTS(replies(t, api, "C0GENERAL", parent, true), ts)
		if !ok || m.Metadata.EventType != "threadwright_turn" || m.Metadata.EventPayload["input_id"] != "in-1" || m.Metadata.EventPayload["n"] != 1.0 {
			t.Errorf("with include_all_metadata: %+v", m.Metadata)
		}
	})
	t.Run("HistoryOnlyWithIncludeAllMetadata", func(t *testing.T) {
		if m, ok := byTS(history(t, api, "C0RANDOM", false), top); !ok || m.Metadata.EventType != "" {
			t.Errorf("without include_all_metadata: %+v", m.Metadata)
		}
		if m, ok := byTS(history(t, api, "C0RANDOM", true), top); !ok || m.Metadata.EventPayload["input_id"] != "in-2" {
			t.Errorf("with include_all_metadata: %+v", m.Metadata)
		}
	})
	t.Run("UpdateReplacesOrKeeps", func(t *testing.T) {
		if _, _, _, err := api.UpdateMessage("C0GENERAL", ts, slack.MsgOptionText("edited", false)); err != nil {
			t.Fatal(err)
		}
		if m, _ := byTS(replies(t, api, "C0GENERAL", parent, true), ts); m.Text != "edited" || m.Metadata.EventPayload["input_id"] != "in-1" {
			t.Errorf("chat.update without metadata: %q %+v", m.Text, m.Metadata)
		}
		if _, _, _, err := api.UpdateMessage("C0GENERAL", ts, slack.MsgOptionText("again", false), slack.MsgOptionMetadata(turnMetadata("in-1", 2))); err != nil {
			t.Fatal(err)
		}
		if m, _ := byTS(replies(t, api, "C0GENERAL", parent, true), ts); m.Metadata.EventPayload["n"] != 2.0 {
			t.Errorf("chat.update with metadata: %+v", m.Metadata)
		}
	})
	t.Run("StopStream", func(t *testing.T) {
		_, sts, err := api.StartStream("C0GENERAL", slack.MsgOptionTS(parent), slack.MsgOptionMarkdownText("Hel"),
			slack.MsgOptionRecipientUserID("U0ALICE"), slack.MsgOptionRecipientTeamID("T0TEAM"))
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := byTS(replies(t, api, "C0GENERAL", parent, true), sts); m.Metadata.EventType != "" {
			t.Errorf("a stream has metadata before it stops: %+v", m.Metadata)
		}
		if _, _, err := api.StopStream("C0GENERAL", sts, slack.MsgOptionMarkdownText("lo"), slack.MsgOptionMetadata(turnMetadata("in-1", 3))); err != nil {
			t.Fatal(err)
		}
		m, _ := byTS(replies(t, api, "C0GENERAL", parent, true), sts)
		if m.Text != "Hello" || m.Metadata.EventPayload["n"] != 3.0 {
			t.Errorf("stopped stream: %q %+v", m.Text, m.Metadata)
		}
		var stored struct {
			EventType string `json:"event_type"`
		}
		if em, _ := emu.Message("C0GENERAL", sts); json.Unmarshal(em.Metadata, &stored) != nil || stored.EventType != "threadwright_turn" {
			t.Errorf("stored metadata %s", em.Metadata)
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for name, raw := range map[string]string{
			"NotJSON":       `{"event_type":`,
			"NoEventType":   `{"event_payload":{"a":1}}`,
			"NoPayload":     `{"event_type":"x"}`,
			"NullPayload":   `{"event_type":"x","event_payload":null}`,
			"StringPayload": `{"event_type":"x","event_payload":"text"}`,
			"NotAnObject":   `["x"]`,
		} {
			body := call(t, emu, "chat.postMessage", url.Values{"channel": {"C0GENERAL"}, "text": {"x"}, "metadata": {raw}})
			if body["error"] != "invalid_metadata_format" {
				t.Errorf("%s: %v", name, body)
			}
		}
	})
}

// call posts params to method with the bot token and decodes the answer.
func call(t *testing.T, emu *emulator.Server, method string, params url.Values) map[string]any {
	t.Helper()
	params.Set("token", emu.Config().BotToken)
	req, err := http.NewRequest(http.MethodPost, emu.URL()+method, strings.NewReader(params.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, req)
}

func TestDeletedMessageLeavesRepliesAndHistory(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> hi", "")
	_, reply, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("reply", false), slack.MsgOptionTS(parent))
	if err != nil {
		t.Fatal(err)
	}
	_, top, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("top", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range []string{reply, top} {
		if _, _, err := api.DeleteMessage("C0GENERAL", ts); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := byTS(replies(t, api, "C0GENERAL", parent, true), reply); ok {
		t.Error("a deleted reply is in conversations.replies")
	}
	if _, ok := byTS(history(t, api, "C0GENERAL", true), top); ok {
		t.Error("a deleted message is in conversations.history")
	}
	if _, ok := byTS(history(t, api, "C0GENERAL", true), parent); !ok {
		t.Error("the parent is gone from conversations.history")
	}
}

func TestFileShareIsAMessage(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "report please", "")
	upload := func(thread string) {
		t.Helper()
		_, err := api.UploadFileContext(testContext(t), slack.UploadFileParameters{
			Filename: "report.md", Content: "# Report\n", FileSize: len("# Report\n"), Channel: "C0GENERAL", ThreadTimestamp: thread,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	upload(parent)
	upload("")
	msgs := replies(t, api, "C0GENERAL", parent, true)
	if len(msgs) != 2 || msgs[1].SubType != "file_share" || msgs[1].BotID != "B0BOT" || len(msgs[1].Files) != 1 || msgs[1].Files[0].Name != "report.md" {
		t.Errorf("thread %+v", msgs)
	}
	top := history(t, api, "C0GENERAL", true)
	if len(top) != 2 || top[0].SubType != "file_share" || top[0].ThreadTimestamp != "" || len(top[0].Files) != 1 || top[0].Files[0].Name != "report.md" {
		t.Errorf("history %+v", top)
	}
}
