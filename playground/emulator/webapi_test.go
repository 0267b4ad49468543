package emulator_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/playground/emulator"
)

// slackError returns the error code of a Slack API error, or fails.
func slackError(tb testing.TB, err error) string {
	tb.Helper()
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		tb.Fatalf("error %v (%T) is not a slack.SlackErrorResponse", err, err)
	}
	return se.Err
}

func TestAuthTest(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	resp, err := NewAPI(emu).AuthTest()
	if err != nil {
		t.Fatal(err)
	}
	if resp.UserID != "U0BOT" || resp.BotID != "B0BOT" || resp.TeamID != "T0TEAM" || resp.Team != "Threadwright" || resp.User != "threadwright" {
		t.Errorf("auth.test = %+v", resp)
	}
}

func TestAuthErrors(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	cfg := emu.Config()
	for _, tc := range []struct {
		name  string
		token string
		call  func(*slack.Client) error
		want  string
	}{
		{"NotAuthed", "", func(c *slack.Client) error { _, err := c.AuthTest(); return err }, "not_authed"},
		{"InvalidAuth", "xoxb-wrong", func(c *slack.Client) error { _, err := c.AuthTest(); return err }, "invalid_auth"},
		{"AppTokenForWebAPI", cfg.AppToken, func(c *slack.Client) error { _, err := c.AuthTest(); return err }, "not_allowed_token_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := slack.New(tc.token, slack.OptionAPIURL(emu.URL()))
			if got := slackError(t, tc.call(api)); got != tc.want {
				t.Errorf("error = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("BotTokenForConnectionsOpen", func(t *testing.T) {
		api := slack.New(cfg.BotToken, slack.OptionAPIURL(emu.URL()), slack.OptionAppLevelToken(cfg.BotToken))
		_, _, err := api.StartSocketModeContext(testContext(t))
		if got := slackError(t, err); got != "not_allowed_token_type" {
			t.Errorf("error = %q", got)
		}
	})
	t.Run("BearerHeader", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, emu.URL()+"auth.test", nil)
		req.Header.Set("Authorization", "Bearer "+cfg.BotToken)
		if body := do(t, req); body["ok"] != true {
			t.Errorf("auth.test with a bearer token = %v", body)
		}
	})
}

// do sends req and decodes the JSON answer, which must be HTTP 200.
func do(tb testing.TB, req *http.Request) map[string]any {
	tb.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("%s: HTTP %d", req.URL, resp.StatusCode)
	}
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		tb.Fatal(err)
	}
	return body
}

func postForm(tb testing.TB, emu *emulator.Server, method string, form url.Values) map[string]any {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodPost, emu.URL()+method, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(tb, req)
}

func postJSON(tb testing.TB, emu *emulator.Server, method string, body any) map[string]any {
	tb.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, emu.URL()+method, strings.NewReader(string(data)))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+emu.Config().BotToken)
	return do(tb, req)
}

func TestUnknownMethod(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	body := postForm(t, emu, "chat.fly", url.Values{"token": {emu.Config().BotToken}})
	if body["ok"] != false || body["error"] != "unknown_method" {
		t.Errorf("answer = %v", body)
	}
	if calls := emu.Calls("chat.fly"); len(calls) != 1 || calls[0].Error != "unknown_method" {
		t.Errorf("calls = %+v", calls)
	}
}

func TestJSONBody(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	body := postJSON(t, emu, "chat.postMessage", map[string]any{
		"channel": "C0GENERAL",
		"text":    "from JSON",
		"blocks":  []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": "*hi*"}}},
	})
	if body["ok"] != true {
		t.Fatalf("answer = %v", body)
	}
	msgs := emu.Thread("C0GENERAL", "")
	if len(msgs) != 1 || msgs[0].Text != "from JSON" || !strings.Contains(string(msgs[0].Blocks), `"*hi*"`) {
		t.Errorf("messages = %+v", msgs)
	}
	if got := emu.Calls("chat.postMessage")[0].Params.Get("channel"); got != "C0GENERAL" {
		t.Errorf("recorded channel = %q", got)
	}
}

func TestPostMessageAndReplies(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "question", "")
	if err != nil {
		t.Fatal(err)
	}
	var replies []string
	for i := range 5 {
		channel, ts, msg, err := api.PostMessageWithResponse("C0GENERAL", slack.MsgOptionText("answer "+string(rune('a'+i)), false), slack.MsgOptionTS(parent))
		if err != nil {
			t.Fatal(err)
		}
		if channel != "C0GENERAL" || msg.ThreadTimestamp != parent || msg.BotID != "B0BOT" || msg.User != "U0BOT" {
			t.Errorf("postMessage answered %s %+v", channel, msg.Msg)
		}
		replies = append(replies, ts)
	}

	t.Run("Pagination", func(t *testing.T) {
		var got []slack.Message
		cursor := ""
		pages := 0
		for {
			msgs, hasMore, next, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{
				ChannelID: "C0GENERAL", Timestamp: parent, Limit: 2, Cursor: cursor,
			})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			got = append(got, msgs...)
			if !hasMore {
				if next != "" {
					t.Errorf("last page has next_cursor %q", next)
				}
				break
			}
			cursor = next
		}
		if pages != 3 || len(got) != 6 {
			t.Fatalf("%d pages, %d messages; want 3 pages of parent + 5 replies", pages, len(got))
		}
		if got[0].Timestamp != parent || got[0].ReplyCount != 5 || got[0].Text != "question" {
			t.Errorf("first message = %+v", got[0].Msg)
		}
		for i, ts := range replies {
			if got[i+1].Timestamp != ts || got[i+1].ThreadTimestamp != parent {
				t.Errorf("reply %d = %s in %s, want %s", i, got[i+1].Timestamp, got[i+1].ThreadTimestamp, ts)
			}
		}
	})
	t.Run("ReplyTS", func(t *testing.T) {
		msgs, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C0GENERAL", Timestamp: replies[2]})
		if err != nil || len(msgs) != 6 {
			t.Errorf("replies by a reply's ts: %d messages, %v", len(msgs), err)
		}
	})
	t.Run("OldestLatest", func(t *testing.T) {
		msgs, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{
			ChannelID: "C0GENERAL", Timestamp: parent, Oldest: replies[1], Latest: replies[3],
		})
		if err != nil || len(msgs) != 1 || msgs[0].Timestamp != replies[2] {
			t.Errorf("exclusive window: %v %v", timestamps(msgs), err)
		}
		msgs, _, _, err = api.GetConversationReplies(&slack.GetConversationRepliesParameters{
			ChannelID: "C0GENERAL", Timestamp: parent, Oldest: replies[1], Latest: replies[3], Inclusive: true,
		})
		if err != nil || len(msgs) != 3 {
			t.Errorf("inclusive window: %v %v", timestamps(msgs), err)
		}
	})
	t.Run("ThreadNotFound", func(t *testing.T) {
		_, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C0GENERAL", Timestamp: "1.000001"})
		if got := slackError(t, err); got != "thread_not_found" {
			t.Errorf("error = %q", got)
		}
	})
	t.Run("Thread", func(t *testing.T) {
		thread := emu.Thread("C0GENERAL", parent)
		if len(thread) != 6 || thread[0].User != "U0ALICE" || thread[0].ClientMsgID == "" || thread[0].ReplyCount != 5 {
			t.Errorf("thread = %+v", thread)
		}
		if bot := emu.BotMessages("C0GENERAL", parent); len(bot) != 5 {
			t.Errorf("bot messages = %d", len(bot))
		}
	})
	t.Run("ChannelNotFound", func(t *testing.T) {
		_, _, err := api.PostMessage("C0NOPE", slack.MsgOptionText("x", false))
		if got := slackError(t, err); got != "channel_not_found" {
			t.Errorf("error = %q", got)
		}
	})
	t.Run("NoText", func(t *testing.T) {
		_, _, err := api.PostMessage("C0GENERAL")
		if got := slackError(t, err); got != "no_text" {
			t.Errorf("error = %q", got)
		}
	})
	t.Run("ToUserID", func(t *testing.T) {
		channel, _, err := api.PostMessage("U0ALICE", slack.MsgOptionText("dm", false))
		if err != nil || channel != "D0ALICE" {
			t.Errorf("posting to a user ID went to %q, %v", channel, err)
		}
	})
}

func timestamps(msgs []slack.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Timestamp)
	}
	return out
}

func TestLimits(t *testing.T) {
	section := func(n int) slack.Block {
		return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("x", n), false, false), nil, nil)
	}
	manyBlocks := func(n int) []slack.Block {
		var bs []slack.Block
		for range n {
			bs = append(bs, slack.NewDividerBlock())
		}
		return bs
	}
	button := func(text, value string) slack.Block {
		return slack.NewActionBlock("acts", slack.NewButtonBlockElement("go", value, slack.NewTextBlockObject(slack.PlainTextType, text, false, false)))
	}
	const overflow = "overflow"
	menu := func(typ string, n int, value, text string) slack.Block {
		var opts []*slack.OptionBlockObject
		for range n {
			opts = append(opts, slack.NewOptionBlockObject(value, slack.NewTextBlockObject(slack.PlainTextType, text, false, false), nil))
		}
		if typ == overflow {
			return slack.NewActionBlock("m", slack.NewOverflowBlockElement("menu", opts...))
		}
		return slack.NewActionBlock("m", slack.NewOptionsSelectBlockElement(typ, slack.NewTextBlockObject(slack.PlainTextType, "Pick", false, false), "menu", opts...))
	}
	confirm := func(title string) slack.Block {
		text := func(s string) *slack.TextBlockObject {
			return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
		}
		b := slack.NewButtonBlockElement("go", "v", text("Go"))
		b.Confirm = slack.NewConfirmationBlockObject(text(title), text("Sure?"), text("Yes"), text("No"))
		return slack.NewActionBlock("acts", b)
	}
	for _, tc := range []struct {
		name    string
		lenient bool
		opts    []slack.MsgOption
		want    string // "" means ok
	}{
		{"StrictTextAtLimit", false, []slack.MsgOption{slack.MsgOptionText(strings.Repeat("é", 4000), false)}, ""},
		{"StrictTextOverLimit", false, []slack.MsgOption{slack.MsgOptionText(strings.Repeat("x", 4001), false)}, "msg_too_long"},
		{"StrictTextWithBlocks", false, []slack.MsgOption{slack.MsgOptionText(strings.Repeat("x", 4001), false), slack.MsgOptionBlocks(section(10))}, "msg_too_long"},
		{"LenientText", true, []slack.MsgOption{slack.MsgOptionText(strings.Repeat("x", 40000), false)}, ""},
		{"LenientTextOverHardLimit", true, []slack.MsgOption{slack.MsgOptionText(strings.Repeat("x", 40001), false)}, "msg_too_long"},
		{"FiftyBlocks", false, []slack.MsgOption{slack.MsgOptionBlocks(manyBlocks(50)...)}, ""},
		{"FiftyOneBlocks", false, []slack.MsgOption{slack.MsgOptionBlocks(manyBlocks(51)...)}, "invalid_blocks"},
		{"SectionText3000", false, []slack.MsgOption{slack.MsgOptionBlocks(section(3000))}, ""},
		{"SectionText3001", false, []slack.MsgOption{slack.MsgOptionBlocks(section(3001))}, "invalid_blocks"},
		{"ButtonText76", false, []slack.MsgOption{slack.MsgOptionBlocks(button(strings.Repeat("b", 76), "v"))}, "invalid_blocks"},
		{"ButtonValue2001", false, []slack.MsgOption{slack.MsgOptionBlocks(button("ok", strings.Repeat("v", 2001)))}, "invalid_blocks"},
		{"Overflow5", false, []slack.MsgOption{slack.MsgOptionBlocks(menu(overflow, 5, "v", "o"))}, ""},
		{"Overflow6", false, []slack.MsgOption{slack.MsgOptionBlocks(menu(overflow, 6, "v", "o"))}, "invalid_blocks"},
		{"OptionValue151", false, []slack.MsgOption{slack.MsgOptionBlocks(menu(overflow, 1, strings.Repeat("v", 151), "o"))}, "invalid_blocks"},
		{"OptionText76", false, []slack.MsgOption{slack.MsgOptionBlocks(menu(overflow, 1, "v", strings.Repeat("o", 76)))}, "invalid_blocks"},
		{"Select100", false, []slack.MsgOption{slack.MsgOptionBlocks(menu(slack.OptTypeStatic, 100, "v", "o"))}, ""},
		{"Select101", false, []slack.MsgOption{slack.MsgOptionBlocks(menu(slack.OptTypeStatic, 101, "v", "o"))}, "invalid_blocks"},
		{"ConfirmTitle101", false, []slack.MsgOption{slack.MsgOptionBlocks(confirm(strings.Repeat("c", 101)))}, "invalid_blocks"},
		{"ConfirmTitle100", false, []slack.MsgOption{slack.MsgOptionBlocks(confirm(strings.Repeat("c", 100)))}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emu := MustStart(t, emulator.Config{LenientTextLimit: tc.lenient})
			_, _, err := NewAPI(emu).PostMessage("C0GENERAL", tc.opts...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("PostMessage: %v", err)
				}
				return
			}
			if got := slackError(t, err); got != tc.want {
				t.Fatalf("error = %q, want %q", got, tc.want)
			}
			if tc.want == "invalid_blocks" {
				var se slack.SlackErrorResponse
				errors.As(err, &se)
				if len(se.Errors) == 0 || len(se.ResponseMetadata.Messages) == 0 {
					t.Errorf("invalid_blocks without an explanation: %+v", se)
				}
			}
		})
	}
}

func TestFailNext(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	emu.FailNext("chat.postMessage", "is_archived")
	_, _, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("one", false))
	if got := slackError(t, err); got != "is_archived" {
		t.Fatalf("error = %q", got)
	}
	if _, _, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("two", false)); err != nil {
		t.Fatalf("second call: %v", err)
	}
	calls := emu.Calls("chat.postMessage")
	if len(calls) != 2 || calls[0].Error != "is_archived" || calls[1].Error != "" || calls[1].Params.Get("text") != "two" {
		t.Errorf("calls = %+v", calls)
	}
	if msgs := emu.Thread("C0GENERAL", ""); len(msgs) != 1 || msgs[0].Text != "two" {
		t.Errorf("messages = %+v", msgs)
	}
}

func TestRateLimitNext(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	emu.RateLimitNext("chat.update", 1500*time.Millisecond)
	_, ts, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("one", false))
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = api.UpdateMessage("C0GENERAL", ts, slack.MsgOptionText("two", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) {
		t.Fatalf("error %v (%T) is not a *slack.RateLimitedError", err, err)
	}
	if rl.RetryAfter != 2*time.Second {
		t.Errorf("RetryAfter = %v, want 2s (rounded up)", rl.RetryAfter)
	}
	if _, _, _, err := api.UpdateMessage("C0GENERAL", ts, slack.MsgOptionText("two", false)); err != nil {
		t.Fatalf("after the rate limit: %v", err)
	}
	if calls := emu.Calls("chat.update"); len(calls) != 2 || calls[0].Error != "ratelimited" {
		t.Errorf("calls = %+v", calls)
	}
}

func TestLatency(t *testing.T) {
	emu := MustStart(t, emulator.Config{Latency: map[string]time.Duration{"auth.test": 50 * time.Millisecond}})
	start := time.Now()
	if _, err := NewAPI(emu).AuthTest(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("auth.test answered after %v, want at least the 50ms latency", d)
	}
	emu.SetLatency("auth.test", 0)
}

func TestUpdateAndDelete(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	userTS, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "mine", "")
	_, ts, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("draft", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessage("C0GENERAL", ts, slack.MsgOptionText("final", false)); err != nil {
		t.Fatal(err)
	}
	if m, _ := emu.Message("C0GENERAL", ts); m.Text != "final" || !m.Edited {
		t.Errorf("updated message = %+v", m)
	}
	_, _, _, err = api.UpdateMessage("C0GENERAL", userTS, slack.MsgOptionText("hijack", false))
	if got := slackError(t, err); got != "cant_update_message" {
		t.Errorf("updating a user's message: %q", got)
	}
	_, _, err = api.DeleteMessage("C0GENERAL", userTS)
	if got := slackError(t, err); got != "cant_delete_message" {
		t.Errorf("deleting a user's message: %q", got)
	}
	if _, _, err := api.DeleteMessage("C0GENERAL", ts); err != nil {
		t.Fatal(err)
	}
	if _, ok := emu.Message("C0GENERAL", ts); ok {
		t.Error("deleted message still visible")
	}
	_, _, err = api.DeleteMessage("C0GENERAL", ts)
	if got := slackError(t, err); got != "message_not_found" {
		t.Errorf("deleting twice: %q", got)
	}
}

func TestEphemeral(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "hi", "")
	ts, err := api.PostEphemeral("C0GENERAL", "U0ALICE", slack.MsgOptionText("only you", false), slack.MsgOptionTS(parent))
	if err != nil || ts == "" {
		t.Fatalf("PostEphemeral = %q, %v", ts, err)
	}
	if got := emu.Ephemerals("C0GENERAL", "U0ALICE"); len(got) != 1 || got[0].Text != "only you" || got[0].ThreadTS != parent {
		t.Errorf("alice's ephemerals = %+v", got)
	}
	if got := emu.Ephemerals("C0GENERAL", "U0BOB"); len(got) != 0 {
		t.Errorf("bob sees %+v", got)
	}
	if got := emu.Thread("C0GENERAL", parent); len(got) != 1 {
		t.Errorf("the ephemeral message is in the thread: %+v", got)
	}
	_, err = api.PostEphemeral("C0GENERAL", "U0NOBODY", slack.MsgOptionText("x", false))
	if got := slackError(t, err); got != "user_not_found" {
		t.Errorf("error = %q", got)
	}
}

func TestAssistantStatus(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }

	emu := MustStart(t, emulator.Config{Now: clock})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> hi", "")

	err := api.SetAssistantThreadsStatus(slack.AssistantThreadsSetStatusParameters{ChannelID: "C0GENERAL", Status: "is thinking…"})
	if got := slackError(t, err); got != "invalid_arguments" {
		t.Errorf("without thread_ts: %q", got)
	}
	set := func(status string) {
		t.Helper()
		err := api.SetAssistantThreadsStatus(slack.AssistantThreadsSetStatusParameters{ChannelID: "C0GENERAL", ThreadTS: parent, Status: status})
		if err != nil {
			t.Fatal(err)
		}
	}
	set("is thinking…")
	if got := emu.Status("C0GENERAL", parent); got != "is thinking…" {
		t.Errorf("status = %q", got)
	}
	if _, _, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("answer", false), slack.MsgOptionTS(parent)); err != nil {
		t.Fatal(err)
	}
	if got := emu.Status("C0GENERAL", parent); got != "" {
		t.Errorf("status after the bot's reply = %q", got)
	}
	set("is searching…")
	advance(2 * time.Minute)
	if got := emu.Status("C0GENERAL", parent); got != "" {
		t.Errorf("status after two minutes = %q", got)
	}
	if got := emu.StatusHistory("C0GENERAL", parent); !slices.Equal(got, []string{"is thinking…", "", "is searching…"}) {
		t.Errorf("history = %q", got)
	}
}

func TestReactions(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	ts, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "hi", "")
	ref := slack.NewRefToMessage("C0GENERAL", ts)
	if err := api.AddReaction("eyes", ref); err != nil {
		t.Fatal(err)
	}
	if got := slackError(t, api.AddReaction("eyes", ref)); got != "already_reacted" {
		t.Errorf("second add: %q", got)
	}
	if m, _ := emu.Message("C0GENERAL", ts); len(m.Reactions) != 1 || m.Reactions[0].Name != "eyes" || m.Reactions[0].Users[0] != "U0BOT" {
		t.Errorf("reactions = %+v", m.Reactions)
	}
	if err := api.RemoveReaction("eyes", ref); err != nil {
		t.Fatal(err)
	}
	if got := slackError(t, api.RemoveReaction("eyes", ref)); got != "no_reaction" {
		t.Errorf("second remove: %q", got)
	}
	if m, _ := emu.Message("C0GENERAL", ts); len(m.Reactions) != 0 {
		t.Errorf("reactions = %+v", m.Reactions)
	}
}

func TestInfo(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	ch, err := api.GetConversationInfo(&slack.GetConversationInfoInput{ChannelID: "C0GENERAL"})
	if err != nil || ch.Name != "general" || !ch.IsChannel || ch.IsIM {
		t.Errorf("conversations.info C0GENERAL = %+v, %v", ch, err)
	}
	im, err := api.GetConversationInfo(&slack.GetConversationInfoInput{ChannelID: "D0ALICE"})
	if err != nil || !im.IsIM || im.User != "U0ALICE" {
		t.Errorf("conversations.info D0ALICE = %+v, %v", im, err)
	}
	u, err := api.GetUserInfo("U0ALICE")
	if err != nil || u.Name != "alice" || u.IsBot {
		t.Errorf("users.info alice = %+v, %v", u, err)
	}
	b, err := api.GetUserInfo("U0OTHERBOT")
	if err != nil || !b.IsBot || b.Profile.BotID != "B0OTHER" {
		t.Errorf("users.info otherbot = %+v, %v", b, err)
	}
	if u.Locale != "en-US" {
		t.Errorf("users.info alice locale = %q", u.Locale)
	}
	emu.AddUser(emulator.User{ID: "U0IVAN", Name: "ivan", Locale: "ru-RU"})
	if u, err := api.GetUserInfo("U0IVAN"); err != nil || u.Locale != "ru-RU" {
		t.Errorf("users.info ivan = %+v, %v", u, err)
	}
	_, err = api.GetUserInfo("U0NOBODY")
	if got := slackError(t, err); got != "user_not_found" {
		t.Errorf("error = %q", got)
	}
}

func TestStreaming(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> explain", "")

	_, _, err := api.StartStream("C0GENERAL", slack.MsgOptionTS(parent), slack.MsgOptionMarkdownText("Hel"))
	if got := slackError(t, err); got != "missing_recipient_user_id" {
		t.Errorf("without recipient_user_id: %q", got)
	}
	_, _, err = api.StartStream("C0GENERAL", slack.MsgOptionTS(parent), slack.MsgOptionRecipientUserID("U0ALICE"))
	if got := slackError(t, err); got != "missing_recipient_team_id" {
		t.Errorf("without recipient_team_id: %q", got)
	}

	channel, ts, err := api.StartStream("C0GENERAL", slack.MsgOptionTS(parent), slack.MsgOptionMarkdownText("Hel"),
		slack.MsgOptionRecipientUserID("U0ALICE"), slack.MsgOptionRecipientTeamID("T0TEAM"))
	if err != nil || channel != "C0GENERAL" || ts == "" {
		t.Fatalf("StartStream = %q %q %v", channel, ts, err)
	}
	if m, _ := emu.Message("C0GENERAL", ts); !m.Streaming || m.Text != "Hel" || m.ThreadTS != parent {
		t.Errorf("started stream = %+v", m)
	}
	if _, _, err := api.AppendStream("C0GENERAL", ts, slack.MsgOptionMarkdownText("lo, ")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.AppendStream("C0GENERAL", ts, slack.MsgOptionChunks(slack.NewMarkdownTextChunk("world"))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.StopStream("C0GENERAL", ts, slack.MsgOptionMarkdownText("!")); err != nil {
		t.Fatal(err)
	}
	if m, _ := emu.Message("C0GENERAL", ts); m.Streaming || m.Text != "Hello, world!" {
		t.Errorf("stopped stream = %+v", m)
	}
	_, _, err = api.AppendStream("C0GENERAL", ts, slack.MsgOptionMarkdownText("more"))
	if got := slackError(t, err); got != "message_not_in_streaming_state" {
		t.Errorf("append after stop: %q", got)
	}
	_, _, err = api.AppendStream("C0GENERAL", "1.000001", slack.MsgOptionMarkdownText("more"))
	if got := slackError(t, err); got != "message_not_found" {
		t.Errorf("append to nothing: %q", got)
	}

	t.Run("IMNeedsNoRecipient", func(t *testing.T) {
		dm, _ := emu.PostUserMessage("D0ALICE", "U0ALICE", "hello", "")
		if _, _, err := api.StartStream("D0ALICE", slack.MsgOptionTS(dm), slack.MsgOptionMarkdownText("hi")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("TooLong", func(t *testing.T) {
		_, _, err := api.StartStream("D0ALICE", slack.MsgOptionMarkdownText(strings.Repeat("x", emulator.MaxStreamTextLength+1)))
		if got := slackError(t, err); got != "msg_too_long" {
			t.Errorf("error = %q", got)
		}
	})
}

func TestFileUpload(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "report please", "")
	summary, err := api.UploadFileContext(testContext(t), slack.UploadFileParameters{
		Filename:        "report.md",
		Title:           "Final report",
		Content:         "# Report\n",
		FileSize:        len("# Report\n"),
		Channel:         "C0GENERAL",
		ThreadTimestamp: parent,
		InitialComment:  "Here it is",
	})
	if err != nil {
		t.Fatal(err)
	}
	files := emu.Files()
	if len(files) != 1 || files[0].ID != summary.ID || string(files[0].Content) != "# Report\n" || files[0].Title != "Final report" || files[0].ThreadTS != parent {
		t.Errorf("files = %+v", files)
	}
	thread := emu.Thread("C0GENERAL", parent)
	if len(thread) != 2 || thread[1].Subtype != "file_share" || thread[1].Text != "Here it is" || len(thread[1].Files) != 1 {
		t.Errorf("thread = %+v", thread)
	}

	msgs, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C0GENERAL", Timestamp: parent})
	if err != nil || len(msgs) != 2 || len(msgs[1].Files) != 1 {
		t.Fatalf("replies = %+v, %v", msgs, err)
	}
	var buf strings.Builder
	if err := api.GetFileContext(testContext(t), msgs[1].Files[0].URLPrivateDownload, &buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "# Report\n" {
		t.Errorf("downloaded %q", buf.String())
	}
}

func TestConcurrentUse(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "go", "")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if i%2 == 0 {
				if _, err := emu.PostUserMessage("C0GENERAL", "U0BOB", "more", parent); err != nil {
					t.Error(err)
				}
				return
			}
			if _, _, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("reply", false), slack.MsgOptionTS(parent)); err != nil {
				t.Error(err)
			}
			_ = emu.Thread("C0GENERAL", parent)
			_ = emu.Calls("")
		})
	}
	wg.Wait()
	thread := emu.Thread("C0GENERAL", parent)
	if len(thread) != 9 {
		t.Fatalf("thread has %d messages, want 9", len(thread))
	}
	for i := 1; i < len(thread); i++ {
		if thread[i-1].TS >= thread[i].TS {
			t.Errorf("timestamps not increasing: %s then %s", thread[i-1].TS, thread[i].TS)
		}
	}
}

func TestHistoryAndFriends(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	var top []string
	for _, text := range []string{"one", "two", "three"} {
		ts, _ := emu.PostUserMessage("C0RANDOM", "U0BOB", text, "")
		top = append(top, ts)
	}
	_, _ = emu.PostUserMessage("C0RANDOM", "U0ALICE", "a reply", top[0])

	t.Run("HistoryNewestFirst", func(t *testing.T) {
		var got []string
		cursor := ""
		for {
			resp, err := api.GetConversationHistory(&slack.GetConversationHistoryParameters{ChannelID: "C0RANDOM", Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range resp.Messages {
				got = append(got, m.Text)
			}
			if !resp.HasMore {
				break
			}
			cursor = resp.ResponseMetaData.NextCursor
		}
		if strings.Join(got, ",") != "three,two,one" {
			t.Errorf("history = %v", got)
		}
	})
	t.Run("Permalink", func(t *testing.T) {
		link, err := api.GetPermalink(&slack.PermalinkParameters{Channel: "C0RANDOM", Ts: top[1]})
		if err != nil || !strings.Contains(link, "/archives/C0RANDOM/p") {
			t.Errorf("permalink = %q, %v", link, err)
		}
	})
	t.Run("OpenIM", func(t *testing.T) {
		ch, _, already, err := api.OpenConversation(&slack.OpenConversationParameters{Users: []string{"U0ALICE"}})
		if err != nil || ch.ID != "D0ALICE" || !already {
			t.Errorf("open alice = %+v %v %v", ch, already, err)
		}
		ch, _, already, err = api.OpenConversation(&slack.OpenConversationParameters{Users: []string{"U0BOB"}})
		if err != nil || already || !strings.HasPrefix(ch.ID, "D") {
			t.Fatalf("open bob = %+v %v %v", ch, already, err)
		}
		if _, err := emu.PostUserMessage(ch.ID, "U0BOB", "hi", ""); err != nil {
			t.Error(err)
		}
	})
	t.Run("DeleteParentLeavesTombstone", func(t *testing.T) {
		if err := emu.DeleteMessage("C0RANDOM", top[0]); err != nil {
			t.Fatal(err)
		}
		thread := emu.Thread("C0RANDOM", top[0])
		if len(thread) != 2 || thread[0].Subtype != "tombstone" || thread[1].Text != "a reply" {
			t.Errorf("thread = %+v", thread)
		}
		if err := emu.DeleteMessage("C0RANDOM", top[1]); err != nil {
			t.Fatal(err)
		}
		if _, ok := emu.Message("C0RANDOM", top[1]); ok {
			t.Error("a deleted message without replies is still there")
		}
	})
	t.Run("StreamBlocksChunk", func(t *testing.T) {
		dm, _ := emu.PostUserMessage("D0ALICE", "U0ALICE", "hi", "")
		_, ts, err := api.StartStream("D0ALICE", slack.MsgOptionTS(dm), slack.MsgOptionChunks(
			slack.NewMarkdownTextChunk("Working…"),
			slack.NewBlocksChunk(slack.NewDividerBlock()),
		))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := api.StopStream("D0ALICE", ts, slack.MsgOptionBlocks(slack.NewDividerBlock())); err != nil {
			t.Fatal(err)
		}
		m, _ := emu.Message("D0ALICE", ts)
		var blocks []map[string]any
		if err := json.Unmarshal(m.Blocks, &blocks); err != nil || len(blocks) != 2 || m.Text != "Working…" {
			t.Errorf("streamed message = %+v (%v)", m, err)
		}
	})
}
