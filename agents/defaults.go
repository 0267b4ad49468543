package agents

import (
	"log/slog"

	"github.com/threadwright/threadwright/prompts"
)

// orPrompts returns p, or the embedded prompts when p is nil (every agent's
// Prompts default).
func orPrompts(p *prompts.Set) *prompts.Set {
	if p == nil {
		return prompts.MustParse()
	}
	return p
}

// orLogger returns l, or slog.Default() when l is nil (every agent's Logger default).
func orLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
