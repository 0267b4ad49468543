package service_test

import (
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/conversation/workflowrun"
)

// TestForeignCommand: a command acts on a thread of the channel where it was typed,
// or on a workflow the user started in any channel; anything else is foreign.
func TestForeignCommand(t *testing.T) {
	thread := conversation.Key{TeamID: "T1", ChannelID: "CA", ThreadTS: "10.1"}
	alices := &workflow.State{Name: "proposal", StartedBy: "UALICE", Status: workflow.RunRunning}
	cmd := func(user, origin string) *conversation.CommandInput {
		return &conversation.CommandInput{Source: conversation.SourceSlash, UserID: user, Line: "cancel", Origin: origin}
	}
	for _, tt := range []struct {
		name    string
		cmd     *conversation.CommandInput
		ws      *workflow.State
		foreign bool
	}{
		{"TypedInTheThread", &conversation.CommandInput{Source: conversation.SourceMention, UserID: "UBOB", Line: "cancel"}, alices, false},
		{"SameChannelOthersWorkflow", cmd("UBOB", "CA"), alices, false}, // permissions decide
		{"OtherChannelOwnWorkflow", cmd("UALICE", "CB"), alices, false},
		{"OtherChannelOthersWorkflow", cmd("UBOB", "CB"), alices, true},
		{"OtherChannelNoWorkflow", cmd("UBOB", "CB"), nil, true},
		{"OtherChannelNoStarter", cmd("", "CB"), &workflow.State{Name: "proposal"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := workflowrun.ForeignCommand(thread, tt.cmd, tt.ws); got != tt.foreign {
				t.Errorf("foreign = %v; want %v", got, tt.foreign)
			}
		})
	}
}
