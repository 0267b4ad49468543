package conversation

import (
	"context"
	"encoding/json"
	"time"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// Store persists conversations, their messages and the inputs that drive them
// (docs/architecture.md, "Persistence" and "Durable turns"). Implementations:
// store/sqlite (embedded default) and store/postgres; both pass store/storetest. Every
// method is safe for concurrent use. Errors that may go away when retried (a dropped
// connection, a restarting server, too many clients, a busy SQLite file) satisfy
// errors.Is(err, ErrUnavailable).
type Store interface {
	// Load returns the conversation for key with at most recent of its newest messages,
	// oldest first (recent <= 0 loads none). Its cost does not depend on the
	// conversation's length. Errors: ErrNotFound.
	Load(ctx context.Context, key Key, recent int) (*Checkpoint, error)
	// Exists reports whether the bot is part of thread key: a conversation exists for
	// it, or an input for it is pending (a mention whose first turn has not been saved
	// yet), so that a follow-up without a mention is accepted.
	Exists(ctx context.Context, key Key) (bool, error)
	// Save writes turn atomically: it appends turn.Append after the conversation's last
	// message, replaces its state, increments its version, when turn.InputID is set
	// marks that input done, and enqueues turn.Enqueue (as Enqueue, duplicates
	// skipped). turn.Version must equal the stored version (0: the conversation must
	// not exist yet). When turn.Lease is set, it must still hold turn.Key (same owner
	// and fencing token). Its cost does not depend on the conversation's length.
	// Errors, with nothing written: ErrLeaseLost when the lease check fails;
	// ErrConflict when the version check fails, or when turn.InputID is set but that
	// input is not pending (already answered, finished or never enqueued).
	Save(ctx context.Context, turn Turn) (Saved, error)
	// Enqueue persists a pending input, numbered with the next Seq (the order in which
	// a thread's inputs run), and tells the holder of the thread's lease, if any
	// (LeaseState.Newest, and LeaseState.Message for a KindUserMessage). It returns
	// false, and changes nothing, when an input with the same ID was already enqueued
	// (whatever its status). Text it cannot store as it is (NUL characters, invalid
	// UTF-8) is stored repaired.
	Enqueue(ctx context.Context, in Input) (bool, error)
	// CountPending counts the pending inputs of thread key and, when userID is not
	// "", those of userID (Input.User) in key's workspace, each up to limit (a count
	// stops there, so its cost is bounded); one indexed query, for Submit's bounds
	// (README, "Limits and secrets"). A pending input counts until it is done, dropped or failed,
	// while it runs too.
	CountPending(ctx context.Context, key Key, userID string, limit int) (PendingCounts, error)
	// Enqueued reports whether an input with id was enqueued, whatever its status:
	// Submit asks before it refuses an input over a limit, since a copy Slack
	// delivered again of an input already stored is a duplicate, never refused.
	Enqueued(ctx context.Context, id string) (bool, error)

	// Acquire takes the lease of thread key for owner until ttl from now, by the
	// database's clock, unless a live lease holds it. A lease is live until ttl after
	// its last Acquire or Renew; Release frees it. Taking a thread whose lease expired
	// (its holder died or lost the database) increases the fencing token, so that the
	// previous holder's Begin, Finish, Release and Save fail with ErrLeaseLost. A live
	// lease of owner itself (an earlier Acquire whose answer was lost) is taken again,
	// with a new token. It returns ok false, changing nothing, when a live lease of
	// another owner holds the thread; prev is the owner of the lease taken over ("" when
	// the thread was free).
	Acquire(ctx context.Context, key Key, owner string, ttl time.Duration) (l Lease, prev string, ok bool, err error)
	// Begin starts the next input of l's thread, the pending input with the lowest
	// Seq: it increments the input's Attempts and returns it, or nil when the thread
	// has no pending input. Errors: ErrLeaseLost.
	Begin(ctx context.Context, l Lease) (*Input, error)
	// Release frees l when its thread has no pending input, and reports whether it
	// did; false, keeping the lease, when an input is pending (the holder goes on with
	// it). An input enqueued concurrently is either seen here or finds the lease free.
	// Errors: ErrLeaseLost.
	Release(ctx context.Context, l Lease) (bool, error)
	// Abandon frees l whatever is pending, so that another worker takes the thread at
	// once (its next Orphans finds it): a worker that shuts down hands its threads
	// over. Errors: ErrLeaseLost.
	Abandon(ctx context.Context, l Lease) error
	// Renew extends every lease of owner that no other owner has taken, expired ones
	// included, until ttl from now, and returns their states. A lease of owner missing
	// from the result was taken over.
	Renew(ctx context.Context, owner string, ttl time.Duration) ([]LeaseState, error)
	// Signal records r for the holder of thread key's lease, which reads it with Renew
	// (LeaseState.Stop), replacing the request recorded before; the zero StopRequest
	// clears it (the holder applied it). It does nothing when no lease holds the
	// thread.
	Signal(ctx context.Context, key Key, r StopRequest) error
	// Orphans returns up to limit threads that have pending inputs and no live lease
	// (their holder died, or nobody took them), the thread with the oldest pending
	// input first.
	Orphans(ctx context.Context, limit int) ([]Key, error)
	// Finish sets the status of an input that ends without a Save (dropped or failed).
	// When l is set it must still hold the input's thread. Errors: ErrNotFound,
	// ErrLeaseLost.
	Finish(ctx context.Context, l Lease, id string, status InputStatus) error

	// Workflows lists the conversations of a channel whose workflow is running
	// (State.Workflow.Status workflow.RunRunning), started by startedBy ("" for anyone's),
	// most recently updated first, at most limit.
	Workflows(ctx context.Context, teamID, channelID, startedBy string, limit int) ([]WorkflowRef, error)
	// DeleteIdle deletes conversations (with their messages) not updated since before,
	// and inputs created before it, and free leases of threads with neither; it
	// returns the number of conversations deleted.
	DeleteIdle(ctx context.Context, before time.Time) (int, error)
	// Ping checks the connection to the database.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// PendingCounts are Store.CountPending's counts of pending inputs.
type PendingCounts struct {
	// Thread counts the thread's pending inputs; User the person's, across threads.
	Thread, User int
}

// Spool keeps inputs on local disk while the Store is unavailable, so that an input
// is acknowledged only once it is stored somewhere durable (docs/architecture.md,
// "Accepted means stored"); the Service moves them into the Store, in order, when it
// answers again. store/sqlite implements it (OpenSpool). Every method is safe for
// concurrent use.
type Spool interface {
	// Put stores in durably (synced to disk before it returns), after the inputs
	// spooled before it. It returns false, changing nothing, when an input with the
	// same ID is spooled already.
	Put(ctx context.Context, in Input) (bool, error)
	// Peek returns up to limit spooled inputs, oldest first.
	Peek(ctx context.Context, limit int) ([]Input, error)
	// Remove deletes spooled input id (no error when there is none).
	Remove(ctx context.Context, id string) error
	// Len returns how many inputs are spooled.
	Len(ctx context.Context) (int, error)
	// Close releases the spool's resources.
	Close() error
}

// Lease is a worker's hold on one thread: while it holds it, only that worker runs
// the thread's inputs, one at a time, in Seq order (docs/architecture.md, "Durable
// turns"). A lease is kept alive by Store.Renew and fences writes: Store.Save,
// Store.Begin, Store.Finish and Store.Release check Owner and Token.
type Lease struct {
	Key Key
	// Owner names the holding process (one per Service, unique per start).
	Owner string
	// Token is the fencing token: it increases every time the thread changes hands
	// after a lease expired. Zero means no lease (an unfenced write).
	Token int64
}

// Held reports whether l is a lease (not the zero Lease).
func (l Lease) Held() bool { return l.Token != 0 }

// LeaseState is a lease as Store.Renew reports it, with what other workers told its
// holder since it was acquired.
type LeaseState struct {
	Lease
	// Newest is the Seq of the newest input enqueued for the thread while the lease
	// was held (0: none): inputs wait behind the running turn.
	Newest int64
	// Message and MessageBy are the Seq and author (Slack user id) of the newest
	// person's message enqueued for the thread while the lease was held (0: none): it
	// stops a running turn of an older input.
	Message   int64
	MessageBy string
	// Stop is the newest stop request (Store.Signal) made while the lease was held;
	// its Target is "" when there was none.
	Stop StopRequest
}

// StopRequest asks the worker running a thread to stop the turn of one input (a Stop
// button clicked on another replica).
type StopRequest struct {
	// Target is the input id the button was drawn for, or a pipeline run's
	// "run:<id>".
	Target string
	// By is the Slack user id of the person who asked.
	By string
}

// WorkflowRef names a conversation with a running workflow.
type WorkflowRef struct {
	Key       Key
	Name      string // the workflow's name
	StartedBy string
	UpdatedAt time.Time
}

// Messenger is the way back to the chat (implemented by bot on the Slack Web API).
// Messages a turn posts carry a Tag, so that a re-run of the turn (after a crash, a
// lost lease or a failed save) finds them with Posted and replaces them rather than
// posting a second answer (docs/architecture.md, "Exactly one answer").
type Messenger interface {
	// PostReply posts text (Slack mrkdwn) as a reply in the thread of key and returns the
	// ts of the last message posted. Text longer than one Slack message allows is split
	// into several messages, never rejected. With tag.Replace it edits those messages
	// instead (see Tag).
	PostReply(ctx context.Context, key Key, text string, tag Tag) (string, error)
	// SetStatus shows that the bot is working on the thread (assistant.threads.setStatus,
	// or a fallback where that is unavailable); an empty status clears it.
	SetStatus(ctx context.Context, key Key, status string) error
	// ThreadHistory returns up to limit human messages of the thread that were posted
	// before the message with ts before, oldest first (conversations.replies). Messages
	// from bots are left out.
	ThreadHistory(ctx context.Context, key Key, before string, limit int) ([]Message, error)
	// PostCard posts c in the thread of key, or at the channel's top level when
	// key.ThreadTS is empty (a new thread), and returns its ts. With tag.Replace it
	// edits those messages instead (see Tag).
	PostCard(ctx context.Context, key Key, c Card, tag Tag) (string, error)
	// UpdateCard replaces the message ts in key's channel with c (chat.update).
	UpdateCard(ctx context.Context, key Key, ts string, c Card) error
	// Delete deletes the bot's message ts in key's channel (chat.delete).
	Delete(ctx context.Context, key Key, ts string) error
	// PostEphemeral shows text to userID only, in the thread of key (or the channel
	// when key.ThreadTS is empty) (chat.postEphemeral).
	PostEphemeral(ctx context.Context, key Key, userID string, text string) error
	// PostEphemeralCard is PostEphemeral with a card (a menu, for example).
	PostEphemeralCard(ctx context.Context, key Key, userID string, c Card) error
	// Upload uploads f to the thread of key (files upload v2). A file share carries no
	// metadata: Posted reports it by its name. With tag.Replace set, the file was
	// shared already and nothing is uploaded.
	Upload(ctx context.Context, key Key, f File, tag Tag) error
	// UserLocale returns the Slack locale of userID, such as "en-US" or "ru-RU"
	// (users.info with include_locale); "" when unknown.
	UserLocale(ctx context.Context, userID string) (string, error)
	// Posted returns the bot's messages in the thread of key (at the channel's top
	// level, newer than after, when key.ThreadTS is empty) that are tagged with
	// inputID, and its untagged messages newer than after (a stream cut before it
	// stopped, a file share), oldest first (conversations.replies or
	// conversations.history, with include_all_metadata).
	Posted(ctx context.Context, key Key, inputID, after string) ([]Posted, error)
}

// Permalinker is implemented by a Messenger that can link to a message
// (chat.getPermalink): answers typed in a channel link to the workflow's thread.
type Permalinker interface {
	// Permalink returns the link to the message ts in key's channel.
	Permalink(ctx context.Context, key Key, ts string) (string, error)
}

// Tag ties a message to the turn that posts it, as Slack message metadata
// (event_type "threadwright_turn"; event_payload input_id, n, piece, of, answer,
// final), so that Messenger.Posted finds it again.
type Tag struct {
	// InputID is the input whose turn posts the message; "" posts it untagged.
	InputID string
	// N numbers the turn's posts, from 1, in the order it makes them.
	N int
	// Answer marks a part of the turn's reply; Final its last part: once a Final
	// post is in the thread whole, the reply is complete.
	Answer, Final bool
	// Notice marks an answer that is a notice rather than the model's answer (an
	// error reply, a stopped turn's note): it gets no feedback buttons (README,
	// "Feedback").
	Notice bool
	// Broadcast also shows the reply in the channel (chat.postMessage's
	// reply_broadcast): a direct message's answer outside the assistant view, which
	// would otherwise hide behind "1 reply" (README, "Assistant view").
	Broadcast bool
	// Replace are the messages an earlier run of the turn posted in its place (from
	// Posted): they are edited (chat.update) into the new content, more messages are
	// posted if it needs more, and those left over are deleted.
	Replace []string
}

// Posted is a message of the bot's that Messenger.Posted found.
type Posted struct {
	TS string
	// Tag is the message's tag (its InputID "" when it has none; Replace unset).
	Tag Tag
	// Piece and Of place the message among the messages of its post (a long reply is
	// split): piece Piece (from 0) of Of.
	Piece, Of int
	// Text is the message's text.
	Text string
	// File is the name of the file the message shares ("" for none).
	File string
}

// StreamingMessenger is implemented by a Messenger that can stream a reply into the
// thread as it is written (Slack's chat.startStream, chat.appendStream,
// chat.stopStream). The assistant turn uses it when the Messenger has it.
type StreamingMessenger interface {
	// StartStream starts a streamed bot message in the thread of key, addressed to
	// userID (the person who asked). An error means streaming is refused here: the
	// turn posts its reply with PostReply instead. With tag.Replace, those messages
	// (a stream cut before it stopped, an earlier run's answer) are deleted first.
	// The tag is set on the message when it stops (chat.startStream takes no
	// metadata).
	StartStream(ctx context.Context, key Key, userID string, tag Tag) (Stream, error)
}

// Stream is a message being streamed (see StreamingMessenger).
type Stream interface {
	// Append adds markdown (Markdown, not mrkdwn) to the message. An error ends the
	// streaming: the caller stops the stream and falls back.
	Append(ctx context.Context, markdown string) error
	// Stop ends the message, setting its tag with final as Tag.Final (whether the
	// streamed text completes the reply), and returns its ts (known even when Stop
	// fails, once the stream was started).
	Stop(ctx context.Context, final bool) (ts string, err error)
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
	// ContextChannelID, in an assistant thread, is the channel the person views: its
	// strategy and tool policy apply (PolicyChannel); "" elsewhere.
	ContextChannelID string
	// AnswerSink, when not nil, receives the text of the executor's model calls as it
	// streams (content only, never tool-call arguments), so the answer can be shown
	// while it is written. It is optional: an executor may ignore it (the planner
	// does). See TextSink for the protocol.
	AnswerSink TextSink
	// Tasks, when not nil, is shown the executor's thinking steps (one task per tool
	// call, or the planner's phases and plan) as they advance; it is optional.
	Tasks TaskSink
	// Resume, when set, continues a turn that stopped for a person's confirmation of
	// a tool call (Findings.Pending): History ends with the request (Text), and the
	// executor goes on from the pending call, run or denied as Resume says.
	Resume *Resume
}

// PendingTool is a tool call that waits for the confirmation of the person who asked
// (docs/architecture.md, "Assistant pipeline"): the executor stopped before running
// it and returned it as Findings.Pending.
type PendingTool struct {
	// CallID, Name and Arguments are the model's call (OpenAI's tool_calls[].id,
	// function.name and function.arguments, a JSON object).
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Reason says why it needs confirmation: ApprovalDestructive or
	// ApprovalAfterUntrusted.
	Reason string `json:"reason,omitempty"`
	// Transcript is the executor's record of the turn so far, to resume from; its
	// format is the executor's own. Its size is bounded by the executor's step bound
	// times its tool result bound.
	Transcript json.RawMessage `json:"transcript"`
}

// Why a tool call needs confirmation (PendingTool.Reason).
const (
	// ApprovalDestructive: the tool may destroy or overwrite data, or comes from a
	// server that is not trusted.
	ApprovalDestructive = "destructive"
	// ApprovalAfterUntrusted: content from outside (a fetched page, a search result)
	// entered the turn before the call, and the tool is not read-only.
	ApprovalAfterUntrusted = "after_untrusted_content"
)

// Resume is what a person decided about a PendingTool (Prompt.Resume).
type Resume struct {
	Pending PendingTool
	// Approved runs the call; otherwise its result is that the person denied it.
	Approved bool
	// Interrupted, with Approved, says that an earlier run of this decision began the
	// call and did not finish (a crash, a restart, a lost lease): the call may have
	// run, so it is not run again, and its result says so (at most once).
	Interrupted bool
	// By is the Slack user id of the person who decided.
	By string
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
	PromptTokens     int
	CompletionTokens int
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
// (docs/architecture.md, "Assistant pipeline": configured rules first, then a small model).
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
	// Denied marks a call the person who asked did not confirm: it did not run.
	Denied bool `json:"denied,omitempty"`
	// Duration is how long the tool ran.
	Duration time.Duration `json:"duration_ns"`
	// Entities and OutOfScope are what the result says for the session context and
	// the secondary scope check (README "The tool-result contract"), read from the
	// whole result before it was cut for the model. Scoped says the result labelled
	// its scope itself (an "out_of_scope" field, even an empty one), so it is not
	// classified (SCOPE_CLASSIFY_RESULTS).
	Entities   []Entity `json:"entities,omitempty"`
	OutOfScope []Entity `json:"out_of_scope,omitempty"`
	Scoped     bool     `json:"scoped,omitempty"`
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
	// Strategy names how the answer was found ("react", "planner"; "" when the
	// executor does not say), for feedback on the answer.
	Strategy string
	// Pending, when set, is a tool call that needs a person's confirmation: the
	// executor stopped before it, Answer is empty, and the turn resumes with
	// Prompt.Resume once the person decides. Executors that cannot pause never set
	// it.
	Pending *PendingTool
}

// Progress reports what the executor is doing, for the thread's status line
// (for example "Running get_current_time…").
type Progress func(status string)

// Executor answers a prompt with a tool-using loop (docs/architecture.md, "Assistant
// pipeline"). Execute may stop before a tool call that needs a person's confirmation,
// returning it as Findings.Pending; it is then called again with Prompt.Resume.
type Executor interface {
	Execute(ctx context.Context, p Prompt, progress Progress) (Findings, error)
}

// Synthesizer turns the executor's findings into the Slack reply (mrkdwn).
type Synthesizer interface {
	Synthesize(ctx context.Context, p Prompt, f Findings) (string, error)
}

// AnswerEditor is a Synthesizer whose reply can be more than the answer converted (its
// sources listed, its citation markers renumbered: README "Citations"). EditAnswer
// returns the answer as the reply shows it, in Markdown, and whether it differs from
// f.Answer: a streamed answer that the edited one extends (sources added) is completed
// with the rest, keeping its thinking steps; one it does not (markers renumbered) is
// replaced by the reply.
type AnswerEditor interface {
	EditAnswer(f Findings) (markdown string, edited bool)
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

// Summarizer condenses older messages into a summary (the small model; docs/architecture.md,
// "Models": context is bounded, older history is summarized into the checkpoint).
type Summarizer interface {
	Summarize(ctx context.Context, r SummaryRequest) (string, Usage, error)
}

// Workflows is the set of workflows a Service offers (workflow.Set implements it).
type Workflows interface {
	// Get returns the workflow named name.
	Get(name string) (*workflow.Definition, bool)
	// All returns every workflow, sorted by name; Names their names.
	All() []*workflow.Definition
	Names() []string
}
