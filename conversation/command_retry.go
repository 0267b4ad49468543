package conversation

// Retry of a channel command (README, "Failures and Retry"): a /threadwright command
// typed in a channel that fails for good is answered, only to the person who typed
// it, with what failed and a Retry button. A click on it is a new command input with
// the same line, as the person who clicks (the only one who sees the ephemeral), in
// the same channel; its id is derived from the failed command's, so a second click,
// or a redelivered one, is the same input and runs nothing more.

// ActionRetryCommand runs again a channel command that failed for good. Channel is
// the channel where it was typed; ThreadTS carries the failed command input's id (a
// channel command has no thread; the ephemeral it is on has none either); Arg is the
// command line ("start blog").
const ActionRetryCommand ActionName = "retry_command"

// RetryCommandInputID is the id of the command input a click on the Retry of the
// failed channel command failedID submits: the same for every click on that button.
func RetryCommandInputID(teamID, failedID string) string {
	return InteractionInputID(teamID, "retry_command:"+failedID)
}
