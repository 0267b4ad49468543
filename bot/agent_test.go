package bot

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/slack-go/slack"
	"gopkg.in/yaml.v3"

	"github.com/threadwright/threadwright/conversation"
)

func readAgentSample(t *testing.T, name string) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "agent", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestAgentEventSamples decodes the agent view's event samples
// (testdata/agent/SOURCES.md) into inputs: the Messages tab's for app_home_opened and
// app_context_changed, the session thread's for the rename, and a Stop of whatever
// runs for agent_session_stopped.
func TestAgentEventSamples(t *testing.T) {
	tab := conversation.MessagesTabKey("T0123ABC456", "D0123ABC456")
	thread := conversation.Key{TeamID: "T0123ABC456", ChannelID: "D0123ABC456", ThreadTS: "1789656590.000100"}

	in, ok, reason := inputFromEvent(parse(t, readAgentSample(t, "app_home_opened.json")), me)
	if !ok || in.Key != tab || in.Kind != conversation.KindAssistantThread || in.Thread.Event != conversation.AppHomeOpened || in.Thread.UserID != "U123ABC456" {
		t.Errorf("app_home_opened: ok %v (%s), %+v %+v", ok, reason, in, in.Thread)
	}

	in, ok, reason = inputFromEvent(parse(t, readAgentSample(t, "app_context_changed.json")), me)
	want := []conversation.ViewedItem{
		{Kind: conversation.ViewedChannel, ID: "C01234ABDCE"},
		{Kind: conversation.ViewedMessage, ChannelID: "C01234ABDCE", TS: "1789656000.000100"},
		{Kind: conversation.ViewedCanvas, ID: "F0CANVAS01"},
		{Kind: conversation.ViewedList, ID: "F0LIST0001"},
	}
	if !ok || in.Key != tab || in.Thread.Event != conversation.AppContextChanged || !slices.Equal(in.Thread.Viewed, want) {
		t.Errorf("app_context_changed: ok %v (%s), %+v", ok, reason, in.Thread)
	}
	if again, _, _ := inputFromEvent(parse(t, readAgentSample(t, "app_context_changed.json")), me); again.ID != in.ID {
		t.Errorf("a redelivery has another id: %s, %s", again.ID, in.ID)
	}

	in, ok, reason = inputFromEvent(parse(t, readAgentSample(t, "agent_session_title_changed.json")), me)
	if !ok || in.Key != thread || in.Thread.Event != conversation.SessionTitleChanged || in.Thread.Title != "Q3 launch plan" {
		t.Errorf("agent_session_title_changed: ok %v (%s), %+v", ok, reason, in.Thread)
	}

	in, ok, reason = inputFromEvent(parse(t, readAgentSample(t, "agent_session_stopped.json")), me)
	if !ok || in.Key != thread || in.Kind != conversation.KindAction || in.Action.Action.Name != conversation.ActionStop ||
		in.Action.Action.Arg != conversation.SessionStop || in.Action.UserID != "U123ABC456" {
		t.Errorf("agent_session_stopped: ok %v (%s), %+v", ok, reason, in.Action)
	}

	// The Home tab is not the Messages tab.
	ev := parse(t, callback(`{"type":"app_home_opened","user":"U1","channel":"D1","tab":"home","event_ts":"1.1"}`))
	if _, ok, _ := inputFromEvent(ev, me); ok {
		t.Error("app_home_opened on the Home tab was taken")
	}
}

// TestManifestAgentView reads the default manifest as slack-go's own manifest type
// reads it: the agent view with a description and prompts, no assistant view, and
// the scopes and events testdata/agent's sample asks for.
func TestManifestAgentView(t *testing.T) {
	out, err := NewManifest("threadwright").YAML()
	if err != nil {
		t.Fatal(err)
	}
	var got slack.Manifest
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	av := got.Features.AgentView
	if av == nil || av.AgentDescription == "" || len(av.SuggestedPrompts) == 0 || got.Features.AssistantView != nil {
		t.Fatalf("features: agent_view %+v, assistant_view %+v", av, got.Features.AssistantView)
	}
	var sample slack.Manifest
	if err := yaml.Unmarshal([]byte(readAgentSample(t, "manifest_agent_view.yaml")), &sample); err != nil {
		t.Fatal(err)
	}
	for _, s := range sample.OAuthConfig.Scopes.Bot {
		if !slices.Contains(got.OAuthConfig.Scopes.Bot, s) {
			t.Errorf("bot scopes lack %s", s)
		}
	}
	for _, e := range sample.Settings.EventSubscriptions.BotEvents {
		if !slices.Contains(got.Settings.EventSubscriptions.BotEvents, e) {
			t.Errorf("bot events lack %s", e)
		}
	}
	if slices.Contains(got.Settings.EventSubscriptions.BotEvents, "assistant_thread_started") {
		t.Error("the agent view's manifest subscribes to the assistant view's events")
	}
}
