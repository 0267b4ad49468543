package emulator_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/threadwright/threadwright/playground/emulator"
)

// fixtures is Slack's published payload samples (see ../../../shared/fixtures/SOURCES.md).
var fixtures = filepath.Join("..", "..", "..", "shared", "fixtures", "slack")

func readFixture(tb testing.TB, name string) map[string]any {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, name))
	if os.IsNotExist(err) {
		tb.Skipf("fixture %s not found", name)
	}
	if err != nil {
		tb.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return v
}

// shapeDiff lists where got does not fit sample, a field-superset sample of
// Slack's: fields that the sample lacks, or whose JSON kind differs. Array
// elements are compared with the sample element of the same "type" when
// the elements have one, else with the first sample element. null fits
// anything.
func shapeDiff(path string, got, sample any) []string {
	if got == nil || sample == nil {
		return nil
	}
	switch g := got.(type) {
	case map[string]any:
		s, ok := sample.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: object, sample has %T", path, sample)}
		}
		var diffs []string
		for _, k := range sortedKeys(g) {
			sv, ok := s[k]
			if !ok {
				diffs = append(diffs, path+"."+k+": not in the sample")
				continue
			}
			diffs = append(diffs, shapeDiff(path+"."+k, g[k], sv)...)
		}
		return diffs
	case []any:
		s, ok := sample.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: array, sample has %T", path, sample)}
		}
		var diffs []string
		for i, el := range g {
			if match := sampleElement(el, s); match != nil {
				diffs = append(diffs, shapeDiff(fmt.Sprintf("%s[%d]", path, i), el, match)...)
			}
		}
		return diffs
	default:
		if fmt.Sprintf("%T", got) != fmt.Sprintf("%T", sample) {
			return []string{fmt.Sprintf("%s: %T, sample has %T", path, got, sample)}
		}
		return nil
	}
}

func sampleElement(el any, samples []any) any {
	if len(samples) == 0 {
		return nil
	}
	obj, ok := el.(map[string]any)
	if !ok || obj["type"] == nil {
		return samples[0]
	}
	for _, s := range samples {
		if so, ok := s.(map[string]any); ok && so["type"] == obj["type"] {
			return s
		}
	}
	return nil // a block or element type the sample does not show
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// merge adds the fields of extra to sample, recursively.
func merge(sample, extra map[string]any) map[string]any {
	out := make(map[string]any, len(sample))
	for k, v := range sample {
		out[k] = v
	}
	for k, v := range extra {
		if sm, ok := out[k].(map[string]any); ok {
			if em, ok := v.(map[string]any); ok {
				out[k] = merge(sm, em)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func checkShape(t *testing.T, got map[string]any, sample map[string]any) {
	t.Helper()
	for _, d := range shapeDiff("", got, sample) {
		t.Error(d)
	}
}

func asMap(tb testing.TB, raw []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestWebAPIFixtures checks that the emulator's answers fit Slack's
// samples in fixtures/slack/api and that the samples decode into the
// slack-go types the client uses.
func TestWebAPIFixtures(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	cfg := emu.Config()
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "hi", "")
	streamArgs := url.Values{"token": {cfg.BotToken}, "channel": {"C0GENERAL"}, "thread_ts": {parent},
		"recipient_user_id": {"U0ALICE"}, "recipient_team_id": {cfg.TeamID}, "markdown_text": {"a"}}
	started := postForm(t, emu, "chat.startStream", streamArgs)
	streamTS, _ := started["ts"].(string)

	// Fields the Java SDK samples lack but Slack documents (Node SDK response types).
	stopStreamExtra := map[string]any{"channel": "", "ts": "", "message": map[string]any{
		"type": "", "text": "", "user": "", "bot_id": "", "ts": "", "thread_ts": "", "parent_user_id": "",
		"app_id": "", "team": "", "bot_profile": map[string]any{"id": "", "name": "", "app_id": "", "team_id": "", "deleted": false, "updated": 1.0},
	}}

	for _, tc := range []struct {
		method string
		args   url.Values
		extra  map[string]any
		decode any // the slack-go type the client decodes the answer into
	}{
		{"auth.test", url.Values{"token": {cfg.BotToken}}, nil, &slack.AuthTestResponse{}},
		{"apps.connections.open", url.Values{"token": {cfg.AppToken}}, nil, &slack.SocketModeConnection{}},
		{"assistant.threads.setStatus", url.Values{"token": {cfg.BotToken}, "channel_id": {"C0GENERAL"}, "thread_ts": {parent}, "status": {"is thinking…"}}, nil, &slack.SlackResponse{}},
		{"chat.appendStream", url.Values{"token": {cfg.BotToken}, "channel": {"C0GENERAL"}, "ts": {streamTS}, "markdown_text": {"b"}}, nil, &slack.SlackResponse{}},
		{"chat.stopStream", url.Values{"token": {cfg.BotToken}, "channel": {"C0GENERAL"}, "ts": {streamTS}}, stopStreamExtra, &slack.SlackResponse{}},
		{"files.getUploadURLExternal", url.Values{"token": {cfg.BotToken}, "filename": {"a.txt"}, "length": {"3"}}, nil, &slack.GetUploadURLExternalResponse{}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			sample := readFixture(t, filepath.Join("api", tc.method+".json"))
			if err := json.Unmarshal(mustJSON(t, sample), tc.decode); err != nil {
				t.Errorf("the sample does not decode into %T: %v", tc.decode, err)
			}
			got := postForm(t, emu, tc.method, tc.args)
			if got["ok"] != true {
				t.Fatalf("answer = %v", got)
			}
			checkShape(t, got, merge(sample, tc.extra))
		})
	}
	t.Run("chat.startStream", func(t *testing.T) {
		checkShape(t, started, readFixture(t, "api/chat.startStream.json"))
	})
	t.Run("Errors", func(t *testing.T) {
		sample := readFixture(t, "api/auth.test.json")
		got := postForm(t, emu, "auth.test", url.Values{"token": {"xoxb-nope"}})
		if got["ok"] != false || got["error"] != "invalid_auth" {
			t.Fatalf("answer = %v", got)
		}
		checkShape(t, got, sample)
	})
	t.Run("files.completeUploadExternal", func(t *testing.T) {
		sample := readFixture(t, "api/files.completeUploadExternal.json")
		var decoded slack.CompleteUploadExternalResponse
		if err := json.Unmarshal(mustJSON(t, sample), &decoded); err != nil {
			t.Errorf("the sample does not decode: %v", err)
		}
		if _, err := NewAPI(emu).UploadFileContext(testContext(t), slack.UploadFileParameters{
			Filename: "a.txt", Content: "abc", FileSize: 3, Channel: "C0GENERAL",
		}); err != nil {
			t.Fatal(err)
		}
		files := emu.Files()
		id := files[len(files)-1].ID
		got := postForm(t, emu, "files.completeUploadExternal", url.Values{"token": {cfg.BotToken}, "files": {`[{"id":"` + id + `"}]`}})
		if got["ok"] != true {
			t.Fatalf("answer = %v", got)
		}
		checkShape(t, got, sample)
	})
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// TestEventFixtures checks that the events_api payloads the emulator sends
// fit Slack's samples in fixtures/slack/events, and that slack-go parses
// the samples and the emulator's payloads alike.
func TestEventFixtures(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "hello <@U0BOT>", "")
	reply, _ := emu.PostUserMessage("C0GENERAL", "U0BOB", "me too", parent)
	_, botTS, _ := api.PostMessage("C0GENERAL", slack.MsgOptionText("hi", false), slack.MsgOptionTS(parent))
	_, broadcastTS, _ := api.PostMessage("C0GENERAL", slack.MsgOptionText("all", false), slack.MsgOptionTS(parent), slack.MsgOptionBroadcast())
	_, _, _, _ = api.UpdateMessage("C0GENERAL", botTS, slack.MsgOptionText("hi!", false))
	_, _, _ = api.DeleteMessage("C0GENERAL", botTS)
	otherTS, _ := emu.PostBotMessage("C0GENERAL", "B0OTHER", "beep", "")

	// Fields Slack sends that the Java SDK samples lack.
	botMessageExtra := map[string]any{"event": map[string]any{"app_id": ""}}
	broadcastExtra := merge(readFixture(t, "events/MessagePayload.json"), botMessageExtra)

	find := func(match func(emulator.Envelope) bool) map[string]any {
		t.Helper()
		for _, env := range emu.Envelopes() {
			if match(env) {
				return asMap(t, env.Payload)
			}
		}
		t.Fatal("no such envelope")
		return nil
	}
	for _, tc := range []struct {
		name    string
		fixture string
		extra   map[string]any
		match   func(emulator.Envelope) bool
	}{
		{"UserMessage", "MessagePayload.json", nil, func(e emulator.Envelope) bool { return e.EventType == "message" && e.TS == parent }},
		{"UserReply", "MessagePayload.json", nil, func(e emulator.Envelope) bool { return e.EventType == "message" && e.TS == reply }},
		{"AppMention", "AppMentionPayload.json", nil, func(e emulator.Envelope) bool { return e.EventType == "app_mention" }},
		{"OwnMessage", "MessagePayload.json", botMessageExtra, func(e emulator.Envelope) bool { return e.EventType == "message" && e.TS == botTS }},
		{"ThreadBroadcast", "MessageThreadBroadcastPayload.json", broadcastExtra, func(e emulator.Envelope) bool { return e.EventSubtype == "thread_broadcast" && e.TS == broadcastTS }},
		{"MessageChanged", "MessageChangedPayload.json", map[string]any{"event": map[string]any{"message": map[string]any{"app_id": ""}, "previous_message": map[string]any{"app_id": ""}}}, func(e emulator.Envelope) bool { return e.EventSubtype == "message_changed" }},
		{"MessageDeleted", "MessageDeletedPayload.json", map[string]any{"event": map[string]any{"previous_message": map[string]any{"app_id": ""}}}, func(e emulator.Envelope) bool { return e.EventSubtype == "message_deleted" }},
		{"BotMessage", "MessageBotPayload.json", nil, func(e emulator.Envelope) bool { return e.EventSubtype == "bot_message" && e.TS == otherTS }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sample := readFixture(t, filepath.Join("events", tc.fixture))
			if _, err := slackevents.ParseEvent(mustJSON(t, sample), slackevents.OptionNoVerifyToken()); err != nil {
				t.Errorf("slack-go cannot parse the sample: %v", err)
			}
			got := find(tc.match)
			checkShape(t, got, merge(sample, tc.extra))
			if _, err := slackevents.ParseEvent(mustJSON(t, got), slackevents.OptionNoVerifyToken()); err != nil {
				t.Errorf("slack-go cannot parse the emulator's payload: %v", err)
			}
		})
	}
}

// TestInteractiveFixtures checks the interactive and slash command payloads
// against fixtures/slack/interactive.
func TestInteractiveFixtures(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "start", "")
	_, ts, err := api.PostMessage("C0GENERAL", slack.MsgOptionTS(parent), slack.MsgOptionText("pick", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("choices", slack.NewButtonBlockElement("pick_a", "a", slack.NewTextBlockObject(slack.PlainTextType, "A", false, false))),
	))
	if err != nil {
		t.Fatal(err)
	}
	click, err := emu.ClickButton("C0GENERAL", ts, "U0ALICE", "pick_a")
	if err != nil {
		t.Fatal(err)
	}
	slash, err := emu.SlashCommand("C0GENERAL", "U0ALICE", "/threadwright", "status")
	if err != nil {
		t.Fatal(err)
	}
	shortcut, err := emu.MessageShortcut("C0GENERAL", ts, "U0BOB", "restart")
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, fixture, envelope string
		extra                   map[string]any
	}{
		// block_actions payloads carry "state" (the fixture shows it in view payloads only).
		{"BlockActions", "BlockActionPayload.json", click, map[string]any{"state": map[string]any{"values": map[string]any{}}}},
		{"SlashCommand", "SlashCommandPayload.json", slash, nil},
		{"MessageShortcut", "MessageShortcutPayload.json", shortcut, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sample := readFixture(t, filepath.Join("interactive", tc.fixture))
			env, ok := emu.Envelope(tc.envelope)
			if !ok {
				t.Fatal("no envelope")
			}
			got := asMap(t, env.Payload)
			checkShape(t, got, merge(sample, tc.extra))
			// The samples themselves do not all decode into slack-go's
			// types (a blank "" where slack-go wants a json.Number), so
			// only the emulator's payload is decoded.
			var into any = &slack.InteractionCallback{}
			if env.Type == emulator.EnvelopeSlashCommands {
				into = &slack.SlashCommand{}
			}
			if err := json.Unmarshal(env.Payload, into); err != nil {
				t.Errorf("decode into %T: %v", into, err)
			}
		})
	}
	t.Run("Envelopes", func(t *testing.T) {
		types := map[string]string{}
		for _, env := range emu.Envelopes() {
			types[env.ID] = env.Type + "/" + env.EventType
		}
		want := []string{"interactive/block_actions", "slash_commands//threadwright", "interactive/message_action"}
		got := []string{types[click], types[slash], types[shortcut]}
		if !slices.Equal(got, want) {
			t.Errorf("envelope types = %v, want %v", got, want)
		}
	})
}
