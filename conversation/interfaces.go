package conversation

import (
	"context"
	"time"
)

// Store persists conversations, their messages and the inputs that drive them
// (DESIGN.md, "Persistence"). Implementations: store/sqlite (embedded default) and
// store/postgres; both pass store/storetest. Every method is safe for concurrent use.
type Store interface {
	// Load returns the conversation for key with at most recent of its newest messages,
	// oldest first (recent <= 0 loads none). Its cost does not depend on the
	// conversation's length. Errors: ErrNotFound.
	Load(ctx context.Context, key Key, recent int) (*Checkpoint, error)
	// Exists reports whether a conversation exists for key.
	Exists(ctx context.Context, key Key) (bool, error)
	// Save writes turn atomically: it appends turn.Append after the conversation's last
	// message, replaces its state, increments its version, when turn.InputID is set
	// marks that input done, and enqueues turn.Enqueue (as Enqueue, duplicates
	// skipped). turn.Version must equal the stored version (0: the
	// conversation must not exist yet). Its cost does not depend on the conversation's
	// length. Errors: ErrConflict when the version check fails, or when turn.InputID is
	// set but that input is not pending (already answered, finished or never
	// enqueued); nothing is written then.
	Save(ctx context.Context, turn Turn) (Saved, error)
	// Enqueue persists a pending input. It returns false, and changes nothing, when an
	// input with the same ID was already enqueued (whatever its status).
	Enqueue(ctx context.Context, in Input) (bool, error)
	// Claim takes the pending input id for one worker until until: it increments the
	// input's attempt count, records the claim and returns the new count with ok true.
	// It returns ok false, and changes nothing, when the input is not pending or
	// another claim on it is still live (its until is after now), so two workers (two
	// replicas, or a sweep and a queue) never run one input at once. A claim ends by
	// Save (which marks the input done), Finish, Release, or by expiring; until must
	// be set, and should outlast the longest turn (Service uses TurnTimeout + 1 min).
	// Errors: ErrNotFound.
	Claim(ctx context.Context, id string, until time.Time) (attempts int, ok bool, err error)
	// Release ends the claim on a pending input, so that Pending offers it again at
	// once (used when a turn is cancelled by a shutdown). Errors: ErrNotFound.
	Release(ctx context.Context, id string) error
	// Finish sets the status of an input that ends without a Save (dropped or failed).
	// Errors: ErrNotFound.
	Finish(ctx context.Context, id string, status InputStatus) error
	// Pending returns up to limit pending inputs created before before that are not
	// claimed (or whose claim expired), oldest first.
	Pending(ctx context.Context, before time.Time, limit int) ([]Input, error)
	// Workflows lists the conversations of a channel whose workflow is running
	// (State.Workflow.Status WorkflowRunning), started by startedBy ("" for anyone's),
	// most recently updated first, at most limit.
	Workflows(ctx context.Context, teamID, channelID, startedBy string, limit int) ([]WorkflowRef, error)
	// DeleteIdle deletes conversations (with their messages) not updated since before,
	// and inputs created before it; it returns the number of conversations deleted.
	DeleteIdle(ctx context.Context, before time.Time) (int, error)
	// Ping checks the connection to the database.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// WorkflowRef names a conversation with a running workflow.
type WorkflowRef struct {
	Key       Key
	Name      string // the workflow's name
	StartedBy string
	UpdatedAt time.Time
}

// Messenger is the way back to the chat (implemented by bot on the Slack Web API).
type Messenger interface {
	// PostReply posts text (Slack mrkdwn) as a reply in the thread of key and returns the
	// ts of the last message posted. Text longer than one Slack message allows is split
	// into several messages, never rejected.
	PostReply(ctx context.Context, key Key, text string) (string, error)
	// SetStatus shows that the bot is working on the thread (assistant.threads.setStatus,
	// or a fallback where that is unavailable); an empty status clears it.
	SetStatus(ctx context.Context, key Key, status string) error
	// ThreadHistory returns up to limit human messages of the thread that were posted
	// before the message with ts before, oldest first (conversations.replies). Messages
	// from bots are left out.
	ThreadHistory(ctx context.Context, key Key, before string, limit int) ([]Message, error)
	// PostCard posts c in the thread of key, or at the channel's top level when
	// key.ThreadTS is empty (a new thread), and returns its ts.
	PostCard(ctx context.Context, key Key, c Card) (string, error)
	// UpdateCard replaces the message ts in key's channel with c (chat.update).
	UpdateCard(ctx context.Context, key Key, ts string, c Card) error
	// PostEphemeral shows text to userID only, in the thread of key (or the channel
	// when key.ThreadTS is empty) (chat.postEphemeral).
	PostEphemeral(ctx context.Context, key Key, userID string, text string) error
	// PostEphemeralCard is PostEphemeral with a card (a menu, for example).
	PostEphemeralCard(ctx context.Context, key Key, userID string, c Card) error
	// Upload uploads f to the thread of key (files upload v2).
	Upload(ctx context.Context, key Key, f File) error
	// UserLocale returns the Slack locale of userID, such as "en-US" or "ru-RU"
	// (users.info with include_locale); "" when unknown.
	UserLocale(ctx context.Context, userID string) (string, error)
}

// StreamingMessenger is implemented by a Messenger that can stream a reply into the
// thread as it is written (Slack's chat.startStream, chat.appendStream,
// chat.stopStream). The assistant turn uses it when the Messenger has it.
type StreamingMessenger interface {
	// StartStream starts a streamed bot message in the thread of key, addressed to
	// userID (the person who asked). An error means streaming is refused here: the
	// turn posts its reply with PostReply instead.
	StartStream(ctx context.Context, key Key, userID string) (Stream, error)
}

// Stream is a message being streamed (see StreamingMessenger).
type Stream interface {
	// Append adds markdown (Markdown, not mrkdwn) to the message. An error ends the
	// streaming: the caller stops the stream and falls back.
	Append(ctx context.Context, markdown string) error
	// Stop ends the message and returns its ts (known even when Stop fails, once the
	// stream was started).
	Stop(ctx context.Context) (ts string, err error)
}

// Prompt is what the assistant pipeline is asked: the conversation so far and the new
// request.
type Prompt struct {
	Key Key
	// Summary condenses history older than Messages, if any.
	Summary string
	// History is the conversation before the request, oldest first.
	History []Message
	// UserID and Text are the request.
	UserID string
	Text   string
	// Entities are the items recently discussed (returned by tools), most recent
	// first, so that "the first one" or "that ticket" can be resolved.
	Entities []Entity
	// AnswerSink, when not nil, receives the text of the executor's model calls as it
	// streams (content only, never tool-call arguments), so the answer can be shown
	// while it is written. It is optional: an executor may ignore it (the planner
	// does). See TextSink for the protocol.
	AnswerSink TextSink
}

// TextSink receives a model's answer as it streams. Write is given each piece of
// content in order; Reset says that the text written since the last Reset is void (a
// retried model call starts again, or a completion turned out to call tools rather
// than answer), so what follows is a new text. After the executor returns, the text
// written since the last Reset is the final answer (Findings.Answer). Calls come from
// one goroutine at a time.
type TextSink interface {
	Reset()
	Write(delta string)
}

// Entity is an item a tool returned (a record, a document, a ticket), remembered in
// the conversation's session context. Tools report them in a JSON result's "entities"
// field, [{"id": "…", "title": "…", "type": "…"}], and mark items outside the
// deployment's domain in its "out_of_scope" field, with a "reason".
type Entity struct {
	ID     string `json:"id"`
	Title  string `json:"title,omitempty"`
	Type   string `json:"type,omitempty"`
	Reason string `json:"reason,omitempty"` // why it is out of scope, for OutOfScope
}

// Usage is model token usage (OpenAI's usage.prompt_tokens and completion_tokens).
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{PromptTokens: u.PromptTokens + v.PromptTokens, CompletionTokens: u.CompletionTokens + v.CompletionTokens}
}

// Verdict is a scope check's decision.
type Verdict struct {
	InScope bool
	// Reply is the polite, specific refusal to post when the request is out of scope.
	Reply string
	// Reason says why, for logs.
	Reason string
	Usage  Usage
}

// ScopeChecker decides whether a request is within what the deployment is for
// (DESIGN.md, "The assistant pipeline": configured rules first, then a small model).
type ScopeChecker interface {
	CheckScope(ctx context.Context, p Prompt) (Verdict, error)
}

// ToolCall records one tool call of a turn.
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Result is what went back to the model (an error is reported as the result).
	Result string `json:"result"`
	Failed bool   `json:"failed,omitempty"`
	// Duration is how long the tool ran.
	Duration time.Duration `json:"duration_ns"`
}

// Findings is what the executor found: its answer and how it got there.
type Findings struct {
	// Answer is the model's final answer (Markdown as the model writes it).
	Answer string
	// ToolCalls lists the tool calls made, in the order they were asked for.
	ToolCalls []ToolCall
	// Steps is the number of model calls.
	Steps int
	// Truncated is true when the answer was cut off (finish_reason "length") or the
	// step bound was hit before the model finished.
	Truncated bool
	Usage     Usage
	// Entities are the items the tools returned, in the order they came.
	Entities []Entity
	// OutOfScope are items the tools marked as outside the deployment's domain (the
	// secondary scope check): the reply becomes a rejection naming them, and they
	// leave the session context.
	OutOfScope []Entity
}

// Progress reports what the executor is doing, for the thread's status line
// (for example "Running get_current_time…").
type Progress func(status string)

// Executor answers a prompt with a tool-using loop (DESIGN.md, "Executor (ReAct)").
type Executor interface {
	Execute(ctx context.Context, p Prompt, progress Progress) (Findings, error)
}

// Synthesizer turns the executor's findings into the Slack reply (mrkdwn).
type Synthesizer interface {
	Synthesize(ctx context.Context, p Prompt, f Findings) (string, error)
}

// SummaryRequest asks for older messages of a conversation to be folded into its
// running summary.
type SummaryRequest struct {
	// Previous is the summary so far ("" for none).
	Previous string
	// Messages are the messages to fold in, oldest first.
	Messages []Message
	// Workflow names the thread's workflow, when it has one: its artifact texts,
	// selections and state are kept in the checkpoint apart from the summary, so the
	// summary need not repeat them (and should say where they are).
	Workflow string
	// Locale is the conversation's language ("" when unknown).
	Locale string
}

// Summarizer condenses older messages into a summary (the small model; DESIGN.md,
// "Models": context is bounded, older history is summarized into the checkpoint).
type Summarizer interface {
	Summarize(ctx context.Context, r SummaryRequest) (string, Usage, error)
}
