package agents_test

import (
	"context"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
)

func TestSynthesize(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		s    *agents.Synthesizer
		f    conversation.Findings
		want string
	}{
		{"Answer", agents.NewSynthesizer(), conversation.Findings{Answer: "It is **13:00**.\n"}, "It is *13:00*."},
		{"Truncated", agents.NewSynthesizer(), conversation.Findings{Answer: "Partial", Truncated: true}, "Partial\n\n" + agents.DefaultTruncatedNote},
		{"Empty", agents.NewSynthesizer(), conversation.Findings{Answer: " \n"}, agents.DefaultEmptyReply},
		{"ZeroValue", &agents.Synthesizer{}, conversation.Findings{}, agents.DefaultEmptyReply},
		{"CustomTexts", &agents.Synthesizer{TruncatedNote: "_cut_", EmptyReply: "nothing"}, conversation.Findings{Answer: "a", Truncated: true}, "a\n\n_cut_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.s.Synthesize(ctx, prompt("q"), tt.f)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
