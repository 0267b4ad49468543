package conversation

import (
	"context"
	"errors"
)

// ErrorReply returns the short text to show in Slack for a failed turn: the error's
// own UserMessage() when it has one, otherwise a generic apology; the details stay in
// the log.
func ErrorReply(err error) string {
	var u interface{ UserMessage() string }
	switch {
	case errors.As(err, &u):
		return u.UserMessage()
	case errors.Is(err, context.DeadlineExceeded):
		return "Sorry, that took too long and I stopped. Please try again, perhaps with a narrower question."
	default:
		return "Sorry, something went wrong while I was answering. Please try again in a moment."
	}
}
