package planner

import (
	"errors"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// maxTaskResult bounds one task's result in the prompts of later phases, in bytes.
const maxTaskResult = 8 << 10

// taskRun is one task of the plan and, once it ran, its outcome.
type taskRun struct {
	prompts.PlanTask
	started, done bool
	findings      conversation.Findings
	err           error
}

// result is the task's outcome for a prompt.
func (t *taskRun) result() prompts.TaskResult {
	r := prompts.TaskResult{
		ID: t.ID, Description: t.Description,
		Result:     textcut.BytesMark(strings.TrimSpace(t.findings.Answer), maxTaskResult, textcut.Truncated),
		Incomplete: t.findings.Truncated,
	}
	if t.err != nil {
		r.Error = taskError(t.err)
	}
	return r
}

// taskError says why a task failed, for the model: the user message of a model error
// when it has one, otherwise the error's text.
func taskError(err error) string {
	var um interface{ UserMessage() string }
	if errors.As(err, &um) {
		return textcut.BytesMark(oneLine(um.UserMessage()), 500, textcut.Truncated)
	}
	return textcut.BytesMark(oneLine(err.Error()), 500, textcut.Truncated)
}

// Coarse bounds of the text of a plan's phases and tasks, in characters, as package
// agents bounds a tool call's (tasks.go): the conversation scrubs secrets out of a
// task, then cuts it to what Slack shows, so a secret is never cut in two before it
// is scrubbed.
const (
	maxTaskTitle  = 8 * conversation.MaxTaskTitle
	maxTaskOutput = 8 * conversation.MaxTaskOutput
)

// planSteps shows a planner run as a plan (Slack's task_display_mode plan): its
// phases (planning, checking, writing the answer) and the plan's tasks, each shown
// pending when planned and advancing as it runs. Its methods do nothing when the
// prompt has no TaskSink.
type planSteps struct {
	sink conversation.TaskSink
}

// phase shows the planner's phase id ("plan", "check-1", "answer") with title.
func (s planSteps) phase(id, title string, status conversation.TaskStatus, output string) {
	if s.sink == nil {
		return
	}
	s.sink.UpdateTasks(conversation.Task{ID: id, Title: title, Status: status, Output: textcut.Ellipsis(output, maxTaskOutput, nil)})
}

// tasks shows the plan's tasks ts, in one call: pending, in progress, or, once
// done, complete or error with the first line of its answer or error.
func (s planSteps) tasks(status conversation.TaskStatus, ts ...*taskRun) {
	if s.sink == nil || len(ts) == 0 {
		return
	}
	out := make([]conversation.Task, len(ts))
	for i, t := range ts {
		out[i] = planTask(t, status)
	}
	s.sink.UpdateTasks(out...)
}

// planTask is the task that shows t with status, or t's outcome once it is done.
func planTask(t *taskRun, status conversation.TaskStatus) conversation.Task {
	title := strings.Join(strings.Fields(t.Description), " ")
	if title == "" {
		title = t.ID
	}
	task := conversation.Task{ID: "task-" + t.ID, Title: textcut.Ellipsis(title, maxTaskTitle, nil), Status: status}
	if t.done {
		task.Status, task.Output = conversation.TaskComplete, firstLine(t.findings.Answer)
		if t.err != nil {
			task.Status, task.Output = conversation.TaskError, taskError(t.err)
		}
		task.Output = textcut.Ellipsis(task.Output, maxTaskOutput, nil)
	}
	return task
}

// firstLine is the first non-empty line of s, its spaces collapsed.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if line = oneLine(line); line != "" {
			return line
		}
	}
	return ""
}

// oneLine returns s with its runs of white space, line breaks included, made one
// space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// plural returns one when n is 1 and many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
