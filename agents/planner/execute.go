package planner

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// Execute answers pr in five phases, reporting each through progress (when not nil):
//
//  1. understand ("Planning…"): the small model commits the request's intent and
//     entities (commit_understanding);
//  2. plan: the main model commits tasks with ids, descriptions, depends_on, a type
//     (tool or reasoning; none: tool) and a tool selection (commit_plan). A plan with
//     no tasks, more than MaxTasks, a repeated id, a task without a description, an
//     unknown type, a dependency on an unknown task or a cycle is rejected with a
//     reminder that says so; selected tools the channel is not offered are dropped
//     and logged;
//  3. execute ("Running 3 tasks…"): a task starts once every task it depends on has
//     finished, up to MaxParallel at once; each is one Executor turn, offered no
//     tools for a reasoning task and only its selection (none: every tool) for a
//     tool task (agents.TaskOptions). A task that
//     fails records its error, and the tasks that depend on it still run, told so;
//  4. reflect ("Checking the answer…"): the main model commits whether the results
//     answer the request, what is missing and new tasks (commit_reflection). New
//     tasks run as another round (their dependencies may name earlier tasks), at most
//     MaxRounds times; when the last reflection still finds the request unanswered,
//     the findings are Truncated;
//  5. answer ("Writing the answer…"): one call of the main model, without tools,
//     writes the answer from every task's result.
//
// A model that never commits valid arguments does not fail the turn: without an
// understanding the request itself is the intent, without a plan a single task does
// the whole request, and without a reflection the results are taken as the answer (each
// logged as a warning). The Findings hold the answer, every task's tool calls (tasks
// in the order they were planned), the model calls of every phase and task as Steps
// and their summed Usage. Errors: the model client's (see agents.Client.Complete), and ctx's,
// checked before every phase and before a task starts (running tasks stop at their
// executor's next check); the Findings then hold what was done so far.
func (p *Planner) Execute(ctx context.Context, pr conversation.Prompt, progress conversation.Progress) (conversation.Findings, error) {
	if progress == nil {
		progress = func(string) {}
	}
	r, err := p.newRun(pr)
	if err != nil {
		return conversation.Findings{}, err
	}
	f, err := r.run(ctx, progress)
	r.collect(&f)
	return f, err
}

// run runs the phases in order: planning (understand, plan), the rounds of tasks and
// their checks, and the answer, each shown as a step of the plan.
func (r *planRun) run(ctx context.Context, progress conversation.Progress) (conversation.Findings, error) {
	steps := planSteps{sink: r.prompt.Tasks}
	round, err := r.planning(ctx, steps, progress)
	if err != nil {
		return r.f, err
	}
	missing, err := r.rounds(ctx, steps, round, progress)
	if err != nil {
		return r.f, err
	}
	if err := r.checkCtx(ctx); err != nil {
		return r.f, err
	}
	steps.phase("answer", "Writing the answer", conversation.TaskInProgress, "")
	progress("Writing the answer…")
	if err := r.answer(ctx, missing); err != nil {
		steps.phase("answer", "Writing the answer", conversation.TaskError, "")
		return r.f, err
	}
	steps.phase("answer", "Writing the answer", conversation.TaskComplete, "")
	return r.f, nil
}

// planning runs the understand and plan phases, shown as the plan's step "Planning",
// and returns the first round's tasks.
func (r *planRun) planning(ctx context.Context, steps planSteps, progress conversation.Progress) ([]*taskRun, error) {
	if err := r.checkCtx(ctx); err != nil {
		return nil, err
	}
	if steps.sink != nil {
		steps.sink.Plan("Planning")
	}
	steps.phase("plan", "Planning", conversation.TaskInProgress, "")
	progress("Planning…")
	if err := r.understand(ctx); err != nil {
		steps.phase("plan", "Planning", conversation.TaskError, "")
		return nil, err
	}
	if err := r.checkCtx(ctx); err != nil {
		return nil, err
	}
	round, err := r.plan(ctx)
	if err != nil {
		steps.phase("plan", "Planning", conversation.TaskError, "")
		return nil, err
	}
	if steps.sink != nil && strings.TrimSpace(r.intent) != "" {
		steps.sink.Plan(textcut.Ellipsis(strings.Join(strings.Fields(r.intent), " "), maxTaskTitle, nil))
	}
	steps.phase("plan", "Planning", conversation.TaskComplete, fmt.Sprintf("%d %s", len(round), plural(len(round), "task", "tasks")))
	return round, nil
}

// rounds runs round, checks the results (reflect) and runs the new tasks the check
// adds as further rounds, at most MaxRounds of them. It returns what the last check
// found missing: "" once the results answer the request. When the rounds run out
// before that, the findings are Truncated.
func (r *planRun) rounds(ctx context.Context, steps planSteps, round []*taskRun, progress conversation.Progress) (string, error) {
	for n := 0; ; n++ {
		steps.tasks(conversation.TaskPending, round...)
		if err := r.execute(ctx, round, progress); err != nil {
			return "", err
		}
		if err := r.checkCtx(ctx); err != nil {
			return "", err
		}
		answered, missing, next, err := r.check(ctx, n, steps, progress)
		switch {
		case err != nil:
			return "", err
		case answered:
			return "", nil
		case r.p.maxRounds-n == 0:
			r.log.InfoContext(ctx, "planner rounds ran out before the request was answered",
				slog.Int("rounds", n+1), slog.String("missing", missing))
			r.f.Truncated = true
			return missing, nil
		case len(next) == 0:
			return missing, nil // nothing more the model knows to try
		}
		round = next
	}
}

// check runs the reflect phase after round n (from 0), shown as the plan's step
// "check-<n+1>", with the rounds left.
func (r *planRun) check(ctx context.Context, n int, steps planSteps, progress conversation.Progress) (answered bool, missing string, next []*taskRun, err error) {
	id := fmt.Sprintf("check-%d", n+1)
	steps.phase(id, "Checking the answer", conversation.TaskInProgress, "")
	progress("Checking the answer…")
	left := r.p.maxRounds - n
	answered, missing, next, err = r.reflect(ctx, left)
	switch {
	case err != nil:
		steps.phase(id, "Checking the answer", conversation.TaskError, "")
	case answered:
		steps.phase(id, "Checking the answer", conversation.TaskComplete, "Answered")
	case len(next) > 0 && left > 0:
		steps.phase(id, "Checking the answer", conversation.TaskComplete, fmt.Sprintf("%d more %s", len(next), plural(len(next), "task", "tasks")))
	default:
		steps.phase(id, "Checking the answer", conversation.TaskComplete, "Missing: "+missing)
	}
	return answered, missing, next, err
}
