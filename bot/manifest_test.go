package bot_test

import (
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/threadwright/threadwright/bot"
)

func TestManifest(t *testing.T) {
	out, err := bot.NewManifest("threadwright").YAML()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(out, &m); err != nil {
		t.Fatalf("manifest is not YAML: %v", err)
	}
	settings := m["settings"].(map[string]any)
	if settings["socket_mode_enabled"] != true || settings["interactivity"].(map[string]any)["is_enabled"] != true {
		t.Errorf("socket mode and interactivity must be on: %v", settings)
	}
	events := settings["event_subscriptions"].(map[string]any)["bot_events"].([]any)
	for _, want := range []string{"app_mention", "message.im", "message.channels"} {
		if !contains(events, want) {
			t.Errorf("bot_events lacks %s", want)
		}
	}
	scopes := m["oauth_config"].(map[string]any)["scopes"].(map[string]any)["bot"].([]any)
	for _, want := range []string{"app_mentions:read", "chat:write", "im:history", "channels:history", "reactions:write", "commands", "users:read", "files:write", "files:read"} {
		if !contains(scopes, want) {
			t.Errorf("bot scopes lack %s", want)
		}
	}
	shortcuts := m["features"].(map[string]any)["shortcuts"].([]any)
	if len(shortcuts) != 1 || shortcuts[0].(map[string]any)["type"] != "message" || shortcuts[0].(map[string]any)["callback_id"] != bot.ShortcutCallbackID {
		t.Errorf("shortcuts: %v", shortcuts)
	}
	cmds := m["features"].(map[string]any)["slash_commands"].([]any)
	if len(cmds) != 1 || cmds[0].(map[string]any)["command"] != "/threadwright" {
		t.Errorf("slash command: %v", cmds)
	}
}

func contains(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
