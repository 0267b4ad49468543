package workflowrun

import (
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestAsker: a write's tool call asks the person whose action the turn runs, else
// (a pipeline's turn) the run's starter; nobody when that is an HTTP API token, which
// no card can ask, so the call is refused.
func TestAsker(t *testing.T) {
	for _, tt := range []struct{ name, user, starter, want string }{
		{"PersonActs", "U2", "U1", "U2"},
		{"PipelineTurn", "", "U1", "U1"},
		{"TokenActs", conversation.APIActorPrefix + "ci-bot", "U1", ""},
		{"TokenStarted", "", conversation.APIActorPrefix + "ci-bot", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			turn := &wfTurn{user: tt.user, state: conversation.State{Workflow: &workflow.State{StartedBy: tt.starter}}}
			if got := (author{turn}).asker(); got != tt.want {
				t.Errorf("asker = %q, want %q", got, tt.want)
			}
		})
	}
}
