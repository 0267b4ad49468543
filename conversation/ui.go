package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Card is a structured message the core asks the Messenger to post: a small,
// Slack-neutral model of Block Kit (docs/architecture.md, "Workflow machine"). The bot renders it
// as Block Kit, keeping Slack's limits (text split over several section blocks, at most
// 50 blocks, button labels cut to 75 characters).
type Card struct {
	// Text is the message's plain-text fallback, shown in notifications.
	Text   string
	Blocks []Block
}

// BlockKind names a kind of Block.
type BlockKind string

// The block kinds.
const (
	BlockHeader  BlockKind = "header"  // Text as a heading (plain text)
	BlockSection BlockKind = "section" // Text as mrkdwn, any length (split as needed)
	BlockContext BlockKind = "context" // Text as small mrkdwn
	BlockDivider BlockKind = "divider"
	BlockActions BlockKind = "actions" // Buttons, then Menu as an overflow menu
)

// Block is one block of a Card.
type Block struct {
	Kind    BlockKind
	Text    string
	Buttons []Button
	// Menu is an overflow menu ("…") after the buttons; its items have no Style.
	Menu []Button
}

// Button is a button (or overflow-menu item) and what clicking it does.
type Button struct {
	Label string
	// Style is "", "primary" or "danger".
	Style  string
	Action Action
	// Confirm, when set, asks before acting.
	Confirm *Confirm
	// Modal, when set, opens a modal with a text box first; its submission carries
	// Action with the text entered (ActionInput.Text).
	Modal *Modal
}

// Confirm is a confirmation dialog.
type Confirm struct {
	Title string
	Text  string
	Yes   string
	No    string
}

// Modal is a modal with one text input (views.open).
type Modal struct {
	Title       string
	Label       string
	Placeholder string
	Submit      string
	Initial     string
	// Fields, when set, replace the one text input: one input per field, whose
	// values the submission carries (ActionInput.Values); Lang is the language of
	// their validation messages (FieldError).
	Fields []Field
	Lang   string
}

// ActionName names what a click does.
type ActionName string

// The actions of workflow messages.
const (
	ActionPick            ActionName = "pick"             // Arg: the option's label
	ActionRegenerate      ActionName = "regenerate"       // new options for the artifact
	ActionApprove         ActionName = "approve"          //
	ActionRequestChanges  ActionName = "request_changes"  // Text: what to change (modal)
	ActionKeep            ActionName = "keep"             // keep a stale artifact as it is
	ActionRegenerateStale ActionName = "regenerate_stale" // Text: guidance (modal)
	ActionRestart         ActionName = "restart"          // back to options (or rewrite)
	ActionEdit            ActionName = "edit"             // Text: instructions (modal)
	ActionKeepAll         ActionName = "keep_all"         // Arg: the stale list's changed artifact
	ActionRegenerateAll   ActionName = "regenerate_all"   // Arg: as ActionKeepAll; Text: guidance (modal)
	// ActionCommand runs a command in the thread named by Key; Arg is the command
	// line ("restart budget"). It answers a menu asking which workflow a channel
	// command meant.
	ActionCommand ActionName = "command"
	// ActionRetry runs again the workflow step that failed and was rolled back;
	// Arg is the id of the input whose step failed (State.Retry).
	ActionRetry ActionName = "retry"
)

// The actions of a tool confirmation card (conversation/assistant/approval.go); Arg is the
// ToolApproval's ID.
const (
	ActionApproveTool ActionName = "tool_approve"
	ActionDenyTool    ActionName = "tool_deny"
)

// Action is what a button carries: what to do, to which artifact of which
// conversation, and the artifact revision the button was drawn for. A click whose Rev
// is not the artifact's current one is out of date.
type Action struct {
	Name     ActionName `json:"n"`
	Channel  string     `json:"c"`
	ThreadTS string     `json:"t"`
	Artifact string     `json:"a,omitempty"`
	Rev      int        `json:"r,omitempty"`
	Arg      string     `json:"x,omitempty"`
	// Sig is the signature of the other fields, which the Slack adapter adds to the
	// buttons it renders and checks on the clicks it receives (docs/workflows.md, "Buttons are
	// signed"); the core neither sets nor reads it.
	Sig string `json:"s,omitempty"`
}

// MaxActionValue is the most bytes an encoded Action may take: a Block Kit button's
// value holds at most 2,000 characters (and a modal's private_metadata 3,000).
const MaxActionValue = 2000

// Encode returns a as a compact string for a button's value or a modal's
// private_metadata. Errors: the encoding exceeds MaxActionValue.
func (a Action) Encode() (string, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("encode action: %w", err)
	}
	if len(b) > MaxActionValue {
		return "", fmt.Errorf("encode action %s: %d bytes, more than %d", a.Name, len(b), MaxActionValue)
	}
	return string(b), nil
}

// DecodeAction parses an Action made by Encode. Errors: not an encoded Action.
func DecodeAction(s string) (Action, error) {
	var a Action
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return a, fmt.Errorf("decode action: %w", err)
	}
	if a.Name == "" || a.Channel == "" || a.ThreadTS == "" {
		return a, errors.New("decode action: name, channel or thread missing")
	}
	return a, nil
}

// File is a file to upload to a thread (files.getUploadURLExternal, then
// files.completeUploadExternal).
type File struct {
	Name    string // file name, e.g. "product-brief.md"
	Title   string
	Content []byte
	// Comment is posted with the file (initial_comment).
	Comment string
}

// ActionRetryCommand runs again a channel command that failed for good. Channel is
// the channel where it was typed; ThreadTS carries the failed command input's id (a
// channel command has no thread; the ephemeral it is on has none either); Arg is the
// command line ("start blog").
const ActionRetryCommand ActionName = "retry_command"

// ActionFeedback is the action of an answer's feedback buttons: Arg is the Rating.
const ActionFeedback ActionName = "feedback"

// ActionFullText shows an artifact's whole text to the person who clicked, ephemerally
// in the thread: the "Show full text" button of a card that shortens it.
const ActionFullText ActionName = "full_text"

// ActionStop stops the thread's running turn (the Stop button of a progress message).
// Action.Arg is the id of the input whose turn the button was drawn for, or a
// pipeline run's "run:<id>".
const ActionStop ActionName = "stop"

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

// The actions of the card that asks what a typed reply meant; Arg is the reply.
const (
	ActionReplyChange   ActionName = "reply_change"   // the reply is a change request
	ActionReplyQuestion ActionName = "reply_question" // the reply is a question
)

// RunStopPrefix starts the Arg of a pipeline's Stop button: "run:" and its id.
const RunStopPrefix = "run:"

// The buttons of a start card whose topic an earlier message gave (the run waits
// for one of them before its first artifact): keep the topic, or change it (Text:
// the new topic, from the button's modal).
const (
	ActionTopicKeep   ActionName = "topic_keep"
	ActionTopicChange ActionName = "topic_change"
)

// ActionContinue resumes a stopped pipeline (its progress message's Continue button;
// Arg is the run's id).
const ActionContinue ActionName = "continue"
