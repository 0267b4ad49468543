package conversation

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// InputKind says what an Input carries.
type InputKind string

// The input kinds.
const (
	// KindUserMessage is a person's message: an app_mention, a DM or a thread reply.
	KindUserMessage InputKind = "user_message"
	// KindAction is a click on a button or menu item of the bot's messages
	// (block_actions), or the submission of a modal one opened (view_submission).
	KindAction InputKind = "action"
	// KindCommand is a command: /threadwright in a channel, a text command by
	// @mention in a thread, or a message shortcut on one of the bot's messages.
	KindCommand InputKind = "command"
	// KindPipeline continues the thread's running pipeline (its auto artifacts); the
	// engine enqueues it with the state that started or paused the pipeline, and it
	// carries nothing else.
	KindPipeline InputKind = "pipeline"
	// KindEdit is a person's edit of their message (Slack's message_changed with a
	// changed text; docs/architecture.md, "Edits and deletions"): Message is the
	// message as edited, TS the edited message's ts and Text its new text.
	KindEdit InputKind = "message_edit"
	// KindDelete is the deletion of a person's message (Slack's message_deleted):
	// Message names the deleted message (TS, ThreadTS, UserID); its Text is "".
	KindDelete InputKind = "message_delete"
)

// InputStatus is where an input is in its life.
type InputStatus string

// The input statuses.
const (
	InputPending InputStatus = "pending"
	InputDone    InputStatus = "done"
	// InputDropped marks an input that turned out not to be for the bot.
	InputDropped InputStatus = "dropped"
	// InputFailed marks an input whose turn failed; the user was told.
	InputFailed InputStatus = "failed"
)

// Input is a persisted domain input: it is written before it runs (deduplicated by ID)
// and marked done by the turn that answers it, so a redelivered Slack envelope, a second
// replica or a restart never answers it twice, and an input accepted before a crash is
// resumed after it.
type Input struct {
	// ID deduplicates: for a Slack message it is "msg:<team>:<channel>:<ts>", the same
	// for the app_mention and the message event of one message and for redeliveries.
	ID string `json:"id"`
	// EventID is Slack's event_id of the envelope that brought the input.
	EventID string    `json:"event_id,omitempty"`
	Key     Key       `json:"key"`
	Kind    InputKind `json:"kind"`
	// Message is set for KindUserMessage.
	Message *UserMessage `json:"message,omitempty"`
	// Action is set for KindAction.
	Action *ActionInput `json:"action,omitempty"`
	// Command is set for KindCommand.
	Command *CommandInput `json:"command,omitempty"`
	Status  InputStatus   `json:"status"`
	// Attempts counts how many times a turn started on this input.
	Attempts int `json:"attempts"`
	// Seq orders the inputs of a thread: the store numbers inputs as it enqueues
	// them, increasing across all threads and replicas (0 before Enqueue).
	Seq       int64     `json:"seq"`
	CreatedAt time.Time `json:"created_at"`

	// Thread is set for KindAssistantThread.
	Thread *AssistantThreadInput `json:"assistant_thread,omitempty"`

	// Burst are the person's later messages merged into this one by the merge
	// policy (DoubleTextingMerge), oldest first: the turn answers them all at once and
	// its save marks them done (Turn.Merged). Set by the runtime when the turn
	// begins; never enqueued, but kept with a failed turn's input for its Retry
	// (State.Retry), there marked InputDone.
	Burst []Input `json:"burst,omitempty"`
}

// BurstMessages returns the person's messages in's turn answers: its Message and
// those of its Burst, in the order the person sent them (by Slack ts: two replicas may
// store them in another), none for an input without a Message.
func (in Input) BurstMessages() []UserMessage {
	if in.Message == nil {
		return nil
	}
	out := []UserMessage{*in.Message}
	for _, b := range in.Burst {
		if b.Message != nil {
			out = append(out, *b.Message)
		}
	}
	slices.SortStableFunc(out, func(a, b UserMessage) int { return CompareTS(a.TS, b.TS) })
	return out
}

// CompareTS compares two Slack timestamps ("1700000000.000100", seconds and a
// fraction) as numbers: -1, 0 or +1. A timestamp that is not a number sorts before
// those that are.
func CompareTS(a, b string) int {
	as, af, aok := splitTS(a)
	bs, bf, bok := splitTS(b)
	switch {
	case !aok || !bok:
		if aok != bok {
			if aok {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	case as != bs:
		return cmp.Compare(as, bs)
	}
	return strings.Compare(af, bf)
}

// splitTS splits a Slack timestamp into its seconds and its fraction, right-padded
// with zeros to 9 digits so that fractions compare as strings.
func splitTS(ts string) (sec int64, frac string, ok bool) {
	whole, frac, _ := strings.Cut(ts, ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || len(frac) > 9 || strings.Trim(frac, "0123456789") != "" {
		return 0, "", false
	}
	return sec, frac + strings.Repeat("0", 9-len(frac)), true
}

// BurstIDs returns the ids of in's Burst still pending (Turn.Merged): not those a
// failed turn answered already, whose Retry answers the burst again (InputDone).
func (in Input) BurstIDs() []string {
	var ids []string
	for _, b := range in.Burst {
		if b.Status != InputDone {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// DoubleTexting says what a person's message does when it arrives while a turn of its
// thread runs, or waits to (docs/architecture.md, "Double texting").
type DoubleTexting string

// The double-texting policies.
const (
	// DoubleTextingInterrupt: the newer message stops the running turn, which says
	// so, and is answered next.
	DoubleTextingInterrupt DoubleTexting = "interrupt"
	// DoubleTextingQueue: each message is answered in turn, in order.
	DoubleTextingQueue DoubleTexting = "queue"
	// DoubleTextingMerge: a message waits a short window for the person's next one;
	// the burst is answered as one input, once the window passes without another.
	// Messages that arrive while the burst's turn runs wait for it, as with queue.
	DoubleTextingMerge DoubleTexting = "merge"
)

// ParseDoubleTexting returns the policy s names. Errors: s names none.
func ParseDoubleTexting(s string) (DoubleTexting, error) {
	switch p := DoubleTexting(s); p {
	case DoubleTextingInterrupt, DoubleTextingQueue, DoubleTextingMerge:
		return p, nil
	}
	return "", fmt.Errorf("unknown double-texting policy %q: expected interrupt, queue or merge", s)
}

// UserMessage is a person's message addressed to the bot.
type UserMessage struct {
	// UserID is the author's Slack user id.
	UserID string `json:"user_id"`
	// Text is the message text with the bot's own <@U…> mention removed.
	Text string `json:"text"`
	// TS is the message's Slack ts; ThreadTS is the thread it belongs to (equal to TS
	// for a top-level message).
	TS       string `json:"ts"`
	ThreadTS string `json:"thread_ts"`
	// Mentioned is true when the message @mentions the bot: an app_mention event, or a
	// file_share message that mentions it (Slack may send that one alone).
	Mentioned bool `json:"mentioned,omitempty"`
	// Direct is true in a direct message with the bot (channel_type "im").
	Direct bool `json:"direct,omitempty"`
	// Files are the files shared in the message, as its event carried them (an
	// app_mention's files array, a file_share message's; docs/architecture.md,
	// "Files").
	Files []FileRef `json:"files,omitempty"`
	// FileShare is true for a message with files its event did not carry (a
	// file_share message, or an app_mention marked upload, with no files array): the FileReader reads them back (conversations.replies).
	FileShare bool `json:"file_share,omitempty"`
}

// ActionInput is a click or a modal submission.
type ActionInput struct {
	Action Action `json:"action"`
	UserID string `json:"user_id"`
	// Text is what was typed in the modal, for a submission.
	Text string `json:"text,omitempty"`
	// MessageTS is the ts of the message whose button was clicked ("" for a modal).
	MessageTS string `json:"message_ts,omitempty"`
	// Values are the fields of a modal with several (Modal.Fields): field id → the
	// value typed, trimmed.
	Values map[string]string `json:"values,omitempty"`
}

// CommandSource says through which door a command came (docs/architecture.md, "Commands").
type CommandSource string

// The command sources.
const (
	SourceSlash    CommandSource = "slash"    // /threadwright in a channel
	SourceMention  CommandSource = "mention"  // @threadwright restart budget, in a thread
	SourceShortcut CommandSource = "shortcut" // a message shortcut or overflow item
)

// CommandInput is a command addressed to the bot.
type CommandInput struct {
	Source CommandSource `json:"source"`
	UserID string        `json:"user_id"`
	// Line is the command line after the command word: "restart budget".
	Line string `json:"line"`
	// MessageTS is the message a shortcut was used on.
	MessageTS string `json:"message_ts,omitempty"`
	// Origin is the channel a /threadwright command was typed in, when it was
	// forwarded to a thread a link named: the command acts on a thread of another
	// channel only when the user started its workflow (docs/workflows.md, "Commands").
	Origin string `json:"origin,omitempty"`
	// TriggerID is the slash command's trigger_id: for about 3 seconds it can open a
	// modal (views.open), as a start that lacks a required input does.
	TriggerID string `json:"trigger_id,omitempty"`
	// Inputs are values of the workflow's inputs (id → value) given with a start
	// command by the HTTP API (POST /v1/runs); they override what the line fills.
	Inputs map[string]string `json:"inputs,omitempty"`
}

// MessageInputID returns the deduplication id of a Slack message (see Input.ID).
func MessageInputID(teamID, channelID, ts string) string {
	return fmt.Sprintf("msg:%s:%s:%s", teamID, channelID, ts)
}

// EditInputID returns the deduplication id of an edit (KindEdit) of the message ts:
// editedTS is the edit's own ts (message.edited.ts), so that every edit is kept and
// a redelivery of one is a duplicate.
func EditInputID(teamID, channelID, ts, editedTS string) string {
	return fmt.Sprintf("edit:%s:%s:%s:%s", teamID, channelID, ts, editedTS)
}

// DeleteInputID returns the deduplication id of the deletion (KindDelete) of the
// message ts.
func DeleteInputID(teamID, channelID, ts string) string {
	return fmt.Sprintf("delete:%s:%s:%s", teamID, channelID, ts)
}

// InteractionInputID returns the deduplication id of an interaction (a click, a modal
// submission, a slash command, a shortcut): Slack's trigger_id, unique per
// interaction and the same in a redelivered envelope.
func InteractionInputID(teamID, triggerID string) string {
	return fmt.Sprintf("int:%s:%s", teamID, triggerID)
}

// User returns the Slack user id of the person behind in: the author of a message,
// the person who clicked or ran a command; "" for a pipeline's input.
func (in Input) User() string {
	switch {
	case in.Message != nil:
		return in.Message.UserID
	case in.Action != nil:
		return in.Action.UserID
	case in.Command != nil:
		return in.Command.UserID
	case in.Thread != nil:
		return in.Thread.UserID
	}
	return ""
}

// KindAssistantThread is an event of an assistant thread (Input.Thread):
// assistant_thread_started or assistant_thread_context_changed; or of the agent view
// (agentview.go): app_home_opened, app_context_changed, agent_session_title_changed.
const KindAssistantThread InputKind = "assistant_thread"

// The events of an assistant thread (AssistantThreadInput.Event), named as Slack names
// them.
const (
	AssistantThreadStarted        = "assistant_thread_started"
	AssistantThreadContextChanged = "assistant_thread_context_changed"
)

// AssistantThreadInput is an assistant thread's event: the thread is the input's Key
// (the app's DM and the thread's ts).
type AssistantThreadInput struct {
	// Event is AssistantThreadStarted or AssistantThreadContextChanged.
	Event string `json:"event"`
	// UserID is the person whose thread it is.
	UserID string `json:"user_id"`
	// ContextChannelID is the channel the person is viewing ("" when none: Slack
	// sends no context outside a channel); ContextTeamID its workspace.
	ContextChannelID string `json:"context_channel_id,omitempty"`
	ContextTeamID    string `json:"context_team_id,omitempty"`
	// Viewed, for AppContextChanged, are the items the person views, most relevant
	// first (at most MaxViewedItems).
	Viewed []ViewedItem `json:"viewed,omitempty"`
	// Title, for SessionTitleChanged, is the title the person gave the session.
	Title string `json:"title,omitempty"`
}

// AssistantView is the state of an assistant thread (State.Assistant).
type AssistantView struct {
	// ContextChannelID is the channel the person viewed last ("" for none).
	ContextChannelID string `json:"context_channel_id,omitempty"`
	// Viewed, in the Messages tab (MessagesTab), is what the person views
	// (app_context_changed), most relevant first.
	Viewed []ViewedItem `json:"viewed,omitempty"`
	// Greeted is set once the greeting was posted; Titled once the thread's title was
	// set from its first question.
	Greeted bool `json:"greeted,omitempty"`
	Titled  bool `json:"titled,omitempty"`
}

// RetryCommandInputID is the id of the command input a click on the Retry of the
// failed channel command failedID submits: the same for every click on that button.
func RetryCommandInputID(teamID, failedID string) string {
	return InteractionInputID(teamID, "retry_command:"+failedID)
}

// IsRetry reports whether in is a click on a Retry button (ActionRetry): of a failed
// answer, a workflow step or a pipeline artifact's items.
func (in Input) IsRetry() bool {
	return in.Kind == KindAction && in.Action != nil && in.Action.Action.Name == ActionRetry
}
