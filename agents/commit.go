package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// ErrNoCommit means the model never saved its work: through every try it answered
// without calling the commit function, or called it with arguments that were
// rejected. Nothing was saved. The WorkflowAgent methods return a *CommitError, which
// matches ErrNoCommit with errors.Is and has a UserMessage naming what was not saved.
var ErrNoCommit error = &modelError{
	msg:  "agents: the model did not commit its work",
	user: "The model did not save its work, so nothing was changed. Please try again.",
}

// research is one response's research calls being run: the response, the results
// of its calls so far (a rejected commit call's problem; "" for a research call not
// answered yet), and the research calls (at their places in the response) with
// their records. A write that stops for a person's confirmation keeps it
// (commitTranscript).
type research struct {
	Reply   openai.ChatCompletionMessage `json:"reply"`
	Results []string                     `json:"results"`
	At      []int                        `json:"at"`
	Batch   batch                        `json:"batch"`
}

// newResearch returns the research of comp, the commit calls' results given.
func (l CommitLoop) newResearch(comp Completion, results []string) research {
	rs := research{Reply: comp.Message(), Results: results}
	for i, tc := range comp.ToolCalls {
		if tc.Function.Name != l.Tool.Name {
			rs.Batch.Calls, rs.At = append(rs.Batch.Calls, tc), append(rs.At, i)
		}
	}
	rs.Batch.Results = make([]*conversation.ToolCall, len(rs.Batch.Calls))
	return rs
}

// runResearch runs the research calls of rs that have no result yet, decided the
// call a person decided (nil for none), and puts their results at their places; a
// failed tool is added to res.FailedTools. A call that needs a person's confirmation
// waits, and is returned, when the loop may stop for one (CanPause: nothing else is
// done then); otherwise it is refused. Untrusted results taint the write.
func (l CommitLoop) runResearch(ctx context.Context, rs *research, tainted *bool, res *CommitResult, decided *conversation.Resume) *conversation.PendingTool {
	pending := l.research.runBatch(ctx, l.Log, &rs.Batch, tainted, decided, l.CanPause, nil, nil)
	if *tainted {
		conversation.TaintFrom(ctx).MarkRead()
	}
	if pending != nil {
		return pending
	}
	for i, rec := range rs.Batch.Results {
		rs.Results[rs.At[i]] = toolMessage(l.research.registry, rs.Batch.Calls[i], *rec).Content
		if rec.Failed && !slices.Contains(res.FailedTools, rec.Name) {
			res.FailedTools = append(res.FailedTools, rec.Name)
		}
	}
	return nil
}

// commitTranscript is what a CommitLoop keeps of a write that stopped for a person's
// confirmation (conversation.PendingTool.Transcript): the messages after the loop's
// first ones, the research being run, and the loop's counters.
type commitTranscript struct {
	Messages    []openai.ChatCompletionMessage `json:"messages,omitempty"`
	Research    research                       `json:"research"`
	Calls       int                            `json:"calls"`
	Failed      int                            `json:"failed,omitempty"`
	Tainted     bool                           `json:"tainted,omitempty"`
	FailedTools []string                       `json:"failed_tools,omitempty"`
}

// resume goes on from the stop l.Resume decides: it appends the transcript's
// messages to msgs (the loop's first ones), restores res's counters and tainted, and
// runs the rest of the research; it returns the messages and the failed tries so
// far. Errors: a transcript that is not the loop's; a *ConfirmationNeeded when
// another call of the same response waits.
func (l CommitLoop) resume(ctx context.Context, msgs []openai.ChatCompletionMessage, tainted *bool, res *CommitResult) ([]openai.ChatCompletionMessage, int, error) {
	var tr commitTranscript
	if err := json.Unmarshal(l.Resume.Pending.Transcript, &tr); err != nil || len(tr.Research.Batch.Calls) != len(tr.Research.Batch.Results) ||
		len(tr.Research.At) != len(tr.Research.Batch.Calls) {
		return nil, 0, fmt.Errorf("%s: resume: the transcript is not the writer's: %v", l.ErrPrefix, err)
	}
	first := len(msgs)
	msgs = append(msgs, tr.Messages...)
	res.Calls, res.FailedTools = tr.Calls, tr.FailedTools
	*tainted = *tainted || tr.Tainted
	if pending := l.runResearch(ctx, &tr.Research, tainted, res, l.Resume); pending != nil {
		return nil, 0, l.pause(ctx, pending, msgs, first, tr.Research, tr.Failed, *tainted, *res)
	}
	return appendReply(msgs, tr.Research.Reply, tr.Research.Results), tr.Failed, nil
}

// pause returns the *conversation.ConfirmationNeeded of a loop that stopped before
// pending, with the transcript to resume from: msgs[first:] and rs.
func (l CommitLoop) pause(ctx context.Context, pending *conversation.PendingTool, msgs []openai.ChatCompletionMessage, first int, rs research, failed int, tainted bool, res CommitResult) error {
	tr := commitTranscript{Messages: msgs[first:], Research: rs, Calls: res.Calls, Failed: failed, Tainted: tainted, FailedTools: res.FailedTools}
	b, err := json.Marshal(tr)
	if err != nil {
		return fmt.Errorf("%s: %w", l.ErrPrefix, err)
	}
	pending.Transcript = b
	l.Log.InfoContext(ctx, "tool call of a write waits for confirmation", slog.String("tool", pending.Name), slog.String("reason", pending.Reason))
	return &conversation.ConfirmationNeeded{Pending: *pending}
}

// CommitError is the error of a WorkflowAgent call whose model did not call the commit
// function with valid arguments in any of its tries. errors.Is(err, ErrNoCommit)
// reports it.
type CommitError struct {
	// Tool is the commit function the model was asked to call.
	Tool string
	// Tries is the number of failed tries: 1 + WorkflowAgentConfig.MaxReminders (a
	// Write with tools made its research calls on top of them).
	Tries int
	// Problem says what was wrong with the last try ("answered in text without
	// calling the function", or why the arguments were rejected).
	Problem string

	user string
}

// Error describes the failure for logs.
func (e *CommitError) Error() string {
	return fmt.Sprintf("agents: the model did not call %s with valid arguments in %d tries (last: %s)", e.Tool, e.Tries, e.Problem)
}

// Is reports whether target is ErrNoCommit.
func (e *CommitError) Is(target error) bool { return target == ErrNoCommit }

// UserMessage returns the text to show in Slack (conversation.ErrorReply uses it),
// e.g. "The model did not save the options for Audience after 3 tries, so nothing
// was changed. Please try again."
func (e *CommitError) UserMessage() string { return e.user }

// CommitLoop makes the model save its work by calling a commit function. Each call
// offers the function and forces it with tool_choice ({"type": "function",
// "function": {"name": …}}) until Accept takes the arguments of one of the response's
// tool calls; a response without such a call (a miss) is answered with
// prompts.CommitReminder, at most Reminders times. The WorkflowAgent's methods and the
// planner's phases (package agents/planner) share it; the WorkflowAgent's Write with
// tools also gives it research tools: the first calls offer them too, with
// tool_choice "required", and their tool calls are run.
type CommitLoop struct {
	Client Completer
	Model  string
	// Prompts renders the reminders.
	Prompts *prompts.Set
	// Tool is the commit function.
	Tool openai.FunctionDefinition
	// Accept reads the arguments of a call of Tool; an error rejects them, and its
	// text tells the model what was wrong.
	Accept func(args json.RawMessage) error
	// Reminders is how many misses are answered with a reminder: the loop makes
	// 1+Reminders tries (and its research calls on top of them).
	Reminders int
	// Log receives a warning per miss, with Warning as its message, and research's
	// tool calls.
	Log     *slog.Logger
	Warning string
	// ErrPrefix starts the loop's other errors ("agents: write": "agents: write:
	// context canceled").
	ErrPrefix string
	// UserMessage is the *CommitError's UserMessage, for its number of tries
	// (NotSaved writes the usual one).
	UserMessage func(tries int) string

	// Tainted says untrusted content is in msgs already (a tainted artifact's text,
	// conversation.ArtifactRequest.Tainted): a research call of a tool that is not
	// read-only is refused, as after an untrusted tool's output (approvalReason). The
	// conversation.Taint in Run's context, if any, is told when the loop is or becomes
	// tainted and which calls it refused.
	Tainted bool
	// CanPause lets a research call that needs a person's confirmation stop the
	// loop: Run returns a *conversation.ConfirmationNeeded with the call and the
	// loop's transcript (conversation.ArtifactRequest.Ask). Without it such a call is
	// refused with an error result. Resume goes on from such a stop, the call run or
	// denied as it says (at most once: Interrupted runs nothing).
	CanPause bool
	Resume   *conversation.Resume

	// research runs the calls of other functions than Tool; its registry's tools are
	// offered with Tool while the call is one of the first toolSteps-1. With a nil
	// registry every call forces Tool.
	research  toolRunner
	toolSteps int
	// seed are research calls run before the first model call, their results given
	// to it as if it had made them (approved search queries); ignored without a
	// research registry.
	seed []openai.ToolCall
}

// CommitResult is what a CommitLoop did.
type CommitResult struct {
	// Usage sums the usage of every model call, the failed ones included.
	Usage conversation.Usage
	// Calls counts the model calls, those that offered research tools included.
	Calls int
	// Call is the accepted call of the commit function; zero after an error.
	Call openai.ToolCall
	// FailedTools are the research tools whose calls failed, in order, each once.
	FailedTools []string
}

// Run runs the loop from msgs, which it does not change, and returns what it did,
// with an error too. Errors: a *CommitError (ErrNoCommit) when the tries ran out;
// ctx's error, checked before every call after the first; the client's, but for
// ErrEmptyResponse, which is a miss; a reminder that does not render; with CanPause,
// a *conversation.ConfirmationNeeded when a research call waits for a person (res
// then holds the usage so far); with Resume, a transcript that is not the loop's.
func (l CommitLoop) Run(ctx context.Context, msgs []openai.ChatCompletionMessage) (CommitResult, error) {
	var res CommitResult
	msgs = slices.Clip(msgs) // appends must not write into the caller's array
	commit := openai.Tool{Type: openai.ToolTypeFunction, Function: &l.Tool}
	forced := openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: l.Tool.Name}}
	var open []openai.Tool // the research tools and the commit function, while they are offered
	if l.research.registry != nil {
		open = append(l.research.registry.OpenAITools(), commit)
	}
	tries := 1 + l.Reminders
	var problem string
	// Untrusted content given, offered (an untrusted server's descriptions) or read
	// by research (approvalReason).
	tainted := l.Tainted || l.research.registry.offersUntrusted()
	first, failed := len(msgs), 0
	if l.Resume != nil {
		var err error
		if msgs, failed, err = l.resume(ctx, msgs, &tainted, &res); err != nil {
			return res, err
		}
	}
	if tainted {
		conversation.TaintFrom(ctx).MarkRead()
	}
	if l.Resume == nil {
		var err error
		if msgs, err = l.runSeed(ctx, msgs, first, &tainted, &res); err != nil {
			return res, err
		}
	}
	for {
		if res.Calls > 0 {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("%s: %w", l.ErrPrefix, err)
			}
		}
		req := openai.ChatCompletionRequest{Model: l.Model, Messages: msgs}
		exploring := open != nil && res.Calls+1 < l.toolSteps
		if exploring {
			req.Tools, req.ToolChoice = open, "required"
		} else {
			req.Tools, req.ToolChoice = []openai.Tool{commit}, forced
		}
		comp, err := l.Client.Complete(ctx, req)
		res.Calls++
		res.Usage = res.Usage.Add(comp.Usage)
		if err != nil && !errors.Is(err, ErrEmptyResponse) {
			return res, fmt.Errorf("%s: %w", l.ErrPrefix, err)
		}
		var call openai.ToolCall
		var results []string
		call, problem, results = checkCommit(comp, l.Tool.Name, l.Accept)
		if problem == "" {
			res.Call = call
			return res, nil
		}
		if exploring && slices.ContainsFunc(comp.ToolCalls, func(tc openai.ToolCall) bool { return tc.Function.Name != l.Tool.Name }) {
			// Research: run the calls; a rejected commit call among them is answered
			// with its problem.
			rs := l.newResearch(comp, results)
			if pending := l.runResearch(ctx, &rs, &tainted, &res, nil); pending != nil {
				return res, l.pause(ctx, pending, msgs, first, rs, failed, tainted, res)
			}
			msgs = appendReply(msgs, rs.Reply, rs.Results)
			continue
		}
		failed++
		if failed == tries {
			l.warnMiss(ctx, comp, problem, failed, tries)
			break
		}
		if msgs, err = l.remind(ctx, msgs, comp, results, problem, failed, tries); err != nil {
			return res, err
		}
	}
	return res, &CommitError{Tool: l.Tool.Name, Tries: tries, Problem: problem, user: l.UserMessage(tries)}
}

// warnMiss logs the failed-th miss of tries: the model's answer had no acceptable
// call of the commit function (problem says why).
func (l CommitLoop) warnMiss(ctx context.Context, comp Completion, problem string, failed, tries int) {
	l.Log.WarnContext(ctx, l.Warning,
		slog.String("tool", l.Tool.Name), slog.Int("try", failed), slog.Int("tries", tries),
		slog.String("problem", problem), slog.String("content", textcut.BytesMark(comp.Content, 200, textcut.Truncated)))
}

// remind logs the failed-th miss and returns msgs with comp, the results of its
// calls and the reminder for the next try (prompts.CommitReminder). Errors: the
// reminder does not render.
func (l CommitLoop) remind(ctx context.Context, msgs []openai.ChatCompletionMessage, comp Completion, results []string, problem string, failed, tries int) ([]openai.ChatCompletionMessage, error) {
	l.warnMiss(ctx, comp, problem, failed, tries)
	reminder, err := l.Prompts.Render(prompts.CommitReminder, prompts.CommitReminderData{
		ToolName: l.Tool.Name, Problem: reminderProblem(problem), Try: failed + 1, Tries: tries,
	})
	if err != nil {
		return msgs, fmt.Errorf("%s: %w", l.ErrPrefix, err)
	}
	msgs = appendReply(msgs, comp.Message(), results)
	return append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: reminder}), nil
}

// runSeed runs l.seed, the approved queries, before the first model call, as if the
// model had made the calls, and returns msgs with the calls and their results; a
// resumed loop has them in its transcript already, so Run calls it only on a fresh
// one. Without seed or a research registry it returns msgs as they are. A call that
// waits for a person stops the loop as Run's research does (pause).
func (l CommitLoop) runSeed(ctx context.Context, msgs []openai.ChatCompletionMessage, first int, tainted *bool, res *CommitResult) ([]openai.ChatCompletionMessage, error) {
	if len(l.seed) == 0 || l.research.registry == nil {
		return msgs, nil
	}
	rs := l.newResearch(Completion{ToolCalls: l.seed}, make([]string, len(l.seed)))
	if pending := l.runResearch(ctx, &rs, tainted, res, nil); pending != nil {
		return msgs, l.pause(ctx, pending, msgs, first, rs, 0, *tainted, *res)
	}
	return appendReply(msgs, rs.Reply, rs.Results), nil
}

// appendReply appends reply, the assistant message, unless it is empty, and a
// "tool" message with results[i] for each of its tool calls.
func appendReply(msgs []openai.ChatCompletionMessage, reply openai.ChatCompletionMessage, results []string) []openai.ChatCompletionMessage {
	if reply.Content != "" || len(reply.ToolCalls) > 0 {
		msgs = append(msgs, reply)
	}
	for i, tc := range reply.ToolCalls {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: results[i]})
	}
	return msgs
}

// notCalled is checkCommit's problem for an answer without a call of the commit
// function.
const notCalled = "answered without calling the function"

// reminderProblem is the reminder's Problem for checkCommit's problem: empty when the
// model did not call the function (the template says so itself).
func reminderProblem(problem string) string {
	if problem == notCalled {
		return ""
	}
	return problem
}

// checkCommit looks for a call of the commit function tool in comp whose arguments
// accept takes. It returns that call and "" when there is one; otherwise what was
// wrong (notCalled when comp called no function), and the result to send back for
// each of comp's tool calls (every call must be answered before the reminder).
func checkCommit(comp Completion, tool string, accept func(json.RawMessage) error) (call openai.ToolCall, problem string, results []string) {
	results = make([]string, len(comp.ToolCalls))
	for i, tc := range comp.ToolCalls {
		if tc.Function.Name != tool {
			p := fmt.Sprintf("there is no function %q; the function to call is %s", tc.Function.Name, tool)
			results[i] = "error: " + p
			if problem == "" {
				problem = p
			}
			continue
		}
		args := strings.TrimSpace(tc.Function.Arguments)
		if args == "" {
			args = "{}"
		}
		err := accept(json.RawMessage(args))
		if err == nil {
			return tc, "", nil
		}
		p := err.Error()
		if comp.Truncated {
			p = "the call was cut off by the output token limit before it was complete; make the text shorter"
		}
		results[i] = "error: " + p + ". Nothing was saved."
		if problem == "" || strings.HasPrefix(problem, "there is no function") {
			problem = p
		}
	}
	if problem == "" {
		problem = notCalled
	}
	return openai.ToolCall{}, problem, results
}

// NotSaved returns the usual CommitError.UserMessage (CommitLoop.UserMessage) for
// what was not saved, a phrase such as "the plan" or "the text of *Problem*".
func NotSaved(what string) func(tries int) string {
	return func(tries int) string {
		return fmt.Sprintf("The model did not save %s after %d %s, so nothing was changed. Please try again.", what, tries, plural(tries, "try", "tries"))
	}
}

// plural returns one when n is 1 and many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
