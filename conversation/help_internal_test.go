package conversation

import (
	"strings"
	"testing"
)

// TestCommandUsageInEachLanguage: help lists every command with its line in the
// asker's language, an example and where to type it.
func TestCommandUsageInEachLanguage(t *testing.T) {
	for lang, want := range map[string][]string{
		"en": {"— start a workflow in a new thread", "E.g. `/threadwright start blog ", "In a channel: `/threadwright <command>`"},
		"ru": {"— начать процесс в новой ветке", "Например: `/threadwright start blog ", "В канале: `/threadwright <команда>`"},
	} {
		got := commandUsage(lang)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("commandUsage(%q) lacks %q:\n%s", lang, w, got)
			}
		}
		for _, c := range commands {
			if !strings.Contains(got, "`"+c.usage+"` — ") {
				t.Errorf("commandUsage(%q) lacks %q", lang, c.usage)
			}
		}
	}
	for _, c := range commands {
		if c.whatRu == "" || c.whatRu == c.what {
			t.Errorf("command %q has no Russian line", c.usage)
		}
	}
}
