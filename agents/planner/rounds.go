package planner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/prompts"
)

// taskOutcome is what a task's goroutine sends back.
type taskOutcome struct {
	task     *taskRun
	findings conversation.Findings
	err      error
}

// execute runs round: every task whose dependencies are done starts, at most
// maxParallel at once, until all have finished. Once ctx is done no task starts; the
// running ones are waited for, and ctx's error is returned.
func (r *planRun) execute(ctx context.Context, round []*taskRun, progress conversation.Progress) error {
	outcomes := make(chan taskOutcome)
	running, finished := 0, 0
	var stop error
	for finished < len(round) {
		if stop == nil {
			stop = r.checkCtx(ctx)
		}
		if stop == nil {
			started := 0
			for _, t := range round {
				if running == r.p.maxParallel {
					break
				}
				if t.started || !r.ready(t) {
					continue
				}
				t.started = true
				running++
				started++
				planSteps{sink: r.prompt.Tasks}.tasks(conversation.TaskInProgress, t)
				go r.runTask(ctx, t, r.dependencies(t), r.tainted, outcomes)
			}
			if started > 0 {
				progress(runningTasksStatus(running, finished, len(round)))
			}
		}
		if running == 0 {
			if stop != nil {
				return stop
			}
			// checkTasks rejects every plan that could get here.
			return errors.New("agents: planner: no task of the round can start")
		}
		o := <-outcomes
		running--
		finished++
		t := o.task
		t.done, t.findings, t.err = true, o.findings, o.err
		planSteps{sink: r.prompt.Tasks}.tasks(conversation.TaskComplete, t)
		r.tainted = r.tainted || r.p.executor.ReadUntrusted(o.findings)
		r.f.Steps += o.findings.Steps
		r.f.Usage = r.f.Usage.Add(o.findings.Usage)
		if o.err != nil && ctx.Err() == nil {
			r.log.WarnContext(ctx, "planner task failed; its dependents go on without it",
				slog.String("task", t.ID), slog.Any("err", o.err))
		}
	}
	return stop
}

// ready reports whether every task t depends on is done.
func (r *planRun) ready(t *taskRun) bool {
	for _, id := range t.DependsOn {
		if d := r.byID[strings.ToLower(id)]; d == nil || !d.done {
			return false
		}
	}
	return true
}

// dependencies returns the results of the tasks t depends on, in the plan's order.
func (r *planRun) dependencies(t *taskRun) []prompts.TaskResult {
	var out []prompts.TaskResult
	for _, d := range r.tasks {
		if slices.ContainsFunc(t.DependsOn, func(id string) bool { return strings.EqualFold(id, d.ID) }) {
			out = append(out, d.result())
		}
	}
	return out
}

// runTask runs t as one executor turn and sends its outcome to out.
// tainted says untrusted content entered the run before t started (planRun.tainted).
func (r *planRun) runTask(ctx context.Context, t *taskRun, deps []prompts.TaskResult, tainted bool, out chan<- taskOutcome) {
	o := taskOutcome{task: t}
	defer func() {
		if v := recover(); v != nil {
			r.log.ErrorContext(ctx, "planner task panicked", slog.String("task", t.ID),
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			o.err = fmt.Errorf("the task crashed: %v", v)
		}
		out <- o
	}()
	text, err := r.p.prompts.Render(prompts.PlannerTask, prompts.PlannerTaskData{
		Request: r.prompt.Text, Intent: r.intent, Entities: r.entities,
		Task: t.PlanTask, Dependencies: deps,
	})
	if err != nil {
		o.err = fmt.Errorf("agents: planner task %s: %w", t.ID, err)
		return
	}
	// A task cannot stop for a person: a call that needs confirmation is refused.
	o.findings, o.err = r.p.executor.ExecuteTask(ctx, conversation.Prompt{
		Key: r.prompt.Key, ContextChannelID: r.prompt.ContextChannelID, Viewing: r.prompt.Viewing, Summary: r.prompt.Summary, UserID: r.prompt.UserID, Text: text, Focus: r.prompt.Focus,
		Untrusted: r.prompt.Untrusted, // the request, in the task's text, holds an attached file's content
	}, agents.TaskOptions{Tainted: tainted, Reasoning: t.Reasoning(), Tools: t.Tools})
}

// runningTasksStatus is the progress line while tasks run: "Running 3 tasks…", then
// "Running 1 task (2 of 3 done)…".
func runningTasksStatus(running, finished, total int) string {
	s := fmt.Sprintf("Running %d %s", running, plural(running, "task", "tasks"))
	if finished > 0 {
		s += fmt.Sprintf(" (%d of %d done)", finished, total)
	}
	return s + "…"
}
