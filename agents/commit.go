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

// commitLoop makes the model save its work by calling a commit function. Each call
// offers the function and forces it with tool_choice ({"type": "function",
// "function": {"name": …}}) until accept takes the arguments of one of the response's
// tool calls; a response without such a call (a miss) is answered with
// prompts.CommitReminder, at most reminders times. With research tools, the first
// toolSteps-1 calls offer them too, with tool_choice "required", and their tool calls
// are run. The planner's phases and the WorkflowAgent's methods share it.
type commitLoop struct {
	client Completer
	model  string
	// prompts renders the reminders.
	prompts *prompts.Set
	// tool is the commit function.
	tool openai.FunctionDefinition
	// accept reads the arguments of a call of tool; an error rejects them, and its
	// text tells the model what was wrong.
	accept func(args json.RawMessage) error
	// reminders is how many misses are answered with a reminder: the loop makes
	// 1+reminders tries (and its research calls on top of them).
	reminders int
	// research runs the calls of other functions than tool; its registry's tools are
	// offered with tool while the call is one of the first toolSteps-1. With a nil
	// registry every call forces tool.
	research  toolRunner
	toolSteps int
	// log receives a warning per miss, with warning as its message, and research's
	// tool calls.
	log     *slog.Logger
	warning string
	// errPrefix starts the loop's other errors ("agents: write": "agents: write:
	// context canceled").
	errPrefix string
	// userMessage is the *CommitError's UserMessage, for its number of tries.
	userMessage func(tries int) string
}

// commitResult is what a commitLoop did.
type commitResult struct {
	// usage sums the usage of every model call, the failed ones included.
	usage conversation.Usage
	// calls counts the model calls, those that offered research tools included.
	calls int
	// call is the accepted call of the commit function; zero after an error.
	call openai.ToolCall
	// failedTools are the research tools whose calls failed, in order, each once.
	failedTools []string
}

// run runs the loop from msgs, which it does not change, and returns what it did,
// with an error too. Errors: a *CommitError (ErrNoCommit) when the tries ran out;
// ctx's error, checked before every call after the first; the client's, but for
// ErrEmptyResponse, which is a miss; a reminder that does not render.
func (l commitLoop) run(ctx context.Context, msgs []openai.ChatCompletionMessage) (commitResult, error) {
	var res commitResult
	msgs = slices.Clip(msgs) // appends must not write into the caller's array
	commit := openai.Tool{Type: openai.ToolTypeFunction, Function: &l.tool}
	forced := openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: l.tool.Name}}
	var open []openai.Tool // the research tools and the commit function, while they are offered
	if l.research.registry != nil {
		open = append(l.research.registry.OpenAITools(), commit)
	}
	tries := 1 + l.reminders
	var problem string
	tainted := false // untrusted content read by research (approvalReason)
	for failed := 0; ; {
		if res.calls > 0 {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("%s: %w", l.errPrefix, err)
			}
		}
		req := openai.ChatCompletionRequest{Model: l.model, Messages: msgs}
		exploring := open != nil && res.calls+1 < l.toolSteps
		if exploring {
			req.Tools, req.ToolChoice = open, "required"
		} else {
			req.Tools, req.ToolChoice = []openai.Tool{commit}, forced
		}
		comp, err := l.client.Complete(ctx, req)
		res.calls++
		res.usage = res.usage.Add(comp.Usage)
		if err != nil && !errors.Is(err, ErrEmptyResponse) {
			return res, fmt.Errorf("%s: %w", l.errPrefix, err)
		}
		var call openai.ToolCall
		var results []string
		call, problem, results = checkCommit(comp, l.tool.Name, l.accept)
		if problem == "" {
			res.call = call
			return res, nil
		}
		if exploring && slices.ContainsFunc(comp.ToolCalls, func(tc openai.ToolCall) bool { return tc.Function.Name != l.tool.Name }) {
			// Research: run the calls; a rejected commit call among them is answered
			// with its problem.
			// A call that needs a person's confirmation is refused: nobody is asked
			// while an artifact is written.
			var b batch
			var at []int
			for i, tc := range comp.ToolCalls {
				if tc.Function.Name != l.tool.Name {
					b.Calls, at = append(b.Calls, tc), append(at, i)
				}
			}
			b.Results = make([]*conversation.ToolCall, len(b.Calls))
			l.research.runBatch(ctx, l.log, &b, &tainted, nil, false, nil, nil)
			for i, rec := range b.Results {
				results[at[i]] = toolMessage(l.research.registry, b.Calls[i], *rec).Content
				if rec.Failed && !slices.Contains(res.failedTools, rec.Name) {
					res.failedTools = append(res.failedTools, rec.Name)
				}
			}
			msgs = appendReply(msgs, comp, results)
			continue
		}
		failed++
		l.log.WarnContext(ctx, l.warning,
			slog.String("tool", l.tool.Name), slog.Int("try", failed), slog.Int("tries", tries),
			slog.String("problem", problem), slog.String("content", textcut.BytesMark(comp.Content, 200, textcut.Truncated)))
		if failed == tries {
			break
		}
		reminder, err := l.prompts.Render(prompts.CommitReminder, prompts.CommitReminderData{
			ToolName: l.tool.Name, Problem: reminderProblem(problem), Try: failed + 1, Tries: tries,
		})
		if err != nil {
			return res, fmt.Errorf("%s: %w", l.errPrefix, err)
		}
		msgs = appendReply(msgs, comp, results)
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: reminder})
	}
	return res, &CommitError{Tool: l.tool.Name, Tries: tries, Problem: problem, user: l.userMessage(tries)}
}

// appendReply appends comp as the assistant message, unless it is empty, and a "tool"
// message with results[i] for each of its tool calls.
func appendReply(msgs []openai.ChatCompletionMessage, comp Completion, results []string) []openai.ChatCompletionMessage {
	if comp.Content != "" || len(comp.ToolCalls) > 0 {
		msgs = append(msgs, comp.Message())
	}
	for i, tc := range comp.ToolCalls {
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
