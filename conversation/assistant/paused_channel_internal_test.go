package assistant

import (
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// TestPausedChannel: a resumed turn runs under the paused turn's channel
// (ToolApproval.PolicyChannel), "" when that was the thread's own; a confirmation
// saved before PolicyChannel existed falls back to the state's assistant channel.
func TestPausedChannel(t *testing.T) {
	key := conversation.Key{TeamID: "T1", ChannelID: "D0DM", ThreadTS: "1.0"}
	st := conversation.State{Assistant: &conversation.AssistantView{ContextChannelID: "C0NOW"}}
	for _, tc := range []struct {
		name, saved, want string
	}{
		{"PausedTurnsChannel", "C0THEN", "C0THEN"},
		{"ThreadsOwn", "D0DM", ""},
		{"OldCheckpoint", "", "C0NOW"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pausedChannel(key, st, &conversation.ToolApproval{PolicyChannel: tc.saved}); got != tc.want {
				t.Errorf("pausedChannel = %q, want %q", got, tc.want)
			}
		})
	}
}
