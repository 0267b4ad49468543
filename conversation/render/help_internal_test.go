package render

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// TestCommandUsageInEachLanguage: help lists every command with its line in the
// asker's language, an example and where to type it.
func TestCommandUsageInEachLanguage(t *testing.T) {
	for lang, want := range map[string][]string{
		"en": {"— start a workflow in a new thread", "E.g. `/threadwright start blog ", "In a channel: `/threadwright <command>`"},
		"ru": {"— начать процесс в новой ветке", "Например: `/threadwright start blog ", "В канале: `/threadwright <команда>`"},
	} {
		got := CommandUsage(lang)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("commandUsage(%q) lacks %q:\n%s", lang, w, got)
			}
		}
		for _, c := range conversation.Commands {
			if !strings.Contains(got, "`"+c.Usage+"` — ") {
				t.Errorf("commandUsage(%q) lacks %q", lang, c.Usage)
			}
		}
	}
	for _, c := range conversation.Commands {
		if c.WhatRu == "" || c.WhatRu == c.What {
			t.Errorf("command %q has no Russian line", c.Usage)
		}
	}
}
