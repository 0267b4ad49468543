package conversation

import (
	"context"
	"errors"
	"strings"
)

// What a failure message says (README, "Failures and Retry"): what failed — the
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

// explain classifies err: the core's own markers first (a step's source, a tool, the
// store), then Config.Classify.
func (s *Service) explain(err error) Failure {
	var te *ToolError
	var tf *TaskFailure
	var sf *stepFailure
	switch {
	case errors.As(err, &te):
		return Failure{Cause: CauseTool, Tool: te.Tool}
	case errors.As(err, &tf) && len(tf.Tools) > 0:
		return Failure{Cause: CauseTool, Tool: tf.Tools[0]}
	case errors.Is(err, ErrUnavailable):
		return Failure{Cause: CauseStore}
	}
	if s.cfg.Classify != nil {
		if f := s.cfg.Classify(err); f.Cause != CauseUnknown {
			return f
		}
	}
	if errors.As(err, &sf) {
		return Failure{Cause: Cause(sf.source)}
	}
	return Failure{}
}

// failureMessage is a failed step's message in lang: what failed (explain), the
// error's own words for people when it has them, and what the Retry button does
// (hint: "retry.step" or "retry.answer"; "" for none). A failure whose cause is
// unknown says so as ErrorReply does, without its "try again" when there is Retry.
// Configured secrets are scrubbed from it.
func (s *Service) failureMessage(lang string, err error, hint string) string {
	f := s.explain(err)
	var parts []string
	switch {
	case f.Cause == CauseTool && f.Tool != "":
		parts = append(parts, tr(lang, "failed.tool", f.Tool))
	case f.Cause != CauseUnknown:
		text := tr(lang, "failed."+string(f.Cause))
		if f.Detail != "" {
			text = strings.TrimSuffix(text, ".") + " (" + f.Detail + ")."
		}
		parts = append(parts, text)
	}
	var u interface{ UserMessage() string }
	switch {
	case errors.As(err, &u) && strings.TrimSpace(u.UserMessage()) != "":
		parts = append(parts, strings.TrimSpace(u.UserMessage()))
	case len(parts) > 0:
	case errors.Is(err, context.DeadlineExceeded):
		parts = append(parts, tr(lang, "failed.timeout"))
	default:
		parts = append(parts, tr(lang, "failed.unknown"))
	}
	if hint != "" {
		parts = append(parts, tr(lang, hint))
	}
	return s.redact(strings.Join(parts, " "))
}
