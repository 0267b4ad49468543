package conversation

import (
	"context"
	"errors"
)

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

// StoppedBy returns the Stopped cause of ctx, if a person stopped it.
func StoppedBy(ctx context.Context) (Stopped, bool) {
	var s Stopped
	ok := errors.As(context.Cause(ctx), &s)
	return s, ok
}
