package conversation

import (
	"context"
	"errors"
)

// ActionStop stops the thread's running turn (the Stop button of a progress message).
// Action.Arg is the id of the input whose turn the button was drawn for, or a
// pipeline run's "run:<id>".
const ActionStop ActionName = "stop"

// Stopped is the cause of a turn cancelled by a person: by the Stop button or by a new
// message in the thread. It is the context.Cause of the turn's context.
type Stopped struct {
	// By is the Slack user who stopped the turn.
	By string
	// NewMessage is true when a newer message in the thread stopped it.
	NewMessage bool
}

func (s Stopped) Error() string {
	if s.NewMessage {
		return "conversation: stopped by a newer message"
	}
	return "conversation: stopped by " + s.By
}

// stoppedBy returns the Stopped cause of ctx, if a person stopped it.
func StoppedBy(ctx context.Context) (Stopped, bool) {
	var s Stopped
	ok := errors.As(context.Cause(ctx), &s)
	return s, ok
}
