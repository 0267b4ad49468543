package demo

import (
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents/planner"
	"github.com/threadwright/threadwright/prompts"
)

// The planner strategy (package agents/planner): the demo commits an understanding
// and a plan of typed tasks, takes the results as the answer, answers a reasoning
// task from the results it builds on, and writes the answer from every result.

// plannerCommit returns the arguments of a planner phase's forced function fn, and
// whether fn is one.
func plannerCommit(req openai.ChatCompletionRequest, fn *openai.FunctionDefinition) (string, bool) {
	request := quotedRequest(lastUserText(req.Messages), "The request:")
	switch fn.Name {
	case planner.CommitUnderstandingTool:
		return marshal(map[string]any{"intent": "Answer the person's message: " + oneLine(request), "entities": []string{}}), true
	case planner.CommitPlanTool:
		return marshal(map[string]any{"tasks": demoPlan(request, plannerTools(req.Messages))}), true
	case planner.CommitReflectionTool:
		return marshal(map[string]any{"answered": true, "missing": "", "new_tasks": []any{}}), true
	}
	return "", false
}

// demoTask is a task of the demo's plan, as commit_plan takes it.
type demoTask struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	DependsOn   []string `json:"depends_on"`
	Type        string   `json:"type"`
	Tools       []string `json:"tools"`
}

// demoPlan plans request with the tools the tasks can use: a tool task per tool call
// the question asks for (plannedCalls), each selecting only that tool, and, after two
// or more, a reasoning task that puts their results together; a request that needs no
// tool is one reasoning task.
func demoPlan(request string, tools []openai.Tool) []demoTask {
	var out []demoTask
	for _, c := range plannedCalls(request, tools, true) {
		out = append(out, demoTask{ID: c.name, Description: "Use the " + c.name + " tool for the part of the person's request it answers, and report its result.",
			DependsOn: []string{}, Type: prompts.TaskTool, Tools: []string{c.name}})
	}
	switch len(out) {
	case 0:
		return []demoTask{{ID: "reply", Description: "Reply to the person's message; it needs no lookup.", DependsOn: []string{}, Type: prompts.TaskReasoning, Tools: []string{}}}
	case 1:
		return out
	}
	deps := make([]string, len(out))
	for i, t := range out {
		deps[i] = t.ID
	}
	return append(out, demoTask{ID: "combine", Description: "Put the results of the lookups together for the person.", DependsOn: deps, Type: prompts.TaskReasoning, Tools: []string{}})
}

// plannerTools returns the tools the planner's system prompt lists under "## Tools the
// tasks can use" (prompts.PlannerSystem), as tools with their names only.
func plannerTools(msgs []openai.ChatCompletionMessage) []openai.Tool {
	if len(msgs) == 0 || msgs[0].Role != openai.ChatMessageRoleSystem {
		return nil
	}
	_, list, ok := strings.Cut(messageText(msgs[0]), "## Tools the tasks can use")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, "\n## ")
	var out []openai.Tool
	for line := range strings.Lines(list) {
		if name, _, ok := strings.Cut(strings.TrimPrefix(line, "- "), ":"); ok && strings.HasPrefix(line, "- ") {
			out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: strings.TrimSpace(name)}})
		}
	}
	return out
}

// quotedRequest returns the "> " quoted lines that follow the line marker in text.
func quotedRequest(text, marker string) string {
	_, rest, ok := strings.Cut(text, marker)
	if !ok {
		return ""
	}
	var lines []string
	for line := range strings.Lines(strings.TrimLeft(rest, "\n")) {
		q, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), ">")
		if !ok {
			break
		}
		lines = append(lines, strings.TrimPrefix(q, " "))
	}
	return strings.Join(lines, "\n")
}

// Markers of the planner's prompts (prompts.PlannerTask, prompts.PlannerAnswer).
const (
	reasoningTaskMarker = "this task has no tools"
	plannerAnswerMarker = "Phase: write the answer."
)

// plannerText answers a reasoning task or the planner's answer phase from the task
// results its prompt q holds, and reports whether q was one of them.
func plannerText(q string) (string, bool) {
	switch {
	case strings.Contains(q, reasoningTaskMarker):
		_, results, found := strings.Cut(q, "## Results of the tasks this one builds on")
		results, _, _ = strings.Cut(results, "\nUse these results;")
		if text := resultLines(results); found && text != "" {
			return text, true
		}
		return chatReply(quotedRequest(q, "## Context: the person's request")), true
	case strings.HasPrefix(q, plannerAnswerMarker):
		_, results, _ := strings.Cut(q, "## What the tasks found")
		results, _, _ = strings.Cut(results, "\nNow write the reply")
		results, _, _ = strings.Cut(results, "\nStill missing after checking:")
		if text := resultLines(results); text != "" {
			return text, true
		}
		return chatReply(quotedRequest(q, "The request:")), true
	}
	return "", false
}

// resultLines returns the lines of a block of task results (prompts.PlannerResults)
// without the tasks' headings, each non-blank line once, in order, and the demo's
// italic notes ("_I'm the offline demo model…_") once at the end.
func resultLines(block string) string {
	var out, notes []string
	for line := range strings.Lines(block) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "### "), strings.HasPrefix(line, "(No result."):
		case len(line) > 2 && strings.HasPrefix(line, "_") && strings.HasSuffix(line, "_"):
			if !slices.Contains(notes, line) {
				notes = append(notes, line)
			}
		case strings.TrimSpace(line) == "":
			if len(out) > 0 && out[len(out)-1] != "" {
				out = append(out, "")
			}
		case !slices.Contains(out, line):
			out = append(out, line)
		}
	}
	text := strings.TrimSpace(strings.Join(out, "\n"))
	if len(notes) > 0 && text != "" {
		text += "\n\n" + strings.Join(notes, "\n")
	}
	return text
}
