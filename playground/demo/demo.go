package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
)

// classifyScopeTool is the scope classifier's function (agents.ScopeChecker).
const classifyScopeTool = "classify_scope"

// Complete answers req with one choice, as the OpenAI Chat Completions API would
// (see the package documentation for what it recognises). The Completion has
// FinishReason "tool_calls" when it calls functions and "stop" otherwise, Usage
// estimated as one token per four characters of the request and of the answer,
// Model ModelName and Attempts 1. Its only error is ctx's, wrapped, when ctx ends
// before or during Delay.
func (m *Model) Complete(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
	if err := ctx.Err(); err != nil {
		return agents.Completion{}, fmt.Errorf("demo: chat completion: %w", err)
	}
	if m.Delay > 0 {
		t := time.NewTimer(m.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return agents.Completion{}, fmt.Errorf("demo: chat completion: %w", ctx.Err())
		case <-t.C:
		}
	}
	content, calls := respond(req)
	comp := agents.Completion{
		Content:      content,
		ToolCalls:    calls,
		FinishReason: openai.FinishReasonStop,
		Usage:        usage(req, content, calls),
		Model:        ModelName,
		Attempts:     1,
	}
	if len(calls) > 0 {
		comp.FinishReason = openai.FinishReasonToolCalls
	}
	return comp, nil
}

// respond decides what kind of request req is and answers it: a forced function
// (workflow task or scope classifier), a workflow task that offers its commit
// function among tools, the executor's tool loop, or plain text.
func respond(req openai.ChatCompletionRequest) (string, []openai.ToolCall) {
	if name := forcedTool(req.ToolChoice); name != "" {
		if fn := findTool(req.Tools, name); fn != nil {
			return "", []openai.ToolCall{toolCall(len(req.Messages), 1, fn.Name, commitArgs(req, fn))}
		}
	}
	choice := choiceString(req.ToolChoice)
	if fn := offeredCommit(req.Tools); fn != nil && choice != "none" {
		// A write with tools (the research): the demo calls the search tools first,
		// then commits from their results (research_tools.go).
		if calls := searchFirst(req, fn); len(calls) > 0 {
			return "", calls
		}
		return "", []openai.ToolCall{toolCall(len(req.Messages), 1, fn.Name, commitArgs(req, fn))}
	}
	if len(req.Tools) > 0 && choice != "none" {
		return toolLoop(req, choice == "required")
	}
	return plainAnswer(req)
}

// workflowCommits are agents.WorkflowAgent's commit functions.
var workflowCommits = []string{
	agents.CommitOptionsTool, agents.CommitSelectionTool, agents.CommitFinalTextTool,
	agents.CommitEvaluationTool, agents.CommitDocsetTool, agents.CommitRecoveryTool,
}

// offeredCommit returns the first of tools that is a workflow commit function, or nil.
func offeredCommit(tools []openai.Tool) *openai.FunctionDefinition {
	for _, t := range tools {
		if t.Function != nil && slices.Contains(workflowCommits, t.Function.Name) {
			return t.Function
		}
	}
	return nil
}

// usage estimates the token usage: a token per four characters, rounded up.
func usage(req openai.ChatCompletionRequest, content string, calls []openai.ToolCall) conversation.Usage {
	in := 0
	for _, m := range req.Messages {
		in += utf8.RuneCountInString(m.Role) + utf8.RuneCountInString(messageText(m))
		for _, tc := range m.ToolCalls {
			in += utf8.RuneCountInString(tc.Function.Name) + utf8.RuneCountInString(tc.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		if b, err := json.Marshal(t.Function); err == nil {
			in += utf8.RuneCount(b)
		}
	}
	out := utf8.RuneCountInString(content)
	for _, tc := range calls {
		out += utf8.RuneCountInString(tc.Function.Name) + utf8.RuneCountInString(tc.Function.Arguments)
	}
	return conversation.Usage{PromptTokens: max(1, (in+3)/4), CompletionTokens: max(1, (out+3)/4)}
}

// commitArgs returns the arguments of the forced function fn: a workflow task
// (each commit function's job answers it) or the scope classifier.
func commitArgs(req openai.ChatCompletionRequest, fn *openai.FunctionDefinition) string {
	if args, ok := plannerCommit(req, fn); ok { // planner.go
		return args
	}
	t := readTask(req, fn)
	switch fn.Name {
	case agents.CommitOptionsTool:
		if strings.Contains(t.text, reviewMarker) {
			return marshal(map[string]any{"options": reviewTask{t}.reviewedOptions()})
		}
		return marshal(map[string]any{"options": optionsTask{t}.options()})
	case agents.CommitSelectionTool:
		return marshal(optionsTask{t}.selection())
	case agents.CommitFinalTextTool:
		return marshal(finalText(t))
	case agents.CommitEvaluationTool:
		return marshal(map[string]any{"results": reviewTask{t}.evaluate()})
	case agents.CommitDocsetTool:
		if t.workflow == blogWorkflow {
			return marshal(map[string]string{"summary": blogTask{t}.blogSummary()})
		}
		return marshal(map[string]string{"summary": writeTask{t}.docsetSummary()})
	case agents.CommitRecoveryTool:
		return marshal(blogTask{t}.recovery())
	case classifyScopeTool:
		return marshal(map[string]any{"in_scope": true, "reason": "The offline demo model treats every message as in scope."})
	}
	return marshal(exampleValue(t.schema, fn.Name))
}

// finalText answers commit_artifact_final_text: a batch write, the blog's
// research failure, a blog artifact, a revision, or a written artifact with
// what its searches found.
func finalText(t *workflowTask) map[string]string {
	revise := strings.HasPrefix(strings.TrimSpace(t.text), "Revise ") || quotedAfter(t.text, "The current text:") != ""
	blog, w := blogTask{t}, writeTask{t}
	switch {
	case !revise && len(t.batch) > 0:
		return map[string]string{"text": batchText(t)}
	case !revise && blog.researchFails():
		return map[string]string{"text": "", "failure": blog.researchFailure()}
	case t.blog != blogNone:
		return map[string]string{"text": blog.blogText(revise)}
	case revise:
		return map[string]string{"text": w.revise()}
	}
	return map[string]string{"text": w.writeWithSearches()}
}

// batchText writes every item of a batch, each under "## " and its title exactly as
// listed, as the items would be written one by one (without the blog's demo failure:
// the batch succeeds as a whole).
func batchText(t *workflowTask) string {
	parts := make([]string, len(t.batch))
	for i := range t.batch {
		c := *t
		it := t.batch[i]
		c.item, c.batch = &it, nil
		c.results = t.resultsFor(it.Title)
		var text string
		if c.blog != blogNone {
			text = blogTask{&c}.blogText(false)
		} else {
			text = writeTask{&c}.writeWithSearches()
		}
		parts[i] = "## " + it.Title + "\n\n" + strings.TrimSpace(text)
	}
	return strings.Join(parts, "\n\n")
}

// searchFirst returns the search calls a research write makes before it commits, or
// nil: when fn is not commit_artifact_final_text, no search tool is offered, or the
// request already has the results of each (the approved queries, run before the
// model is called, or the demo's own calls).
func searchFirst(req openai.ChatCompletionRequest, fn *openai.FunctionDefinition) []openai.ToolCall {
	if fn.Name != agents.CommitFinalTextTool {
		return nil
	}
	searched := map[string]bool{} // "tool query" already called
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			var args struct {
				Query string `json:"query"`
			}
			_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
			searched[tc.Function.Name+" "+args.Query] = true
		}
	}
	var offered []string
	for _, name := range searchTools {
		if findTool(req.Tools, name) != nil {
			offered = append(offered, name)
		}
	}
	if len(offered) == 0 {
		return nil
	}
	t := readTask(req, fn)
	if strings.HasPrefix(strings.TrimSpace(t.text), "Revise ") {
		return nil
	}
	var calls []openai.ToolCall
	for _, q := range t.searchQueries() {
		for _, name := range offered {
			query := q
			if name == searchKnowledgeTool && !searched[name+" "+q] {
				query = keyWords(q)
			}
			if searched[name+" "+query] {
				continue
			}
			calls = append(calls, toolCall(len(req.Messages), len(calls)+1, name, marshal(map[string]string{"query": query})))
		}
	}
	return calls
}
