package turns

import (
	"context"
	"errors"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// A newer message stops the thread's running turn, but never its own: the worker can
// take a message (learning of it from the lease's renewal) before Submit's notice
// that it arrived, and that notice must not stop the message's own turn.
func TestNewMessageStopsOnlyAnOlderTurn(t *testing.T) {
	k := conversation.Key{TeamID: "T", ChannelID: "C", ThreadTS: "1.0"}
	in := func(id string) conversation.Input {
		return conversation.Input{ID: id, Key: k, Kind: conversation.KindUserMessage, Message: &conversation.UserMessage{UserID: "U1", Text: id}}
	}
	for _, c := range []struct {
		name    string
		running active
		stops   bool
	}{
		{"OlderTurn", active{inputID: "m1", stoppable: true, interruptible: true}, true},
		{"ItsOwnTurn", active{inputID: "m2", stoppable: true, interruptible: true}, false},
		{"NotStoppable", active{inputID: "m1", interruptible: true}, false},
		{"PipelineRun", active{inputID: "m1", stoppable: true, interruptible: true, run: "run:1"}, false},
		// Under queue and merge a newer message waits for the running turn.
		{"NotInterruptible", active{inputID: "m1", stoppable: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			a := c.running
			a.cancel = cancel
			ts := &threadSet{m: map[conversation.Key]*thread{k: {run: &a}}}
			got := ts.stopOlder(in("m2"), conversation.Stopped{By: "U1", NewMessage: true})
			var by conversation.Stopped
			stopped := errors.As(context.Cause(ctx), &by)
			if got != c.stops || stopped != c.stops {
				t.Fatalf("stopOlder = %v, turn stopped %v; want %v", got, stopped, c.stops)
			}
		})
	}
}
