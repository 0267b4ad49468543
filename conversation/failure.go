package conversation

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
