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

// TestAssistantThreadEventSamples decodes Slack's published examples of the assistant
// view's events (testdata/assistant/SOURCES.md) into inputs for the thread.
func TestAssistantThreadEventSamples(t *testing.T) {
	for _, tc := range []struct{ file, event, eventTS string }{
		{"assistant_thread_started.json", conversation.AssistantThreadStarted, "1715873754.429808"},
		{"assistant_thread_context_changed.json", conversation.AssistantThreadContextChanged, "17298244.022142"},
	} {
		t.Run(tc.event, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "assistant", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			in, ok, reason := inputFromEvent(parse(t, string(body)), me)
			if !ok {
				t.Fatalf("dropped: %s", reason)
			}
			want := conversation.Input{
				ID:      "assistant:T123ABC456:D123ABC456:1729999327.187299:" + tc.event + ":" + tc.eventTS,
				EventID: "Ev123ABC456",
				Key:     conversation.Key{TeamID: "T123ABC456", ChannelID: "D123ABC456", ThreadTS: "1729999327.187299"},
				Kind:    conversation.KindAssistantThread,
			}
			got := in
			got.Thread = nil
			if got.ID != want.ID || got.EventID != want.EventID || got.Key != want.Key || got.Kind != want.Kind || got.Message != nil {
				t.Errorf("input %+v, want %+v", got, want)
			}
			th := in.Thread
			if th == nil || th.Event != tc.event || th.UserID != "U123ABC456" || th.ContextChannelID != "C123ABC456" || th.ContextTeamID != "T07XY8FPJ5C" {
				t.Errorf("thread %+v", th)
			}
		})
	}
}

func TestAssistantThreadEventIncomplete(t *testing.T) {
	ev := parse(t, callback(`{"type":"assistant_thread_started","assistant_thread":{"user_id":"U1","context":{},"channel_id":"D1"},"event_ts":"1.2"}`))
	if _, ok, reason := inputFromEvent(ev, me); ok || reason != dropIncomplete {
		t.Errorf("an event without thread_ts: ok %v, reason %q", ok, reason)
	}
	// No context (the person views no channel) is fine: the thread keeps its own.
	ev = parse(t, callback(`{"type":"assistant_thread_context_changed","assistant_thread":{"user_id":"U1","context":{},"channel_id":"D1","thread_ts":"1.1"},"event_ts":"1.3"}`))
	in, ok, _ := inputFromEvent(ev, me)
	if !ok || in.Thread.ContextChannelID != "" || in.Key.TeamID != "T1" {
		t.Errorf("no context: ok %v, %+v", ok, in.Thread)
	}
}

// TestManifestAssistantView reads the manifest as slack-go's own manifest type reads
// it, and checks it has what the sample of testdata/assistant asks for.
func TestManifestAssistantView(t *testing.T) {
	out, err := NewManifestFor("threadwright", SurfaceAssistant).YAML()
	if err != nil {
		t.Fatal(err)
	}
	var got slack.Manifest
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	av := got.Features.AssistantView
	if av == nil || av.AssistantDescription == "" || len(av.SuggestedPrompts) == 0 || len(av.SuggestedPrompts) > conversation.MaxSuggestedPrompts {
		t.Fatalf("features.assistant_view: %+v", av)
	}
	for _, p := range av.SuggestedPrompts {
		if p.Title == "" || p.Message == "" {
			t.Errorf("suggested prompt without title or message: %+v", p)
		}
	}
	body, err := os.ReadFile(filepath.Join("testdata", "assistant", "manifest_assistant_view.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var sample slack.Manifest
	if err := yaml.Unmarshal(body, &sample); err != nil {
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
}
