package sqlstore

import (
	"context"
	"errors"

	"github.com/threadwright/threadwright/conversation"
)

// Unavailable returns err marked as an error that may go away when retried, so that
// errors.Is(err, conversation.ErrUnavailable) holds, when transient (a backend's
// classification of its driver's errors) says so. The mark keeps err's message and
// err in the chain (errors.Is and errors.As see through it). It returns err itself
// when err is nil, is marked already, is not transient, or comes from the context (a
// cancellation or a deadline is the caller's, not the store's).
func Unavailable(err error, transient func(error) bool) error {
	if err == nil || errors.Is(err, conversation.ErrUnavailable) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || !transient(err) {
		return err
	}
	return &unavailableError{err: err}
}

// unavailableError marks err as conversation.ErrUnavailable.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return e.err.Error() }

func (e *unavailableError) Unwrap() []error { return []error{e.err, conversation.ErrUnavailable} }
