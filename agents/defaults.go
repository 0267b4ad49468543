package agents

import (
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
