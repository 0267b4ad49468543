package emulator_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/threadwright/threadwright/playground/emulator"
)

// TestAgentSessionCalls: agents.sessions.setStatus and rename through slack-go,
// refused as Slack refuses them (the rules in assistant.go), and the session they leave.
func TestAgentSessionCalls(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	ts, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> hi", "")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		p    slack.AgentSessionSetStatusParameters
		code string
	}{
		"unknown status": {slack.AgentSessionSetStatusParameters{Status: "running", ChannelID: "C0GENERAL", ThreadTS: ts}, "invalid_arguments"},
		"no channel":     {slack.AgentSessionSetStatusParameters{Status: "active", ThreadTS: ts}, "invalid_arguments"},
		"unknown thread": {slack.AgentSessionSetStatusParameters{Status: "active", ChannelID: "C0GENERAL", ThreadTS: "1.000001"}, "invalid_thread_ts"},
	} {
		if _, err := api.SetAgentSessionStatus(tc.p); slackError(t, err) != tc.code {
			t.Errorf("%s: error %v, want %s", name, err, tc.code)
		}
	}
	if _, err := api.RenameAgentSession(slack.AgentSessionRenameParameters{Title: "x", ChannelID: "C0GENERAL", ThreadTS: ts}); slackError(t, err) != "session_not_found" {
		t.Errorf("rename without a session: %v", err)
	}
	if _, ok := emu.Session("C0GENERAL", ts); ok {
		t.Fatal("a refused call made a session")
	}

	// The first call creates the session with its title; later titles are ignored.
	r, err := api.SetAgentSessionStatus(slack.AgentSessionSetStatusParameters{Status: "processing", ChannelID: "C0GENERAL", ThreadTS: ts, Title: "hi", InitiatorUserID: "U0ALICE"})
	if err != nil || r.Status != "processing" || r.Title != "hi" {
		t.Fatalf("setStatus: %+v, %v", r, err)
	}
	if _, err := api.SetAgentSessionStatus(slack.AgentSessionSetStatusParameters{Status: "active", ChannelID: "C0GENERAL", ThreadTS: ts, Title: "other"}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.RenameAgentSession(slack.AgentSessionRenameParameters{Title: strings.Repeat("x", emulator.MaxSessionTitle+1), ChannelID: "C0GENERAL", ThreadTS: ts}); slackError(t, err) != "invalid_arguments" {
		t.Errorf("a title too long: %v", err)
	}
	if _, err := api.RenameAgentSession(slack.AgentSessionRenameParameters{Title: "greeting", ChannelID: "C0GENERAL", ThreadTS: ts}); err != nil {
		t.Fatal(err)
	}
	s, _ := emu.Session("C0GENERAL", ts)
	if s.Title != "greeting" || s.Initiator != "U0ALICE" || strings.Join(s.History, ",") != "processing,active" || len(s.Renames) != 1 {
		t.Errorf("session %+v", s)
	}
}

// TestNativeStopHaltsStreams: the person's Stop halts the thread's stream (a later
// append is refused with message_not_in_streaming_state) and sends
// agent_session_stopped with the halted stream's ts, in the shape slack-go decodes;
// a rename sends agent_session_title_changed.
func TestNativeStopHaltsStreams(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	b := StartBot(t, emu)
	ctx := testContext(t)
	api := NewAPI(emu)
	ts, err := emu.PostUserMessage("D0ALICE", "U0ALICE", "hi", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.SetAgentSessionStatus(slack.AgentSessionSetStatusParameters{Status: "processing", ChannelID: "D0ALICE", ThreadTS: ts, Title: "hi"}); err != nil {
		t.Fatal(err)
	}
	_, streamTS, err := api.StartStream("D0ALICE", slack.MsgOptionTS(ts), slack.MsgOptionRecipientUserID("U0ALICE"), slack.MsgOptionRecipientTeamID("T0TEAM"))
	if err != nil {
		t.Fatal(err)
	}
	halted, err := emu.StopSession("D0ALICE", ts, "U0ALICE")
	if err != nil || len(halted) != 1 || halted[0] != streamTS {
		t.Fatalf("halted %v, %v", halted, err)
	}
	if _, _, err := api.AppendStream("D0ALICE", streamTS, slack.MsgOptionMarkdownText("more")); slackError(t, err) != "message_not_in_streaming_state" {
		t.Errorf("append after the native Stop: %v", err)
	}
	if err := emu.RenameSessionAs("D0ALICE", ts, "U0ALICE", "Mine"); err != nil {
		t.Fatal(err)
	}
	var stopped *slackevents.AgentSessionStoppedEvent
	var renamed *slackevents.AgentSessionTitleChangedEvent
	for stopped == nil || renamed == nil {
		req, ev := b.NextEvent(t, ctx)
		b.MustAck(t, req)
		switch e := ev.InnerEvent.Data.(type) {
		case *slackevents.AgentSessionStoppedEvent:
			stopped = e
		case *slackevents.AgentSessionTitleChangedEvent:
			renamed = e
		}
	}
	if stopped.ThreadTimestamp != ts || stopped.User != "U0ALICE" || len(stopped.StreamingMessageTimestamps) != 1 || stopped.StreamingMessageTimestamps[0] != streamTS {
		t.Errorf("agent_session_stopped %+v", stopped)
	}
	if renamed.Title != "Mine" || renamed.PreviousTitle != "hi" || renamed.ThreadTimestamp != ts {
		t.Errorf("agent_session_title_changed %+v", renamed)
	}
}

// TestPlaygroundAgentView: the page opens the Messages tab (the viewed channel as
// the app's context, then app_home_opened), shows the threads' sessions in its state,
// and presses a session's native Stop and renames it as the person.
func TestPlaygroundAgentView(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	b := StartBot(t, emu)
	ctx := testContext(t)
	api := NewAPI(emu)
	out := mustPage(t, emu, "/ui/messages", map[string]string{"user": "U0ALICE", "context": "C0GENERAL"})
	if out["channel"] != "D0ALICE" {
		t.Fatalf("/ui/messages: %v", out)
	}
	var viewed *slackevents.AppContextChangedEvent
	var opened *slackevents.AppHomeOpenedEvent
	for opened == nil {
		req, ev := b.NextEvent(t, ctx)
		b.MustAck(t, req)
		switch e := ev.InnerEvent.Data.(type) {
		case *slackevents.AppContextChangedEvent:
			viewed = e
		case *slackevents.AppHomeOpenedEvent:
			opened = e
		}
	}
	if viewed == nil || len(viewed.Context.Entities) != 1 || viewed.Context.Entities[0].Value != "C0GENERAL" || opened.Tab != "messages" || opened.Channel != "D0ALICE" {
		t.Fatalf("context %+v, opened %+v: want #general in view, then the Messages tab", viewed, opened)
	}

	ts, err := emu.PostUserMessage("D0ALICE", "U0ALICE", "hi", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.SetAgentSessionStatus(slack.AgentSessionSetStatusParameters{Status: "processing", ChannelID: "D0ALICE", ThreadTS: ts, Title: "hi"}); err != nil {
		t.Fatal(err)
	}
	_, state := pageCall(t, emu, "GET", "/ui/state?user=U0ALICE", nil)
	if s, _ := state["sessions"].([]any); len(s) != 1 || s[0].(map[string]any)["status"] != "processing" {
		t.Fatalf("state sessions %v", state["sessions"])
	}
	mustPage(t, emu, "/ui/session", map[string]string{"user": "U0ALICE", "channel": "D0ALICE", "thread_ts": ts, "action": "rename", "title": "Greeting"})
	mustPage(t, emu, "/ui/session", map[string]string{"user": "U0ALICE", "channel": "D0ALICE", "thread_ts": ts, "action": "stop"})
	var stopped bool
	for !stopped {
		req, ev := b.NextEvent(t, ctx)
		b.MustAck(t, req)
		_, stopped = ev.InnerEvent.Data.(*slackevents.AgentSessionStoppedEvent)
	}
	if s, _ := emu.Session("D0ALICE", ts); s.Title != "Greeting" {
		t.Errorf("session %+v after the person's rename", s)
	}
	if status, _ := pageCall(t, emu, "POST", "/ui/session", map[string]string{"user": "U0ALICE", "channel": "D0ALICE", "thread_ts": ts, "action": "explode"}); status != 400 {
		t.Errorf("an unknown action: status %d", status)
	}
}

// TestStopStreamSetsTheSession: chat.stopStream sets the session of the stream's
// thread to its session_status, active by default (Slack's reference of
// chat.stopStream), and refuses a status that is not one of the four; a thread
// without a session gets none.
func TestStopStreamSetsTheSession(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	stream := func(ts string) string {
		t.Helper()
		_, streamTS, err := api.StartStream("C0GENERAL", slack.MsgOptionTS(ts), slack.MsgOptionRecipientUserID("U0ALICE"), slack.MsgOptionRecipientTeamID("T0TEAM"))
		if err != nil {
			t.Fatal(err)
		}
		return streamTS
	}
	ts, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> hi", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.SetAgentSessionStatus(slack.AgentSessionSetStatusParameters{Status: "processing", ChannelID: "C0GENERAL", ThreadTS: ts}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.StopStream("C0GENERAL", stream(ts), slack.MsgOptionMarkdownText("done")); err != nil {
		t.Fatal(err)
	}
	if s, _ := emu.Session("C0GENERAL", ts); s.Status != "active" || strings.Join(s.History, ",") != "processing,active" {
		t.Errorf("after chat.stopStream: session %+v, want active", s)
	}

	// slack-go v0.35.0 has no option for session_status: sent as Slack's form.
	stopWith := func(streamTS, status string) (string, error) {
		resp, err := http.PostForm(emu.URL()+"chat.stopStream", url.Values{"token": {emu.Config().BotToken},
			"channel": {"C0GENERAL"}, "ts": {streamTS}, "session_status": {status}})
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var r slack.SlackResponse
		return r.Error, json.NewDecoder(resp.Body).Decode(&r)
	}
	open := stream(ts)
	if code, err := stopWith(open, "finished"); err != nil || code != "invalid_arguments" {
		t.Errorf("session_status finished: %q, %v; want invalid_arguments", code, err)
	}
	if code, err := stopWith(open, "closed"); err != nil || code != "" {
		t.Fatalf("session_status closed: %q, %v", code, err)
	}
	if s, _ := emu.Session("C0GENERAL", ts); s.Status != "closed" || strings.Join(s.History, ",") != "processing,active,closed" {
		t.Errorf("after chat.stopStream with session_status closed: session %+v", s)
	}

	other, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> again", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.StopStream("C0GENERAL", stream(other)); err != nil {
		t.Fatal(err)
	}
	if s, ok := emu.Session("C0GENERAL", other); ok {
		t.Errorf("a thread without a session got one: %+v", s)
	}
}
