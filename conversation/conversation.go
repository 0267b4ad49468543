package conversation

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// State is the small control state of a conversation, stored as one JSON document in the
// conversation row and rewritten on every turn. It must stay small: the transcript lives
// in messages, never here (docs/architecture.md, "Persistence").
type State struct {
	// Mode is what the thread is doing: ModeAssistant for free conversation.
	Mode string `json:"mode"`
	// StartedBy is the Slack user id of the person who started the conversation.
	StartedBy string `json:"started_by,omitempty"`
	// Summary condenses the messages up to SummaryThroughSeq, when the history has been
	// summarized to bound the prompt.
	Summary           string `json:"summary,omitempty"`
	SummaryThroughSeq int64  `json:"summary_through_seq,omitempty"`
	// Turns counts finished turns.
	Turns int `json:"turns"`
	// PromptTokens and CompletionTokens total the model usage of all turns.
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	// Entities is the session context: items recently returned by tools, the latest
	// turn's first (in the order they came), at most MaxEntities.
	Entities []Entity `json:"entities,omitempty"`
	// Focus is the item the conversation is about now, with its attributes as tools
	// reported them, updated after each answer by focus.Next (conversation/focus);
	// nil (absent, as in checkpoints written before it existed) when there is none.
	Focus *Entity `json:"focus,omitempty"`
	// Workflow is the thread's artifact workflow, when one was started (Mode is
	// ModeWorkflow while it runs).
	Workflow *workflow.State `json:"workflow,omitempty"`
	// ToolApproval is the tool call waiting for a person's confirmation, when an
	// assistant turn stopped for one (conversation/assistant/approval.go). It holds the
	// executor's transcript of that turn, bounded by MAX_STEPS tool results, and is
	// cleared by the decision or by the thread's next message.
	ToolApproval *ToolApproval `json:"tool_approval,omitempty"`
	// WriteApproval is the tool call a workflow writer waits on, when the write of
	// an artifact people review stopped for a person's confirmation
	// (conversation/workflowrun/ask.go). Unlike ToolApproval, a new message does not
	// void it: the workflow waits for the decision.
	WriteApproval *WriteApproval `json:"write_approval,omitempty"`
	// Assistant is set in an assistant thread (conversation/assistant/view.go): the
	// channel the person views, and whether the greeting and title were set.
	Assistant *AssistantView `json:"assistant,omitempty"`
	// Session is the thread's agent session (agentview.go), once one was set.
	Session *Session `json:"session,omitempty"`
	// Retry is the click or command whose workflow step failed and was rolled back,
	// which the failure message's Retry button runs again; the thread's next
	// workflow turn clears it.
	Retry *Input `json:"retry,omitempty"`
}

// MaxEntities bounds the session context kept in a conversation's state.
const MaxEntities = 20

// The conversation modes.
const (
	// ModeAssistant is free conversation with the assistant pipeline.
	ModeAssistant = "assistant"
	// ModeWorkflow is a running artifact workflow: replies in the thread choose and
	// edit artifacts.
	ModeWorkflow = "workflow"
)

// Conversation is the control row of a conversation.
type Conversation struct {
	ID  int64
	Key Key
	// Version is the optimistic-concurrency version: 1 after creation, +1 per Save.
	Version int64
	// LastSeq is the Seq of the newest message (0 when there is none).
	LastSeq   int64
	State     State
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Checkpoint is what a turn loads: the control row and the newest messages, oldest
// first. Messages holds at most the number asked of Store.Load, so loading costs the
// same however long the conversation is.
type Checkpoint struct {
	Conversation Conversation
	Messages     []Message
}

// Turn is one atomic write of a conversation (Store.Save).
type Turn struct {
	Key Key
	// Version is the version the turn was computed from; 0 creates the conversation.
	Version int64
	// State replaces the conversation's control state.
	State State
	// Append are the new messages, in order; their Seq is assigned by the store.
	Append []Message
	// InputID, when set, is the input this turn answers; it is marked done in the
	// same transaction, so an input is never answered twice nor lost.
	InputID string
	// Merged are the inputs merged into InputID's turn (Input.Burst): each is marked
	// done with it, and Save fails with ErrConflict unless each is pending.
	Merged []string
	// Lease, when held, fences the write: Save fails with ErrLeaseLost unless the
	// lease still holds Key (see Store.Acquire).
	Lease Lease
	// Release, with Lease, frees the lease in the same transaction when the save
	// leaves the thread no pending input, as Store.Release does (an input enqueued
	// concurrently is either seen, keeping the lease, or finds it free): a turn's
	// last save, so that its worker needs no Store.Next to free the lease
	// (docs/architecture.md, "Durable turns"). Saved.Released reports whether it did.
	Release bool
	// Enqueue are inputs persisted as pending in the same transaction (deduplicated
	// by ID, as Store.Enqueue does): follow-up work of the turn, such as the next
	// part of a pipeline (KindPipeline), that must exist exactly when the state that
	// asks for it was saved.
	Enqueue []Input
	// Usage are written to the usage ledger with the turn (UsageStore), one row
	// each: one per model the turn called.
	Usage []UsageRecord
	// Events are webhook events written to the outbox in the same transaction
	// (conversation/events.go), numbered with the next Event.Seq in order.
	Events []Event
	// Rewrite changes the text of stored messages, found by their Slack ts, in the
	// same transaction: a person's edited or deleted message (docs/architecture.md,
	// "Edits and deletions"), an answer replaced in place. Their meta is cleared.
	Rewrite []MessageRewrite
}

// MessageRewrite is a new text for the stored messages of a conversation whose
// SlackTS is SlackTS (Turn.Rewrite).
type MessageRewrite struct {
	SlackTS string
	Text    string
}

// Saved reports what Store.Save wrote.
type Saved struct {
	ConversationID int64
	Version        int64
	// FirstSeq is the Seq given to Turn.Append[0] (LastSeq+1 when nothing was appended).
	FirstSeq int64
	// Released reports that the save freed its lease (Turn.Release).
	Released bool
}

// ToolApproval is a tool call waiting for a person's confirmation (State.ToolApproval).
type ToolApproval struct {
	// ID names this confirmation in its card's buttons (Action.Arg): the id of the
	// input whose turn asked and a digest of the call (approvalID), so that a click
	// on a card of an earlier run of that input, which may have asked for another
	// call, is out of date. A click that carries another id is out of date.
	ID string `json:"id"`
	// UserID is the person who asked, the only one who may decide.
	UserID string `json:"user_id"`
	// CardTS is the card's message ("" when it could not be posted).
	CardTS string `json:"card_ts,omitempty"`
	// Request is the person's request, the resumed turn's Prompt.Text.
	Request string `json:"request"`
	// Tool is the executor's pending call and transcript.
	Tool PendingTool `json:"tool"`
	// Begun is set, and saved, before an approved call runs: a re-run of the click
	// (the turn was cut after the call began) does not run it again.
	Begun bool `json:"begun,omitempty"`
	// PolicyChannel is the channel whose strategy and tool policy the paused turn ran
	// under (Prompt.PolicyChannel): the resumed turn keeps it, whatever the person
	// views at the click. "" in checkpoints written before it existed.
	PolicyChannel string `json:"policy_channel,omitempty"`
}

// WriteApprovalPrefix starts the ID of a WriteApproval, so that a click on its card
// goes to the thread's workflow rather than to the assistant (IsWriteApproval).
const WriteApprovalPrefix = "write:"

// IsWriteApproval reports whether id, a confirmation card's Action.Arg, names a
// workflow write's confirmation (WriteApproval) rather than an assistant turn's.
func IsWriteApproval(id string) bool { return strings.HasPrefix(id, WriteApprovalPrefix) }

// ApprovalID names the confirmation of call p asked by the input inputID, for
// ToolApproval.ID: the input's id and 48 bits of SHA-256 over the call's id, name
// and arguments, after prefix ("" for an assistant turn, WriteApprovalPrefix for a
// workflow write).
func ApprovalID(prefix, inputID string, p PendingTool) string {
	h := sha256.New()
	for _, s := range []string{p.CallID, p.Name, p.Arguments} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return prefix + inputID + "#" + hex.EncodeToString(h.Sum(nil)[:6])
}

// WriteApproval is a workflow write of an artifact people review that waits for a
// person's confirmation of one of its tool calls (State.WriteApproval;
// docs/workflows.md, "Tools and untrusted content"). The embedded ToolApproval is the
// call, its card and who may decide (the person whose action started the write);
// Tool.Transcript is the writer's (agents.CommitLoop) to resume from. The rest is
// what the write goes on with once the person decides.
type WriteApproval struct {
	ToolApproval
	// Artifact is the id of the artifact being written.
	Artifact string `json:"artifact"`
	// Instructions and Why are the write's guidance and the reason its revision
	// records.
	Instructions string `json:"instructions,omitempty"`
	Why          string `json:"why,omitempty"`
	// Superseded and Label say why the artifact's earlier message is replaced when
	// its text is shown (an option chosen, with its label).
	Superseded string `json:"superseded,omitempty"`
	Label      string `json:"label,omitempty"`
	// Inputs maps the artifact being written and each artifact it depends on to its
	// workflow.ArtifactState.Rev when the write stopped: a change of any of them (a
	// restart, an edit; a change further up touches them too) makes the confirmation
	// out of date, and it is dropped. Nil in a checkpoint written before it was kept: then only the artifact's
	// Asking says whether it is current.
	Inputs map[string]int `json:"inputs,omitempty"`
}
