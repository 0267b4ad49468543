package turns

import (
	"context"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

func TestTurnOutcome(t *testing.T) {
	stopped, stop := context.WithCancelCause(context.Background())
	stop(conversation.Stopped{By: "U1"})
	expired, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	shutdown, closeSvc := context.WithCancel(context.Background())
	closeSvc()
	live := context.Background()
	for _, tc := range []struct {
		name string
		svc  context.Context
		ctx  context.Context
		end  turnEnd
		err  error
		want string
	}{
		{"Answered", live, live, turnEnd{status: conversation.InputDone}, nil, conversation.TurnAnswered},
		{"ErrorReply", live, live, turnEnd{notice: true}, nil, conversation.TurnFailed},
		{"Dropped", live, live, turnEnd{status: conversation.InputDropped}, nil, conversation.TurnDropped},
		{"GivenUp", live, live, turnEnd{status: conversation.InputFailed}, nil, conversation.TurnFailed},
		{"Stopped", live, stopped, turnEnd{notice: true}, nil, conversation.TurnStopped},
		{"TimedOut", live, expired, turnEnd{notice: true}, nil, conversation.TurnTimedOut},
		{"LeftPending", live, live, turnEnd{}, conversation.ErrUnavailable, conversation.TurnFailed},
		{"LeaseLost", live, live, turnEnd{}, conversation.ErrLeaseLost, conversation.TurnAbandoned},
		{"Shutdown", shutdown, live, turnEnd{}, context.Canceled, conversation.TurnAbandoned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := turnOutcome(tc.ctx, tc.end, tc.err, tc.svc.Err() != nil); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
