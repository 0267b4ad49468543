package emulator_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/playground/emulator"
)

// pageState is GET /ui/state, as the page reads it.
type pageState struct {
	Title  string
	Banner string
	User   string
	Users  []struct {
		ID    string
		IsBot bool `json:"is_bot"`
	}
	Channels []struct {
		ID, Name, Type, Latest string
		New                    bool
	}
	Messages map[string][]pageMessage
	Statuses []struct {
		Channel  string
		ThreadTS string `json:"thread_ts"`
		Status   string
	}
	View *struct {
		ID         string
		View       json.RawMessage
		Submitting bool
	}
	Files []struct {
		ID, Name, Channel string
		Size              int
		Content           any // must be absent
	}
	Commands  []string
	Shortcuts []emulator.Shortcut
	Connected int
}

type pageMessage struct {
	TS         string
	ThreadTS   string `json:"thread_ts"`
	User       string
	Text       string
	Blocks     json.RawMessage
	ReplyCount int `json:"reply_count"`
	Files      []struct{ ID, Name string }
	Ephemeral  bool
	Streaming  bool
	Markdown   bool
}

// pageCall sends a playground request (a JSON body when body is not nil) and
// returns the status and the decoded JSON answer.
func pageCall(tb testing.TB, emu *emulator.Server, method, path string, body any) (int, map[string]any) {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(emu.PageURL(), "/")+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		tb.Fatalf("%s %s: answer is not JSON: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// mustPage is pageCall for a POST that must succeed.
func mustPage(tb testing.TB, emu *emulator.Server, path string, body any) map[string]any {
	tb.Helper()
	status, out := pageCall(tb, emu, http.MethodPost, path, body)
	if status != http.StatusOK || out["ok"] != true {
		tb.Fatalf("POST %s %v: %d %v", path, body, status, out)
	}
	return out
}

func getState(tb testing.TB, emu *emulator.Server, query string) pageState {
	tb.Helper()
	resp, err := http.Get(emu.PageURL() + "ui/state?" + query)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		tb.Fatalf("state %s: %d %s", query, resp.StatusCode, body)
	}
	var st pageState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		tb.Fatal(err)
	}
	return st
}

// postBlocks posts a bot message with blocks given as JSON.
func postBlocks(tb testing.TB, emu *emulator.Server, channel, threadTS, blocksJSON string) string {
	tb.Helper()
	var blocks slack.Blocks
	if err := json.Unmarshal([]byte(blocksJSON), &blocks); err != nil {
		tb.Fatal(err)
	}
	_, ts, err := NewAPI(emu).PostMessage(channel, slack.MsgOptionText("card", false), slack.MsgOptionTS(threadTS), slack.MsgOptionBlocks(blocks.BlockSet...))
	if err != nil {
		tb.Fatal(err)
	}
	return ts
}

// envelopePayload returns the decoded payload of an envelope.
func envelopePayload(tb testing.TB, emu *emulator.Server, id string) map[string]any {
	tb.Helper()
	env, ok := emu.Envelope(id)
	if !ok {
		tb.Fatalf("no envelope %s", id)
	}
	var p map[string]any
	if err := json.Unmarshal(env.Payload, &p); err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestPlaygroundPage(t *testing.T) {
	get := func(t *testing.T, url string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", url, resp.StatusCode)
		}
		return resp, string(body)
	}
	emu := MustStart(t, emulator.Config{Title: "Demo <workspace>", Banner: "Offline demo model: <canned> answers"})
	resp, html := get(t, emu.PageURL())
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type = %q", ct)
	}
	for _, want := range []string{
		`<title>Demo &lt;workspace&gt;</title>`,
		`<div id="demo-banner" role="status">Offline demo model: &lt;canned&gt; answers</div>`,
		`id="user-picker"`, `id="channel"`, `id="thread"`, `id="composer"`, `id="composer-send"`,
		`id="thread-composer"`, `id="thread-send"`, `<textarea`, `id="status"`,
		`id="confirm"`, `id="confirm-yes"`, `id="confirm-no"`, `id="modal"`, `id="modal-submit"`, `id="modal-cancel"`,
		`src="/ui/static/app.js"`, `href="/ui/static/app.css"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}

	_, js := get(t, emu.PageURL()+"ui/static/app.js")
	for _, want := range []string{
		"DOM CONTRACT", "'#user-picker'", "data-channel=", "'message'", "'bot'", "'ephemeral'", "message-body",
		"data-thread-open=", "'#thread-composer'", "block-button", "data-action-id=", "data-ts=", "overflow-button",
		"'overflow-item'", "block-select", "'#confirm-yes'", "'#confirm-no'", "data-block-id=", "'#modal-cancel'",
		"'#modal-submit'", "message-menu-button", "'shortcut-item'", "file-link", "/ui/files/", "'#status'",
		"/ui/events", "/ui/state", "/ui/post", "/ui/click", "/ui/choose", "/ui/submit", "/ui/close", "/ui/shortcut",
	} {
		if !strings.Contains(js, want) {
			t.Errorf("app.js lacks %s", want)
		}
	}
	if resp, _ := get(t, emu.PageURL()+"ui/static/app.css"); !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Errorf("app.css Content-Type = %q", resp.Header.Get("Content-Type"))
	}

	t.Run("NoBanner", func(t *testing.T) {
		emu := MustStart(t, emulator.Config{})
		_, html := get(t, emu.PageURL())
		if strings.Contains(html, "demo-banner") || !strings.Contains(html, "<title>Threadwright</title>") {
			t.Errorf("page without a banner:\n%s", html)
		}
		if st := getState(t, emu, ""); st.Banner != "" || st.Title != "Threadwright" {
			t.Errorf("state banner %q title %q", st.Banner, st.Title)
		}
	})
}

func TestPlaygroundState(t *testing.T) {
	emu := MustStart(t, emulator.Config{Banner: "demo"})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> hello", "")
	reply := postBlocks(t, emu, "C0GENERAL", parent, `[{"type":"section","text":{"type":"mrkdwn","text":"*Hi*"}}]`)
	if _, err := api.PostEphemeral("C0GENERAL", "U0ALICE", slack.MsgOptionText("for alice", false), slack.MsgOptionTS(parent)); err != nil {
		t.Fatal(err)
	}
	if _, err := api.PostEphemeral("C0GENERAL", "U0BOB", slack.MsgOptionText("for bob", false)); err != nil {
		t.Fatal(err)
	}
	if _, err := api.UploadFileContext(testContext(t), slack.UploadFileParameters{
		Filename: "report.md", Content: "# Report", FileSize: 8, Channel: "C0GENERAL", ThreadTimestamp: parent,
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.StartStream("D0ALICE", slack.MsgOptionMarkdownText("**Str")); err != nil {
		t.Fatal(err)
	}
	if err := api.SetAssistantThreadsStatus(slack.AssistantThreadsSetStatusParameters{ChannelID: "C0GENERAL", ThreadTS: parent, Status: "is thinking…"}); err != nil {
		t.Fatal(err)
	}

	st := getState(t, emu, "user=U0ALICE")
	if st.User != "U0ALICE" || st.Banner != "demo" || len(st.Users) != 4 || !st.Users[0].IsBot || st.Connected != 0 {
		t.Errorf("state = %+v", st)
	}
	if len(st.Commands) != 1 || st.Commands[0] != "/threadwright" || len(st.Shortcuts) != 1 || st.Shortcuts[0].CallbackID != "threadwright_actions" {
		t.Errorf("commands %v shortcuts %v", st.Commands, st.Shortcuts)
	}
	var ids []string
	for _, c := range st.Channels {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != "C0GENERAL,C0RANDOM,D0ALICE" || st.Channels[0].Latest == "" || st.Channels[1].Latest != "" {
		t.Errorf("channels = %+v", st.Channels)
	}
	general := st.Messages["C0GENERAL"]
	if len(general) != 4 {
		t.Fatalf("C0GENERAL messages = %+v", general)
	}
	if m := general[0]; m.TS != parent || m.ReplyCount != 2 || m.ThreadTS != parent || m.User != "U0ALICE" || m.Text != "<@U0BOT> hello" {
		t.Errorf("parent = %+v", m)
	}
	if m := general[1]; m.TS != reply || m.ThreadTS != parent || !strings.Contains(string(m.Blocks), "*Hi*") {
		t.Errorf("reply = %+v", m)
	}
	if m := general[2]; !m.Ephemeral || m.Text != "for alice" || m.ThreadTS != parent {
		t.Errorf("ephemeral = %+v", m)
	}
	if m := general[3]; len(m.Files) != 1 || m.Files[0].Name != "report.md" || m.ThreadTS != parent {
		t.Errorf("file message = %+v", m)
	}
	if dm := st.Messages["D0ALICE"]; len(dm) != 1 || !dm[0].Streaming || !dm[0].Markdown || dm[0].Text != "**Str" {
		t.Errorf("D0ALICE = %+v", dm)
	}
	if len(st.Statuses) != 1 || st.Statuses[0].ThreadTS != parent || st.Statuses[0].Status != "is thinking…" {
		t.Errorf("statuses = %+v", st.Statuses)
	}
	if len(st.Files) != 1 || st.Files[0].Name != "report.md" || st.Files[0].Size != 8 || st.Files[0].Content != nil {
		t.Errorf("files = %+v", st.Files)
	}
	if st.View != nil {
		t.Errorf("view = %+v", st.View)
	}

	t.Run("DefaultUser", func(t *testing.T) {
		if st := getState(t, emu, ""); st.User != "U0ALICE" {
			t.Errorf("default user = %s", st.User)
		}
	})
	t.Run("AnotherUser", func(t *testing.T) {
		st := getState(t, emu, "user=U0BOB")
		last := st.Channels[len(st.Channels)-1]
		if len(st.Channels) != 3 || last.ID != "D0BOB" || last.Type != "im" || !last.New {
			t.Errorf("bob's channels = %+v", st.Channels)
		}
		general := st.Messages["C0GENERAL"]
		var ephemerals []string
		for _, m := range general {
			if m.Ephemeral {
				ephemerals = append(ephemerals, m.Text)
			}
		}
		if strings.Join(ephemerals, ",") != "for bob" || st.Messages["D0ALICE"] != nil {
			t.Errorf("bob sees %v and D0ALICE %v", ephemerals, st.Messages["D0ALICE"])
		}
	})
	t.Run("MarkdownAndGroupedSelect", func(t *testing.T) {
		// Blocks the page renders that the Web API must accept: a markdown
		// block's text is a bare string, a static select may group its options.
		blocks := `[{"type":"markdown","text":"**Done**"},{"type":"actions","elements":[{"type":"static_select","action_id":"s",
			"option_groups":[{"label":{"type":"plain_text","text":"G"},"options":[{"text":{"type":"plain_text","text":"x"},"value":"x"}]}]}]}]`
		got := postForm(t, emu, "chat.postMessage", url.Values{"token": {emu.Config().BotToken}, "channel": {"C0RANDOM"}, "blocks": {blocks}})
		if got["ok"] != true {
			t.Fatalf("chat.postMessage = %v", got)
		}
		if m := getState(t, emu, "channel=C0RANDOM").Messages["C0RANDOM"]; len(m) != 1 || !strings.Contains(string(m[0].Blocks), "**Done**") {
			t.Errorf("C0RANDOM = %+v", m)
		}
	})
	t.Run("OneChannel", func(t *testing.T) {
		st := getState(t, emu, "user=U0ALICE&channel=C0RANDOM")
		if len(st.Messages) != 1 || len(st.Messages["C0RANDOM"]) != 1 || len(st.Channels) != 3 {
			t.Errorf("messages = %v", st.Messages)
		}
	})
}

func TestPlaygroundPost(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	t.Run("Message", func(t *testing.T) {
		out := mustPage(t, emu, "/ui/post", map[string]string{
			"user": "U0ALICE", "channel": "C0GENERAL", "text": "  @threadwright hi @Bob, mail a@b.com or @nobody.  ",
		})
		ts, _ := out["ts"].(string)
		m, ok := emu.Message("C0GENERAL", ts)
		if !ok || m.Text != "<@U0BOT> hi <@U0BOB>, mail a@b.com or @nobody." || m.User != "U0ALICE" || m.ClientMsgID == "" {
			t.Errorf("message = %+v", m)
		}
		if _, ok := emu.EventEnvelope("app_mention", ts); !ok {
			t.Error("no app_mention for a message that mentions the bot")
		}

		out = mustPage(t, emu, "/ui/post", map[string]string{"user": "U0BOB", "channel": "C0GENERAL", "text": "@threadwright. again", "thread_ts": ts})
		reply, _ := emu.Message("C0GENERAL", out["ts"].(string))
		if reply.ThreadTS != ts || reply.Text != "<@U0BOT>. again" {
			t.Errorf("reply = %+v", reply)
		}
	})
	t.Run("SlashCommand", func(t *testing.T) {
		out := mustPage(t, emu, "/ui/post", map[string]string{"user": "U0BOB", "channel": "C0RANDOM", "text": "/threadwright start  product-brief"})
		p := envelopePayload(t, emu, out["envelope_id"].(string))
		if p["command"] != "/threadwright" || p["text"] != "start  product-brief" || p["user_id"] != "U0BOB" || p["channel_id"] != "C0RANDOM" {
			t.Errorf("slash command payload = %v", p)
		}
		if env, _ := emu.Envelope(out["envelope_id"].(string)); env.Type != emulator.EnvelopeSlashCommands {
			t.Errorf("envelope type %s", env.Type)
		}
		if len(emu.Thread("C0RANDOM", "")) != 0 {
			t.Error("a slash command was posted as a message")
		}
	})
	t.Run("SlashCommandInThread", func(t *testing.T) {
		parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "a thread", "")
		status, out := pageCall(t, emu, http.MethodPost, "/ui/post", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "text": "/threadwright status", "thread_ts": parent})
		if status != http.StatusBadRequest || out["error"] != "/threadwright is not supported in threads. Sorry!" {
			t.Errorf("answer = %d %v", status, out)
		}
	})
	t.Run("UnknownCommand", func(t *testing.T) {
		status, out := pageCall(t, emu, http.MethodPost, "/ui/post", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "text": "/giphy cats"})
		if status != http.StatusBadRequest || !strings.HasPrefix(out["error"].(string), "/giphy is not a valid command") {
			t.Errorf("answer = %d %v", status, out)
		}
	})
	t.Run("NewDirectMessage", func(t *testing.T) {
		out := mustPage(t, emu, "/ui/post", map[string]string{"user": "U0BOB", "channel": "D0BOB", "text": "hello bot"})
		chs := emu.Channels()
		if last := chs[len(chs)-1]; last.ID != "D0BOB" || last.Type != emulator.ChannelTypeIM || last.User != "U0BOB" {
			t.Errorf("channels = %+v", chs)
		}
		if _, ok := emu.EventEnvelope("message", out["ts"].(string)); !ok {
			t.Error("no message event for the DM")
		}
		if status, _ := pageCall(t, emu, http.MethodPost, "/ui/post", map[string]string{"user": "U0BOB", "channel": "D0ALICE", "text": "hi"}); status != http.StatusNotFound {
			t.Errorf("bob posting in alice's DM: %d", status)
		}
	})
}

const cardBlocks = `[
	{"type":"section","text":{"type":"mrkdwn","text":"Pick"},
	 "accessory":{"type":"overflow","action_id":"menu","options":[
		{"text":{"type":"plain_text","text":"Restart"},"value":"restart"},
		{"text":{"type":"plain_text","text":"Edit…"},"value":"edit"}]}},
	{"type":"actions","block_id":"choices","elements":[
		{"type":"button","action_id":"pick","text":{"type":"plain_text","text":"A"},"value":"a"},
		{"type":"button","action_id":"pick2","text":{"type":"plain_text","text":"B"},"value":"b","style":"primary",
		 "confirm":{"title":{"type":"plain_text","text":"Sure?"},"text":{"type":"plain_text","text":"Really"},
		 "confirm":{"type":"plain_text","text":"Yes"},"deny":{"type":"plain_text","text":"No"}}},
		{"type":"static_select","action_id":"size","placeholder":{"type":"plain_text","text":"Size"},"option_groups":[
			{"label":{"type":"plain_text","text":"All"},"options":[
				{"text":{"type":"plain_text","text":"Small"},"value":"s"},
				{"text":{"type":"plain_text","text":"Large"},"value":"l"}]}]}]}]`

func TestPlaygroundClickAndChoose(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "card please", "")
	ts := postBlocks(t, emu, "C0GENERAL", parent, cardBlocks)
	action := func(t *testing.T, envelopeID string) (map[string]any, map[string]any) {
		t.Helper()
		p := envelopePayload(t, emu, envelopeID)
		actions, _ := p["actions"].([]any)
		if p["type"] != "block_actions" || len(actions) != 1 {
			t.Fatalf("payload = %v", p)
		}
		return p, actions[0].(map[string]any)
	}

	t.Run("Button", func(t *testing.T) {
		out := mustPage(t, emu, "/ui/click", map[string]string{"user": "U0BOB", "channel": "C0GENERAL", "ts": ts, "action_id": "pick2"})
		p, a := action(t, out["envelope_id"].(string))
		if a["action_id"] != "pick2" || a["value"] != "b" || a["block_id"] != "choices" || p["user"].(map[string]any)["id"] != "U0BOB" {
			t.Errorf("action = %v", a)
		}
		if status, _ := pageCall(t, emu, http.MethodPost, "/ui/click", map[string]string{"user": "U0BOB", "channel": "C0GENERAL", "ts": ts, "action_id": "pick", "value": "z"}); status != http.StatusNotFound {
			t.Errorf("a click with a wrong value: %d", status)
		}
	})
	t.Run("Ephemeral", func(t *testing.T) {
		var blocks slack.Blocks
		_ = json.Unmarshal([]byte(cardBlocks), &blocks)
		ets, err := NewAPI(emu).PostEphemeral("C0GENERAL", "U0BOB", slack.MsgOptionTS(parent), slack.MsgOptionBlocks(blocks.BlockSet...))
		if err != nil {
			t.Fatal(err)
		}
		out := mustPage(t, emu, "/ui/click", map[string]string{"user": "U0BOB", "channel": "C0GENERAL", "ts": ets, "action_id": "pick", "value": "a"})
		p, a := action(t, out["envelope_id"].(string))
		if a["value"] != "a" || p["container"].(map[string]any)["is_ephemeral"] != true {
			t.Errorf("payload = %v", p)
		}
		if status, _ := pageCall(t, emu, http.MethodPost, "/ui/click", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": ets, "action_id": "pick"}); status != http.StatusNotFound {
			t.Errorf("alice clicked bob's ephemeral: %d", status)
		}
	})
	t.Run("Overflow", func(t *testing.T) {
		out := mustPage(t, emu, "/ui/choose", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": ts, "action_id": "menu", "value": "edit"})
		_, a := action(t, out["envelope_id"].(string))
		if a["type"] != "overflow" || a["selected_option"].(map[string]any)["value"] != "edit" {
			t.Errorf("action = %v", a)
		}
	})
	t.Run("StaticSelect", func(t *testing.T) {
		out := mustPage(t, emu, "/ui/choose", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": ts, "action_id": "size", "label": "Large"})
		p, a := action(t, out["envelope_id"].(string))
		state := p["state"].(map[string]any)["values"].(map[string]any)["choices"].(map[string]any)["size"].(map[string]any)
		if a["type"] != "static_select" || a["selected_option"].(map[string]any)["value"] != "l" || state["selected_option"].(map[string]any)["value"] != "l" {
			t.Errorf("action = %v state = %v", a, state)
		}
		if status, _ := pageCall(t, emu, http.MethodPost, "/ui/choose", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": ts, "action_id": "size"}); status != http.StatusBadRequest {
			t.Errorf("a choice without value or label: %d", status)
		}
		if status, _ := pageCall(t, emu, http.MethodPost, "/ui/choose", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": ts, "action_id": "pick", "value": "a"}); status != http.StatusNotFound {
			t.Errorf("choosing in a button: %d", status)
		}
	})
}

func TestPlaygroundModal(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)

	// openView runs a slash command from the page and opens view with its trigger.
	openView := func(t *testing.T, view string) string {
		t.Helper()
		mustPage(t, emu, "/ui/post", map[string]string{"user": "U0BOB", "channel": "C0GENERAL", "text": "/threadwright edit"})
		evt := bot.Next(t, ctx, socketmode.EventTypeSlashCommand)
		bot.MustAck(t, evt.Request)
		var req slack.ModalViewRequest
		if err := json.Unmarshal([]byte(view), &req); err != nil {
			t.Fatal(err)
		}
		resp, err := bot.API.OpenView(evt.Data.(slack.SlashCommand).TriggerID, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ID
	}
	id := openView(t, `{"type":"modal","callback_id":"tw_modal","title":{"type":"plain_text","text":"Edit"},
		"submit":{"type":"plain_text","text":"Save"},"blocks":[
		{"type":"input","block_id":"what","label":{"type":"plain_text","text":"What should change?"},
		 "element":{"type":"plain_text_input","action_id":"text","multiline":true,"max_length":20}},
		{"type":"input","label":{"type":"plain_text","text":"Note"},"optional":true,"element":{"type":"plain_text_input"}}]}`)

	st := getState(t, emu, "user=U0BOB")
	if st.View == nil || st.View.ID != id || st.View.Submitting || !strings.Contains(string(st.View.View), "What should change?") {
		t.Fatalf("view = %+v", st.View)
	}
	if getState(t, emu, "user=U0ALICE").View != nil {
		t.Error("alice sees bob's view")
	}

	bad := []struct {
		name   string
		body   map[string]any
		status int
	}{
		{"Required", map[string]any{"user": "U0BOB", "view_id": id, "values": map[string]any{"what": map[string]string{"text": " "}}}, http.StatusBadRequest},
		{"TooLong", map[string]any{"user": "U0BOB", "view_id": id, "values": map[string]any{"what": map[string]string{"text": strings.Repeat("x", 21)}}}, http.StatusBadRequest},
		{"OtherUser", map[string]any{"user": "U0ALICE", "view_id": id, "values": map[string]any{}}, http.StatusNotFound},
		{"UnknownView", map[string]any{"user": "U0BOB", "view_id": "V404", "values": map[string]any{}}, http.StatusNotFound},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if status, out := pageCall(t, emu, http.MethodPost, "/ui/submit", tc.body); status != tc.status || out["ok"] != false {
				t.Errorf("answer = %d %v", status, out)
			}
		})
	}

	mustPage(t, emu, "/ui/submit", map[string]any{"user": "U0BOB", "view_id": id, "values": map[string]any{"what": map[string]string{"text": "Shorter."}}})
	evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
	sub := evt.Data.(slack.InteractionCallback)
	if sub.Type != slack.InteractionTypeViewSubmission || sub.View.State.Values["what"]["text"].Value != "Shorter." ||
		sub.View.State.Values["block1"]["action1"].Type != "plain_text_input" || sub.User.ID != "U0BOB" {
		t.Errorf("view_submission = %+v", sub.View.State)
	}
	if st := getState(t, emu, "user=U0BOB"); st.View == nil || !st.View.Submitting {
		t.Errorf("before the ack, view = %+v", st.View)
	}
	bot.MustAck(t, evt.Request)
	WaitAcksFor(t, emu, evt.Request.EnvelopeID)
	if st := getState(t, emu, "user=U0BOB"); st.View != nil {
		t.Errorf("after the ack, view = %+v", st.View)
	}

	t.Run("Close", func(t *testing.T) {
		id := openView(t, `{"type":"modal","notify_on_close":true,"title":{"type":"plain_text","text":"Bye"},"blocks":[]}`)
		mustPage(t, emu, "/ui/close", map[string]string{"user": "U0BOB", "view_id": id})
		evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
		bot.MustAck(t, evt.Request)
		if cb := evt.Data.(slack.InteractionCallback); cb.Type != slack.InteractionTypeViewClosed || cb.View.ID != id {
			t.Errorf("callback = %+v", cb)
		}
		if st := getState(t, emu, "user=U0BOB"); st.View != nil {
			t.Errorf("a closed view shows: %+v", st.View)
		}
		if status, _ := pageCall(t, emu, http.MethodPost, "/ui/close", map[string]string{"user": "U0BOB", "view_id": id}); status != http.StatusNotFound {
			t.Errorf("closing twice: %d", status)
		}
	})
}

func TestPlaygroundShortcut(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	ts := postBlocks(t, emu, "C0GENERAL", "", `[{"type":"section","text":{"type":"mrkdwn","text":"card"}}]`)
	out := mustPage(t, emu, "/ui/shortcut", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": ts, "callback_id": "threadwright_actions"})
	p := envelopePayload(t, emu, out["envelope_id"].(string))
	if p["type"] != "message_action" || p["callback_id"] != "threadwright_actions" || p["message_ts"] != ts || p["trigger_id"] == "" {
		t.Errorf("payload = %v", p)
	}
	status, answer := pageCall(t, emu, http.MethodPost, "/ui/shortcut", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": ts, "callback_id": "nope"})
	if status != http.StatusBadRequest || !strings.Contains(answer["error"].(string), `"nope"`) {
		t.Errorf("unknown shortcut: %d %v", status, answer)
	}
}

func TestPlaygroundFileDownload(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	f, err := NewAPI(emu).UploadFileContext(testContext(t), slack.UploadFileParameters{
		Filename: "Final report.md", Content: "# Report\n", FileSize: 9, Channel: "C0GENERAL",
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(emu.PageURL() + "ui/files/" + f.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "# Report\n" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="Final report.md"` ||
		resp.Header.Get("Content-Type") != "text/markdown; charset=utf-8" {
		t.Errorf("download: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if status, out := pageCall(t, emu, http.MethodGet, "/ui/files/F404", nil); status != http.StatusNotFound || out["ok"] != false {
		t.Errorf("unknown file: %d %v", status, out)
	}
}

func TestPlaygroundEvents(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, emu.PageURL()+"ui/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	events := make(chan map[string]any)
	go func() {
		defer close(events)
		lines := bufio.NewScanner(resp.Body)
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				var ev map[string]any
				_ = json.Unmarshal([]byte(data), &ev)
				events <- ev
			}
		}
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-ctx.Done():
			t.Fatal("no event")
			return nil
		}
	}

	// Subscribe happens before the stream's first bytes, so this post is seen.
	out := mustPage(t, emu, "/ui/post", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "text": "hi"})
	if ev := next(); ev["kind"] != "message" || ev["channel"] != "C0GENERAL" || ev["ts"] != out["ts"] {
		t.Errorf("event = %v", ev)
	}
	if err := NewAPI(emu).SetAssistantThreadsStatus(slack.AssistantThreadsSetStatusParameters{ChannelID: "C0GENERAL", ThreadTS: out["ts"].(string), Status: "is thinking…"}); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev["kind"] != "status" || ev["thread_ts"] != out["ts"] {
		t.Errorf("event = %v", ev)
	}
	// Close sends a "closed" event, unless it cuts the connection first, and
	// ends the stream.
	emu.Close()
	for {
		select {
		case ev, open := <-events:
			if !open {
				return
			}
			if ev["kind"] != "closed" {
				t.Errorf("event after Close = %v", ev)
			}
		case <-ctx.Done():
			t.Fatal("the stream did not end with Close")
		}
	}
}

func TestPlaygroundBadInput(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	ts, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "hi", "")
	raw := func(t *testing.T, contentType, body string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(emu.PageURL()+"ui/post", contentType, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	t.Run("NotJSON", func(t *testing.T) {
		for _, tc := range []struct{ contentType, body string }{
			{"text/plain", `{"user":"U0ALICE","channel":"C0GENERAL","text":"hi"}`},
			{"application/json", `{"user":`},
			{"application/json", `{"user":"U0ALICE","channel":"C0GENERAL","text":"hi","extra":1}`},
			{"application/json", `["U0ALICE"]`},
		} {
			if status, out := raw(t, tc.contentType, tc.body); status != http.StatusBadRequest || out["ok"] != false || out["error"] == "" {
				t.Errorf("%s %s: %d %v", tc.contentType, tc.body, status, out)
			}
		}
	})
	for _, tc := range []struct {
		name, path string
		body       map[string]string
		status     int
		error      string
	}{
		{"NoUser", "/ui/post", map[string]string{"channel": "C0GENERAL", "text": "hi"}, 400, "user is required"},
		{"EmptyText", "/ui/post", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "text": " \n"}, 400, "text is empty"},
		{"TooLong", "/ui/post", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "text": strings.Repeat("x", emulator.MaxTextLength+1)}, 400, "the limit is 40000"},
		{"UnknownUser", "/ui/post", map[string]string{"user": "U0NOPE", "channel": "C0GENERAL", "text": "hi"}, 404, "user not found"},
		{"ActAsBot", "/ui/post", map[string]string{"user": "U0BOT", "channel": "C0GENERAL", "text": "hi"}, 400, "is a bot"},
		{"UnknownChannel", "/ui/post", map[string]string{"user": "U0ALICE", "channel": "C0NOPE", "text": "hi"}, 404, "channel not found"},
		{"UnknownThread", "/ui/post", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "text": "hi", "thread_ts": "1.000001"}, 404, "message not found"},
		{"ClickNoAction", "/ui/click", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": ts}, 400, "action_id is required"},
		{"ClickNoButton", "/ui/click", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": ts, "action_id": "x"}, 404, "button not found"},
		{"ClickNoMessage", "/ui/click", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": "1.000001", "action_id": "x"}, 404, "message not found"},
		{"ShortcutNoMessage", "/ui/shortcut", map[string]string{"user": "U0ALICE", "channel": "C0GENERAL", "ts": "1.000001", "callback_id": "threadwright_actions"}, 404, "message not found"},
		{"SubmitNoView", "/ui/submit", map[string]string{"user": "U0ALICE"}, 400, "view_id is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := pageCall(t, emu, http.MethodPost, tc.path, tc.body)
			msg, _ := out["error"].(string)
			if status != tc.status || out["ok"] != false || !strings.Contains(msg, tc.error) {
				t.Errorf("answer = %d %v, want %d %q", status, out, tc.status, tc.error)
			}
		})
	}
	t.Run("State", func(t *testing.T) {
		for query, want := range map[string]int{"user=U0NOPE": 404, "user=U0BOT": 400, "user=U0BOB&channel=D0ALICE": 404, "channel=C0NOPE": 404} {
			if status, out := pageCall(t, emu, http.MethodGet, "/ui/state?"+query, nil); status != want || out["ok"] != false {
				t.Errorf("%s: %d %v", query, status, out)
			}
		}
	})
	t.Run("UnknownEndpoint", func(t *testing.T) {
		if status, out := pageCall(t, emu, http.MethodGet, "/ui/nope", nil); status != http.StatusNotFound || out["ok"] != false {
			t.Errorf("answer = %d %v", status, out)
		}
	})
	t.Run("BadCommandConfig", func(t *testing.T) {
		if _, err := emulator.NewServer(emulator.Config{Commands: []string{"threadwright"}}); err == nil {
			t.Error("a command without a slash was accepted")
		}
	})
}
