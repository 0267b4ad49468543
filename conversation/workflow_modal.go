package conversation

import (
	"context"
)

// The inputs a workflow still lacks once it started (README.md, "Workflows"): the
// start text and the thread's earlier messages fill what they can; for the rest the
// thread gets a message that asks for the first one (a reply there fills it) with a
// "Fill in the details" button, which opens a modal with one input per missing
// input. A slash command's trigger_id opens that modal at once (channelCommand). The
// modal's submission (ActionInputs) stores the values and the run goes on.

// ActionInputs is the submission of the modal that asks for a workflow's missing
// inputs (Modal.Fields); the values are ActionInput.Values.
const ActionInputs ActionName = "inputs"

// Field is one input of a modal with several (Modal.Fields): a workflow input.
type Field struct {
	// ID is the workflow input's id (workflow.Input.ID); Label what the input shows.
	ID    string
	Label string
	// Required fields must not be empty; Number fields hold a number ("1500", "2.5").
	Required bool
	Number   bool
}

// ModalOpener is a Messenger that opens a modal (Slack's views.open) for the
// trigger_id of a slash command or a click, which Slack accepts for 3 seconds. The
// modal's submission carries a (signed, as the Messenger's buttons are).
type ModalOpener interface {
	OpenModal(ctx context.Context, triggerID string, a Action, m Modal) error
}
