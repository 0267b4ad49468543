package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// PolicyChannel returns the channel whose strategy and tool policy apply to p: the
// channel the person views in the assistant view (ContextChannelID), otherwise the
// thread's own.
func (p Prompt) PolicyChannel() string {
	if p.ContextChannelID != "" {
		return p.ContextChannelID
	}
	return p.Key.ChannelID
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
	// Images are shown to the model with the request, as image parts (files the
	// person attached, when the model can see).
	Images []Image
	// Untrusted says content from outside (an attached file's) is in the request:
	// the turn starts tainted, as after an untrusted tool (docs/tools.md, "Tool policy").
	Untrusted bool
	// Entities are the items recently discussed (returned by tools), most recent
	// first, so that "the first one" or "that ticket" can be resolved.
	Entities []Entity
	// Focus is the item the conversation is about now, with its attributes as tools
	// reported them (State.Focus), so that "this one" or "is it compatible?"
	// resolve; nil when there is none.
	Focus *Entity
	// ContextChannelID, in an assistant thread, is the channel the person views: its
	// strategy and tool policy apply (PolicyChannel); "" elsewhere.
	ContextChannelID string
	// Viewing, in the agent view, is what the person is looking at (agentview.go):
	// the model is told, its message text as untrusted data; nil elsewhere.
	Viewing *Viewing
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
//
// An entity may carry "attributes", {"model_number": "WDT780SAEM1", "symptom": "…"}:
// what the tool reported about it, as one-line strings (bounded by package
// conversation/focus). They are kept only for the conversation's focus (State.Focus),
// not in the session context's list.
type Entity struct {
	ID         string            `json:"id"`
	Title      string            `json:"title,omitempty"`
	Type       string            `json:"type,omitempty"`
	Reason     string            `json:"reason,omitempty"` // why it is out of scope, for OutOfScope
	Attributes map[string]string `json:"attributes,omitempty"`
	// Trust says where the entity came from (EntityInternal, EntityUntrusted), set by
	// the executor from the trust of the tool call that reported it (never read from
	// the tool's result); empty in checkpoints written before it existed. An untrusted
	// focus taints the turn it is shown to (Untrusted).
	Trust string `json:"trust,omitempty"`
}

// Entity.Trust values.
const (
	// EntityInternal: a tool of the organization reported the entity.
	EntityInternal = "internal"
	// EntityUntrusted: untrusted content reported it (a tool whose output is
	// untrusted, or a result that reported untrusted content; ToolCall.Untrusted).
	EntityUntrusted = "untrusted"
)

// Untrusted reports whether e may hold what untrusted content planted: its Trust is
// EntityUntrusted, or it has no Trust (a checkpoint written before it existed) and
// has attributes, the safe reading. A nil e is not untrusted.
func (e *Entity) Untrusted() bool {
	if e == nil {
		return false
	}
	return e.Trust == EntityUntrusted || e.Trust == "" && len(e.Attributes) > 0
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
	// the secondary scope check (docs/tools.md, "The tool-result contract"), read from the
	// whole result before it was cut for the model. Scoped says the result labelled
	// its scope itself (an "out_of_scope" field, even an empty one), so it is not
	// classified (SCOPE_CLASSIFY_RESULTS).
	Entities   []Entity `json:"entities,omitempty"`
	OutOfScope []Entity `json:"out_of_scope,omitempty"`
	Scoped     bool     `json:"scoped,omitempty"`
	// Untrusted marks a result that held untrusted content though its tool is not
	// an untrusted one (search_knowledge finding a document an API token uploaded;
	// docs/api.md, "Tokens"): it was labelled untrusted and tainted the turn.
	Untrusted bool `json:"untrusted,omitempty"`
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
// sources listed, its citation markers renumbered: docs/tools.md, "Citations"). EditAnswer
// returns the answer as the reply shows it, in Markdown, and whether it differs from
// f.Answer: a streamed answer that the edited one extends (sources added) is completed
// with the rest, keeping its thinking steps; one it does not (markers renumbered) is
// replaced by the reply. p is the request, for the language of what it adds.
type AnswerEditor interface {
	EditAnswer(p Prompt, f Findings) (markdown string, edited bool)
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

// ErrorReply returns the short text to show in Slack for a failed turn: the error's
// own UserMessage() when it has one, otherwise a generic apology; the details stay in
// the log.
func ErrorReply(err error) string {
	var u interface{ UserMessage() string }
	switch {
	case errors.As(err, &u):
		return u.UserMessage()
	case errors.Is(err, context.DeadlineExceeded):
		return "Sorry, that took too long and I stopped. Please try again, perhaps with a narrower question."
	default:
		return "Sorry, something went wrong while I was answering. Please try again in a moment."
	}
}
