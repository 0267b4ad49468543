package conversation

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// Sentinel errors returned by Store implementations; test with errors.Is.
var (
	// ErrNotFound means the conversation (or input) does not exist.
	ErrNotFound = errors.New("conversation: not found")
	// ErrConflict means an optimistic version check failed: the conversation changed
	// since it was loaded (or already exists when a create was asked for).
	ErrConflict = errors.New("conversation: version conflict")
	// ErrLeaseLost means the caller's lease on a thread is no longer its own: it
	// expired and another worker took the thread (Store.Acquire). The caller must
	// stop working on the thread without writing for it.
	ErrLeaseLost = errors.New("conversation: thread lease lost")
	// ErrUnavailable marks a store error that may go away when retried: a dropped or
	// refused connection, a restarting server, too many clients, a busy SQLite file.
	// Stores wrap such errors so that errors.Is(err, ErrUnavailable) holds; the
	// Service retries them with backoff.
	ErrUnavailable = errors.New("conversation: store unavailable")
)

// Key identifies a conversation: one Slack thread, named by the workspace (team_id), the
// channel and the thread's parent message timestamp (thread_ts, e.g. "1700000000.000100").
// A top-level message that starts a conversation is its own thread_ts.
type Key struct {
	TeamID    string `json:"team_id"`
	ChannelID string `json:"channel_id"`
	ThreadTS  string `json:"thread_ts"`
}

// String renders the key as "team/channel/thread_ts", for logs.
func (k Key) String() string { return k.TeamID + "/" + k.ChannelID + "/" + k.ThreadTS }

// Valid reports whether every part of the key is set.
func (k Key) Valid() bool { return k.TeamID != "" && k.ChannelID != "" && k.ThreadTS != "" }

// Role is the author of a message, named as in OpenAI's chat completion messages.
type Role string

// The roles a stored message can have. Tool calls and their results stay inside a turn
// and are not stored as messages; a turn's record of them is in the assistant
// message's Meta.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleContext marks a human message that was in the Slack thread before the bot
	// joined it (read with conversations.replies); it is context, not a request.
	RoleContext Role = "context"
)

// Message is one stored message of a conversation. Messages are append-only and
// numbered by Seq, 1, 2, 3, … within their conversation.
type Message struct {
	// Seq is the message's position in its conversation, assigned by Store.Save.
	Seq int64
	// Role is who wrote it.
	Role Role
	// UserID is the Slack user id (U…) of a user or context message; empty for the bot.
	UserID string
	// Text is the message text: Slack mrkdwn for the bot's replies, as typed for users.
	Text string
	// SlackTS is the Slack message timestamp (ts), when the message was posted to Slack.
	SlackTS string
	// PromptTokens and CompletionTokens are the model usage (OpenAI's usage fields,
	// summed over every call) of the turn that produced an assistant message.
	PromptTokens     int
	CompletionTokens int
	// Meta is optional JSON about the message (for example the tool calls of its turn).
	Meta json.RawMessage
	// CreatedAt is set by the store when the message is saved.
	CreatedAt time.Time
}

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
	// Workflow is the thread's artifact workflow, when one was started (Mode is
	// ModeWorkflow while it runs).
	Workflow *workflow.State `json:"workflow,omitempty"`
	// ToolApproval is the tool call waiting for a person's confirmation, when an
	// assistant turn stopped for one (conversation/assistant/approval.go). It holds the
	// executor's transcript of that turn, bounded by MAX_STEPS tool results, and is
	// cleared by the decision or by the thread's next message.
	ToolApproval *ToolApproval `json:"tool_approval,omitempty"`
	// Assistant is set in an assistant thread (conversation/assistant/view.go): the
	// channel the person views, and whether the greeting and title were set.
	Assistant *AssistantView `json:"assistant,omitempty"`
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
	// Lease, when held, fences the write: Save fails with ErrLeaseLost unless the
	// lease still holds Key (see Store.Acquire).
	Lease Lease
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
}

// Saved reports what Store.Save wrote.
type Saved struct {
	ConversationID int64
	Version        int64
	// FirstSeq is the Seq given to Turn.Append[0] (LastSeq+1 when nothing was appended).
	FirstSeq int64
}

// ErrClosed is returned by Service.Submit after Shutdown has begun.
var ErrClosed = errors.New("conversation: service is shutting down")

// Log attribute keys, shared so that logs can be filtered by them.
const (
	LogKeyThread = "thread"
	LogKeyInput  = "input_id"
	LogKeyEvent  = "event_id"
)

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
}
