package planner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"
	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// Defaults of Config.
const (
	// DefaultMaxTasks bounds the tasks of a plan, and the new tasks of one round.
	DefaultMaxTasks = 6
	// DefaultMaxRounds bounds the rounds of new tasks that reflection may add.
	DefaultMaxRounds = 2
	// DefaultMaxParallelTasks bounds the tasks that run at once.
	DefaultMaxParallelTasks = 4
)

// The planner's and the router's commit functions, which tool_choice forces. Their
// arguments:
//
//	commit_understanding  {"intent": "…", "entities": ["…", …]}
//	commit_plan           {"tasks": [{"id": "…", "description": "…", "depends_on": ["…"]}, …]}
//	commit_reflection     {"answered": true|false, "missing": "…", "new_tasks": [<task>, …]}
//	commit_route          {"strategy": "react"|"planner", "reason": "…"}
const (
	CommitUnderstandingTool = "commit_understanding"
	CommitPlanTool          = "commit_plan"
	CommitReflectionTool    = "commit_reflection"
	CommitRouteTool         = "commit_route"
)

// Bounds of what the planner puts in a prompt, in bytes.
const (
	maxTaskResult = 8 << 10 // one task's result, in the prompts of later phases
	maxPlanText   = 2000    // a task's description, the intent, the missing note
	maxEntity     = 200     // one entity
	maxEntities   = 20
	maxTaskID     = 64
)

// Config configures a Planner. Client, Model and Executor are required; the zero
// value of every other field picks its default.
type Config struct {
	// Client calls the models for the planner's own phases (an *agents.Client).
	Client agents.Completer
	// Model is the main model (OPENAI_MODEL): it plans, reflects and writes the answer.
	Model string
	// SmallModel (OPENAI_SMALL_MODEL) reads the request's intent and entities; default
	// Model.
	SmallModel string
	// Executor is the ReAct executor that carries out each task, bounded by its own
	// MaxSteps, with its tools; the planner's system prompt lists the same tools so
	// the plan can use them.
	Executor *agents.Executor
	// Prompts renders the prompts; default prompts.MustParse().
	Prompts *prompts.Set
	// MaxTasks bounds the tasks of the plan and the new tasks of each reflection round
	// (default DefaultMaxTasks, 6). A plan with more is rejected with a reminder.
	MaxTasks int
	// MaxRounds bounds the rounds of new tasks that reflection may add after the first
	// (default DefaultMaxRounds, 2; negative: none, the reflection only notes what is
	// missing).
	MaxRounds int
	// MaxParallel bounds the tasks that run at once (default DefaultMaxParallelTasks).
	MaxParallel int
	// MaxReminders is how many times a model that did not call a phase's commit
	// function with valid arguments is told so and asked again (default
	// agents.DefaultMaxReminders, 2; negative: none).
	MaxReminders int
	// Logger receives a warning per reminder and per fallback; default slog.Default().
	Logger *slog.Logger
}

// Planner is the planner strategy of the assistant pipeline (docs/architecture.md,
// "Assistant pipeline"), for deep questions: understand → plan → execute → reflect →
// answer. It implements conversation.Executor and is safe for concurrent use.
//
// The planner's own calls send the system prompt prompts.PlannerSystem (the role, the
// date, the tools the tasks can use, the summary), the conversation's history and one
// phase message; the understand, plan and reflect phases offer a single commit
// function that tool_choice forces, as agents.WorkflowAgent does (no JSON response
// format), and a missing or rejected call is answered with prompts.CommitReminder, at
// most MaxReminders times. Each task runs as one turn of the ReAct Executor, whose
// request (prompts.PlannerTask) is the task, the results of the tasks it depends on and
// the person's request with its intent and entities; the task sees the conversation's
// summary but not its history (the understanding names what the history referred to).
type Planner struct {
	client       agents.Completer
	model        string
	smallModel   string
	executor     *agents.Executor
	prompts      *prompts.Set
	maxTasks     int
	maxRounds    int
	maxParallel  int
	maxReminders int
	logger       *slog.Logger
}

var _ conversation.Executor = (*Planner)(nil)

// New returns a Planner for cfg, filling in defaults. It panics when cfg.Client or
// cfg.Executor is nil or cfg.Model is empty (a wiring mistake).
func New(cfg Config) *Planner {
	if cfg.Client == nil || cfg.Model == "" || cfg.Executor == nil {
		panic("planner: New needs Config.Client, Model and Executor")
	}
	p := &Planner{
		client:       cfg.Client,
		model:        cfg.Model,
		smallModel:   cmp.Or(cfg.SmallModel, cfg.Model),
		executor:     cfg.Executor,
		prompts:      cfg.Prompts,
		maxTasks:     cmp.Or(cfg.MaxTasks, DefaultMaxTasks),
		maxRounds:    max(cmp.Or(cfg.MaxRounds, DefaultMaxRounds), 0),
		maxParallel:  cmp.Or(cfg.MaxParallel, DefaultMaxParallelTasks),
		maxReminders: max(cmp.Or(cfg.MaxReminders, agents.DefaultMaxReminders), 0),
		logger:       cmp.Or(cfg.Logger, slog.Default()),
	}
	if p.maxTasks < 1 {
		p.maxTasks = DefaultMaxTasks
	}
	if p.maxParallel < 1 {
		p.maxParallel = DefaultMaxParallelTasks
	}
	if p.prompts == nil {
		p.prompts = prompts.MustParse()
	}
	return p
}

// Execute answers pr in five phases, reporting each through progress (when not nil):
//
//  1. understand ("Planning…"): the small model commits the request's intent and
//     entities (commit_understanding);
//  2. plan: the main model commits tasks with ids, descriptions and depends_on
//     (commit_plan). A plan with no tasks, more than MaxTasks, a repeated id, a task
//     without a description, a dependency on an unknown task or a cycle is rejected
//     with a reminder that says so;
//  3. execute ("Running 3 tasks…"): a task starts once every task it depends on has
//     finished, up to MaxParallel at once; each is one Executor turn. A task that
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

// planRun is the state of one Execute call. Only the goroutine that runs Execute
// changes it; the tasks' goroutines read what was set before they started (the
// prompt, the understanding) and send their outcomes back over a channel.
type planRun struct {
	p      *Planner
	prompt conversation.Prompt
	log    *slog.Logger
	// base is the system prompt and the history that start every phase's messages.
	base []openai.ChatCompletionMessage
	f    conversation.Findings

	intent   string
	entities []string
	// tasks are every task planned, in the order they were planned, round after
	// round; byID finds them by their canonical id in lower case.
	tasks []*taskRun
	byID  map[string]*taskRun
	// tainted is set once a finished task called an untrusted tool: the tasks that
	// start after it may read its result, so they run tainted (README "Tool policy").
	tainted bool
}

func (p *Planner) newRun(pr conversation.Prompt) (*planRun, error) {
	e := p.executor.SystemData(pr)
	system, err := p.prompts.Render(prompts.PlannerSystem, prompts.PlannerSystemData{
		Date: e.Date, Categories: e.Categories, Summary: e.Summary,
		// The deployment's guidance helps the plan pick tool chains; each task's
		// executor run reads it too (ExecutorSystemData.Instructions).
		Instructions: e.Instructions,
	})
	if err != nil {
		return nil, fmt.Errorf("agents: planner: %w", err)
	}
	base := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: system}}
	base = agents.AppendHistory(base, pr.History)
	return &planRun{
		p: p, prompt: pr, base: slices.Clip(base), byID: map[string]*taskRun{},
		log: p.logger.With(slog.String("conversation", pr.Key.String()), slog.String("strategy", StrategyPlanner)),
	}, nil
}

func (r *planRun) run(ctx context.Context, progress conversation.Progress) (conversation.Findings, error) {
	if err := r.checkCtx(ctx); err != nil {
		return r.f, err
	}
	steps := planSteps{sink: r.prompt.Tasks}
	if steps.sink != nil {
		steps.sink.Plan("Planning")
	}
	steps.phase("plan", "Planning", conversation.TaskInProgress, "")
	progress("Planning…")
	if err := r.understand(ctx); err != nil {
		steps.phase("plan", "Planning", conversation.TaskError, "")
		return r.f, err
	}
	if err := r.checkCtx(ctx); err != nil {
		return r.f, err
	}
	round, err := r.plan(ctx)
	if err != nil {
		steps.phase("plan", "Planning", conversation.TaskError, "")
		return r.f, err
	}
	if steps.sink != nil && strings.TrimSpace(r.intent) != "" {
		steps.sink.Plan(textcut.Ellipsis(strings.Join(strings.Fields(r.intent), " "), maxTaskTitle, nil))
	}
	steps.phase("plan", "Planning", conversation.TaskComplete, fmt.Sprintf("%d %s", len(round), plural(len(round), "task", "tasks")))
	var missing string
	for n := 0; ; n++ {
		steps.tasks(conversation.TaskPending, round...)
		if err := r.execute(ctx, round, progress); err != nil {
			return r.f, err
		}
		if err := r.checkCtx(ctx); err != nil {
			return r.f, err
		}
		check := fmt.Sprintf("check-%d", n+1)
		steps.phase(check, "Checking the answer", conversation.TaskInProgress, "")
		progress("Checking the answer…")
		left := r.p.maxRounds - n
		answered, miss, next, err := r.reflect(ctx, left)
		if err != nil {
			steps.phase(check, "Checking the answer", conversation.TaskError, "")
			return r.f, err
		}
		switch {
		case answered:
			steps.phase(check, "Checking the answer", conversation.TaskComplete, "Answered")
		case len(next) > 0 && left > 0:
			steps.phase(check, "Checking the answer", conversation.TaskComplete, fmt.Sprintf("%d more %s", len(next), plural(len(next), "task", "tasks")))
		default:
			steps.phase(check, "Checking the answer", conversation.TaskComplete, "Missing: "+miss)
		}
		missing = miss
		if answered {
			missing = ""
			break
		}
		if left == 0 {
			r.log.InfoContext(ctx, "planner rounds ran out before the request was answered",
				slog.Int("rounds", n+1), slog.String("missing", missing))
			r.f.Truncated = true
			break
		}
		if len(next) == 0 {
			break // nothing more the model knows to try
		}
		round = next
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

func (r *planRun) checkCtx(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("agents: planner: %w", err)
	}
	return nil
}

// phase returns the messages of a phase: the base, then the template name rendered
// with data as the user message.
func (r *planRun) phase(name string, data any) ([]openai.ChatCompletionMessage, error) {
	text, err := r.p.prompts.Render(name, data)
	if err != nil {
		return nil, fmt.Errorf("agents: planner: %w", err)
	}
	return append(r.base, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text}), nil
}

// commit makes the phase's forced calls of tool (an agents.CommitLoop) until accept
// takes the arguments of one, reminding the model at most maxReminders times; then it
// returns an *agents.CommitError (agents.ErrNoCommit) whose UserMessage names what was
// not saved. name is the phase, for errors and logs. Every call counts in r.f.
func (r *planRun) commit(ctx context.Context, name, what, model string, msgs []openai.ChatCompletionMessage, tool openai.FunctionDefinition, accept func(json.RawMessage) error) error {
	res, err := agents.CommitLoop{
		Client: r.p.client, Model: model, Prompts: r.p.prompts, Tool: tool, Accept: accept,
		Reminders: r.p.maxReminders, Log: r.log.With(slog.String("phase", name)),
		Warning: "planner: the model did not commit its work", ErrPrefix: "agents: planner " + name,
		UserMessage: agents.NotSaved(what),
	}.Run(ctx, msgs)
	r.f.Steps += res.Calls
	r.f.Usage = r.f.Usage.Add(res.Usage)
	return err
}

// collect adds every task's tool calls to f, tasks in the order they were planned,
// with the entities they reported (Findings.Entities and OutOfScope).
func (r *planRun) collect(f *conversation.Findings) {
	f.ToolCalls = nil
	for _, t := range r.tasks {
		f.ToolCalls = append(f.ToolCalls, t.findings.ToolCalls...)
		f.Entities = append(f.Entities, t.findings.Entities...)
		f.OutOfScope = append(f.OutOfScope, t.findings.OutOfScope...)
	}
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
