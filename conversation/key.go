package conversation

import (
	"encoding/json"
	"errors"
	"time"
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

// UndecodableError is a Store's error for an input it began (Begin, Next,
// AcquireBegin) whose stored payload does not decode: a corrupt row, or one written
// by a newer version. The input is begun (its Attempts counted) and can never run;
// its holder finishes it as failed (Store.Finish) and goes on with the thread's next
// input. Input is the input without its payload: ID, Key, Kind, Status, Attempts,
// Seq and CreatedAt. Err, the decoder's error, quotes no payload.
type UndecodableError struct {
	Input Input
	Err   error
}

func (e *UndecodableError) Error() string {
	return "decode input " + e.Input.ID + " (kind " + string(e.Input.Kind) + "): " + e.Err.Error()
}

// Unwrap returns Err.
func (e *UndecodableError) Unwrap() error { return e.Err }

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

// ErrClosed is returned by Service.Submit after Shutdown has begun.
var ErrClosed = errors.New("conversation: service is shutting down")

// Log attribute keys, shared so that logs can be filtered by them.
const (
	LogKeyThread = "thread"
	LogKeyInput  = "input_id"
	LogKeyEvent  = "event_id"
)
