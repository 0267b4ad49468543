package conversation

import (
	"context"
	"errors"
)

// What a failure message says (docs/workflows.md, "Failures and Retry"): what failed — the
// model, a tool, Slack or the database — in a few words safe to show, then what Retry
// does. The details stay in the log; no secret nor stack trace reaches the thread.

// Cause names what a failed step's error came from.
type Cause string

// The causes a failure message names.
const (
	CauseUnknown Cause = ""
	CauseModel   Cause = "model" // a chat completion: HTTP error, timeout, unusable answer
	CauseTool    Cause = "tool"  // a tool the model called
	CauseSlack   Cause = "slack" // a Slack Web API call
	CauseStore   Cause = "store" // the database
)

// Failure is what an error came from: its Cause and a short Detail that is safe to
// show ("HTTP 503", "msg_too_long", "timeout"; "" when there is nothing to add). Tool
// names the tool of a CauseTool.
type Failure struct {
	Cause  Cause
	Detail string
	Tool   string
	// Message is the service's own explanation, when it gave one (the model
	// provider's error message); shown redacted, in a pipeline item's reason only.
	Message string
}

// Classifier says what err came from, or returns a Failure with CauseUnknown
// (Config.Classify). It knows the adapters' error types (go-openai's, slack-go's);
// the core knows its own (ToolError, TaskFailure, ErrUnavailable).
type Classifier func(err error) Failure

// ToolError is the error of a tool call, naming the tool. A tool's error normally
// goes back to the model as the call's result; it ends a step only when the model
// gives up because of it (TaskFailure.Tools).
type ToolError struct {
	Tool string
	Err  error
}

func (e *ToolError) Error() string { return "tool " + e.Tool + ": " + e.Err.Error() }
func (e *ToolError) Unwrap() error { return e.Err }

// StepError is an error of a step that knows what it came from (FailedAt): a call
// of the model, or a Slack Web API call.
type StepError struct {
	Cause Cause
	Err   error
}

func (e *StepError) Error() string { return e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

// FailedAt marks err as coming from cause (CauseModel, CauseSlack).
func FailedAt(cause Cause, err error) error { return &StepError{Cause: cause, Err: err} }

// Explain says what err came from: the core's own markers first (a tool, a step's
// cause, the store), then c (nil: none), then the cause a StepError names; a Failure
// with CauseUnknown when nothing says.
func (c Classifier) Explain(err error) Failure {
	var te *ToolError
	var tf *TaskFailure
	var se *StepError
	switch {
	case errors.As(err, &te):
		return Failure{Cause: CauseTool, Tool: te.Tool}
	case errors.As(err, &tf) && len(tf.Tools) > 0:
		return Failure{Cause: CauseTool, Tool: tf.Tools[0]}
	case errors.Is(err, ErrUnavailable):
		return Failure{Cause: CauseStore}
	}
	if c != nil {
		if f := c(err); f.Cause != CauseUnknown {
			return f
		}
	}
	if errors.As(err, &se) {
		return Failure{Cause: se.Cause}
	}
	return Failure{}
}

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
