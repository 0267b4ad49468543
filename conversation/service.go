package conversation

import (
	"errors"
)

// ErrClosed is returned by Service.Submit after Shutdown has begun.
var ErrClosed = errors.New("conversation: service is shutting down")

// Log attribute keys, shared so that logs can be filtered by them.
const (
	LogKeyThread = "thread"
	LogKeyInput  = "input_id"
	LogKeyEvent  = "event_id"
)
