package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents/function"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// Defaults of PlannerConfig.
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

// PlannerConfig configures a Planner. Client, Model and Executor are required; the zero
// value of every other field picks its default.
type PlannerConfig struct {
	// Client calls the models for the planner's own phases (a *Client).
	Client Completer
	// Model is the main model (OPENAI_MODEL): it plans, reflects and writes the answer.
	Model string
	// SmallModel (OPENAI_SMALL_MODEL) reads the request's intent and entities; default
	// Model.
	SmallModel string
	// Executor is the ReAct executor that carries out each task, bounded by its own
	// MaxSteps, with its tools; the planner's system prompt lists the same tools so
	// the plan can use them.
	Executor *Executor
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
	// DefaultMaxReminders, 2; negative: none).
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
// function that tool_choice forces, as the WorkflowAgent does (no JSON response
// format), and a missing or rejected call is answered with prompts.CommitReminder, at
// most MaxReminders times. Each task runs as one turn of the ReAct Executor, whose
// request (prompts.PlannerTask) is the task, the results of the tasks it depends on and
// the person's request with its intent and entities; the task sees the conversation's
// summary but not its history (the understanding names what the history referred to).
type Planner struct {
	client       Completer
	model        string
	smallModel   string
	executor     *Executor
	prompts      *prompts.Set
	maxTasks     int
	maxRounds    int
	maxParallel  int
	maxReminders int
	logger       *slog.Logger
}

var _ conversation.Executor = (*Planner)(nil)

// NewPlanner returns a Planner for cfg, filling in defaults. It panics when cfg.Client
// or cfg.Executor is nil or cfg.Model is empty (a wiring mistake).
func NewPlanner(cfg PlannerConfig) *Planner {
	if cfg.Client == nil || cfg.Model == "" || cfg.Executor == nil {
		panic("agents: NewPlanner needs PlannerConfig.Client, Model and Executor")
	}
	p := &Planner{
		client:       cfg.Client,
		model:        cfg.Model,
		smallModel:   orDefault(cfg.SmallModel, cfg.Model),
		executor:     cfg.Executor,
		prompts:      cfg.Prompts,
		maxTasks:     orDefault(cfg.MaxTasks, DefaultMaxTasks),
		maxRounds:    max(orDefault(cfg.MaxRounds, DefaultMaxRounds), 0),
		maxParallel:  orDefault(cfg.MaxParallel, DefaultMaxParallelTasks),
		maxReminders: max(orDefault(cfg.MaxReminders, DefaultMaxReminders), 0),
		logger:       cfg.Logger,
	}
	if p.maxTasks < 1 {
		p.maxTasks = DefaultMaxTasks
	}
	if p.maxParallel < 1 {
		p.maxParallel = DefaultMaxParallelTasks
	}
	p.prompts = orPrompts(p.prompts)
	p.logger = orLogger(p.logger)
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
// and their summed Usage. Errors: the model client's (see Client.Complete), and ctx's,
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
	f.ToolCalls = r.toolCalls()
	collectEntities(&f, f.ToolCalls)
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

func (p *Planner) newRun(pr conversation.Prompt) (*planRun, error) {
	e := p.executor
	system, err := p.prompts.Render(prompts.PlannerSystem, prompts.PlannerSystemData{
		Date:       e.now().UTC().Format("Monday, 2 January 2006 (MST)"),
		Categories: promptCategories(e.policy.For(e.registry, pr.PolicyChannel()).Categories()),
		Summary:    pr.Summary,
		// The deployment's guidance helps the plan pick tool chains; each task's
		// executor run reads it too (ExecutorSystemData.Instructions).
		Instructions: e.instr.For(pr.PolicyChannel()),
	})
	if err != nil {
		return nil, fmt.Errorf("agents: planner: %w", err)
	}
	base := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: system}}
	base = AppendHistory(base, pr.History)
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

// understand runs the understand phase.
func (r *planRun) understand(ctx context.Context) error {
	msgs, err := r.phase(prompts.PlannerUnderstand, prompts.PlannerUnderstandData{
		Request: r.prompt.Text, ToolName: CommitUnderstandingTool,
	})
	if err != nil {
		return err
	}
	err = r.commit(ctx, "understand", "the understanding of the request", r.p.smallModel, msgs, understandingTool(), func(args json.RawMessage) (err error) {
		r.intent, r.entities, err = parseUnderstanding(args)
		return err
	})
	if errors.Is(err, ErrNoCommit) {
		r.log.WarnContext(ctx, "planner: no understanding of the request; planning from the request itself", slog.Any("err", err))
		r.intent, r.entities = textcut.BytesMark(oneLine(r.prompt.Text), maxPlanText, textcut.Truncated), nil
		return nil
	}
	return err
}

// plan runs the plan phase and returns the first round's tasks.
func (r *planRun) plan(ctx context.Context) ([]*taskRun, error) {
	msgs, err := r.phase(prompts.PlannerPlan, prompts.PlannerPlanData{
		Request: r.prompt.Text, Intent: r.intent, Entities: r.entities,
		MaxTasks: r.p.maxTasks, ToolName: CommitPlanTool,
	})
	if err != nil {
		return nil, err
	}
	var tasks []prompts.PlanTask
	err = r.commit(ctx, "plan", "the plan", r.p.model, msgs, planTool(r.p.maxTasks), func(args json.RawMessage) error {
		var in struct {
			Tasks function.List[taskArg] `json:"tasks"`
		}
		if err := function.Decode(args, &in); err != nil {
			return err
		}
		var err error
		tasks, err = checkTasks(in.Tasks, r.byID, r.p.maxTasks)
		return err
	})
	if errors.Is(err, ErrNoCommit) {
		r.log.WarnContext(ctx, "planner: no valid plan; running the request as a single task", slog.Any("err", err))
		tasks = []prompts.PlanTask{{ID: "answer", Description: "Find what is needed to answer the person's request below, completely."}}
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return r.add(tasks), nil
}

// add records tasks as planned and returns their runs.
func (r *planRun) add(tasks []prompts.PlanTask) []*taskRun {
	out := make([]*taskRun, len(tasks))
	for i, t := range tasks {
		out[i] = &taskRun{PlanTask: t}
		r.tasks = append(r.tasks, out[i])
		r.byID[strings.ToLower(t.ID)] = out[i]
	}
	return out
}

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
	o.findings, o.err = r.p.executor.execute(ctx, conversation.Prompt{
		Key: r.prompt.Key, ContextChannelID: r.prompt.ContextChannelID, Summary: r.prompt.Summary, UserID: r.prompt.UserID, Text: text,
	}, nil, false, tainted)
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

// reflect runs the reflect phase with left more rounds allowed. next holds the new
// tasks to run (none when answered, or when left is 0).
func (r *planRun) reflect(ctx context.Context, left int) (answered bool, missing string, next []*taskRun, err error) {
	results := r.results()
	msgs, err := r.phase(prompts.PlannerReflect, prompts.PlannerReflectData{
		Request: r.prompt.Text, Intent: r.intent, Results: results,
		RoundsLeft: left, MaxTasks: r.p.maxTasks, ToolName: CommitReflectionTool,
	})
	if err != nil {
		return false, "", nil, err
	}
	var tasks []prompts.PlanTask
	err = r.commit(ctx, "reflect", "the check of the results", r.p.model, msgs, reflectionTool(r.p.maxTasks), func(args json.RawMessage) error {
		var in struct {
			Answered function.Bool          `json:"answered"`
			Missing  string                 `json:"missing"`
			NewTasks function.List[taskArg] `json:"new_tasks"`
		}
		if err := function.Decode(args, &in); err != nil {
			return err
		}
		answered, missing, tasks = bool(in.Answered), textcut.BytesMark(oneLine(in.Missing), maxPlanText, textcut.Truncated), nil
		if answered || left == 0 || len(in.NewTasks) == 0 {
			return nil
		}
		var err error
		tasks, err = checkTasks(in.NewTasks, r.byID, r.p.maxTasks)
		return err
	})
	if errors.Is(err, ErrNoCommit) {
		r.log.WarnContext(ctx, "planner: no valid reflection; answering from the results", slog.Any("err", err))
		return true, "", nil, nil
	}
	if err != nil {
		return false, "", nil, err
	}
	return answered, missing, r.add(tasks), nil
}

// results returns every finished task's result, in the order the tasks were planned.
func (r *planRun) results() []prompts.TaskResult {
	var out []prompts.TaskResult
	for _, t := range r.tasks {
		if t.done {
			out = append(out, t.result())
		}
	}
	return out
}

// answer runs the answer phase: one call without tools, asked again once when it comes
// back empty.
func (r *planRun) answer(ctx context.Context, missing string) error {
	msgs, err := r.phase(prompts.PlannerAnswer, prompts.PlannerAnswerData{
		Request: r.prompt.Text, Intent: r.intent, Results: r.results(), Missing: missing,
	})
	if err != nil {
		return err
	}
	req := openai.ChatCompletionRequest{Model: r.p.model, Messages: msgs}
	for try := 1; ; try++ {
		comp, err := r.p.client.Complete(ctx, req)
		r.f.Steps++
		r.f.Usage = r.f.Usage.Add(comp.Usage)
		if err == nil && strings.TrimSpace(comp.Content) == "" {
			err = ErrEmptyResponse
		}
		if errors.Is(err, ErrEmptyResponse) && try == 1 {
			r.log.WarnContext(ctx, "planner: empty answer; asking again")
			continue
		}
		if err != nil {
			return fmt.Errorf("agents: planner answer: %w", err)
		}
		r.f.Answer = comp.Content
		r.f.Truncated = r.f.Truncated || comp.Truncated
		return nil
	}
}

// toolCalls returns every task's tool calls, tasks in the order they were planned.
func (r *planRun) toolCalls() []conversation.ToolCall {
	var out []conversation.ToolCall
	for _, t := range r.tasks {
		out = append(out, t.findings.ToolCalls...)
	}
	return out
}

// commit makes the phase's forced calls of tool (a CommitLoop) until accept takes the
// arguments of one, reminding the model at most maxReminders times; then it returns a
// *CommitError (ErrNoCommit) whose UserMessage names what was not saved. name is the
// phase, for errors and logs. Every call counts in r.f.
func (r *planRun) commit(ctx context.Context, name, what, model string, msgs []openai.ChatCompletionMessage, tool openai.FunctionDefinition, accept func(json.RawMessage) error) error {
	res, err := CommitLoop{
		Client: r.p.client, Model: model, Prompts: r.p.prompts, Tool: tool, Accept: accept,
		Reminders: r.p.maxReminders, Log: r.log.With(slog.String("phase", name)),
		Warning: "planner: the model did not commit its work", ErrPrefix: "agents: planner " + name,
		UserMessage: NotSaved(what),
	}.Run(ctx, msgs)
	r.f.Steps += res.Calls
	r.f.Usage = r.f.Usage.Add(res.Usage)
	return err
}

// taskArg is a task as the model writes it in commit_plan and commit_reflection.
type taskArg struct {
	ID          string     `json:"id"`
	Description string     `json:"description"`
	DependsOn   stringList `json:"depends_on"`
}

// stringList is a list of strings (task ids, entities) that may also arrive as a
// single string ("a" or "a, b"), as a string holding a JSON array, or as null.
type stringList []string

func (l *stringList) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if s, ok := function.Unquote(data); ok {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "[") {
			data = []byte(s)
		} else {
			*l = nil
			for id := range strings.SplitSeq(s, ",") {
				if id = strings.TrimSpace(id); id != "" {
					*l = append(*l, id)
				}
			}
			return nil
		}
	}
	if bytes.Equal(data, []byte("null")) {
		*l = nil
		return nil
	}
	var ids []string
	if err := json.Unmarshal(data, &ids); err != nil {
		return errors.New("expected a list of strings")
	}
	*l = ids
	return nil
}

// checkTasks validates tasks the model proposed against the tasks planned before
// (planned, by lower-case id) and returns them with canonical ids and dependencies.
// Rejected: no tasks, more than maxTasks, a task without a description, an id used
// twice or by an earlier task, a dependency on an unknown task, and a cycle. A task
// without an id gets "t" and its position.
func checkTasks(in []taskArg, planned map[string]*taskRun, maxTasks int) ([]prompts.PlanTask, error) {
	switch n := len(in); {
	case n == 0:
		return nil, errors.New("there are no tasks; give at least one")
	case n > maxTasks:
		return nil, fmt.Errorf("there are %d tasks; at most %d are allowed, so merge some", n, maxTasks)
	}
	canonical := map[string]string{} // lower-case id → id, of every task planned
	for id, t := range planned {
		canonical[id] = t.ID
	}
	out := make([]prompts.PlanTask, len(in))
	fresh := map[string]bool{} // lower-case ids of the new tasks
	for i, t := range in {
		id := textcut.BytesMark(oneLine(t.ID), maxTaskID, textcut.Truncated)
		if id == "" {
			id = fmt.Sprintf("t%d", i+1)
		}
		key := strings.ToLower(id)
		if _, dup := canonical[key]; dup {
			if fresh[key] {
				return nil, fmt.Errorf("the id %q is used by two tasks; every task needs its own id", id)
			}
			return nil, fmt.Errorf("the id %q is already used by an earlier task; give new tasks new ids", id)
		}
		canonical[key], fresh[key] = id, true
		desc := strings.TrimSpace(t.Description)
		if desc == "" {
			return nil, fmt.Errorf("task %q has no description", id)
		}
		out[i] = prompts.PlanTask{ID: id, Description: textcut.BytesMark(desc, maxPlanText, textcut.Truncated)}
	}
	for i, t := range in {
		for _, dep := range t.DependsOn {
			d, ok := canonical[strings.ToLower(strings.TrimSpace(dep))]
			if !ok {
				return nil, fmt.Errorf("task %q depends on %q, which is not a task (the tasks are: %s)",
					out[i].ID, dep, strings.Join(slices.Sorted(maps.Values(canonical)), ", "))
			}
			if !slices.Contains(out[i].DependsOn, d) {
				out[i].DependsOn = append(out[i].DependsOn, d)
			}
		}
	}
	if cycle := findCycle(out); cycle != nil {
		if len(cycle) == 2 {
			return nil, fmt.Errorf("task %q depends on itself, so it could never start; remove that dependency", cycle[0])
		}
		return nil, fmt.Errorf("the tasks %s depend on each other in a cycle, so none of them could start; remove a dependency to break it",
			strings.Join(cycle, " → "))
	}
	return out, nil
}

// findCycle returns a cycle among the dependencies of tasks, as ids from a task back
// to itself ("a", "b", "a"), or nil when there is none. Dependencies on tasks outside
// tasks (done in earlier rounds) cannot be part of a cycle.
func findCycle(tasks []prompts.PlanTask) []string {
	index := map[string]int{}
	for i, t := range tasks {
		index[t.ID] = i
	}
	const (
		unvisited = iota
		visiting
		visited
	)
	state := make([]int, len(tasks))
	var path []string
	var visit func(i int) []string
	visit = func(i int) []string {
		state[i] = visiting
		path = append(path, tasks[i].ID)
		for _, dep := range tasks[i].DependsOn {
			j, ok := index[dep]
			if !ok {
				continue
			}
			switch state[j] {
			case visiting:
				start := slices.Index(path, dep)
				return append(slices.Clone(path[start:]), dep)
			case unvisited:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = visited
		return nil
	}
	for i := range tasks {
		if state[i] == unvisited {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

// parseUnderstanding reads commit_understanding's arguments: an intent (required) and
// entities (each one line, at most maxEntities).
func parseUnderstanding(args json.RawMessage) (intent string, entities []string, err error) {
	var in struct {
		Intent   string     `json:"intent"`
		Entities stringList `json:"entities"`
	}
	if err := function.Decode(args, &in); err != nil {
		return "", nil, err
	}
	intent = textcut.BytesMark(oneLine(in.Intent), maxPlanText, textcut.Truncated)
	if intent == "" {
		return "", nil, errors.New(`"intent" is empty; say in one sentence what the person wants`)
	}
	for _, e := range in.Entities {
		if e = textcut.BytesMark(oneLine(e), maxEntity, textcut.Truncated); e != "" && len(entities) < maxEntities {
			entities = append(entities, e)
		}
	}
	return intent, entities, nil
}

func understandingTool() openai.FunctionDefinition {
	return function.Define(CommitUnderstandingTool,
		"Save what the request means: the person's intent and the things it refers to.",
		function.Object(function.Schema{
			"intent": function.String("one sentence: what the person wants to know or get done"),
			"entities": function.Schema{
				"type":        "array",
				"description": "the things the request is about (ids, titles, people, products, dates), one short item each; [] when none",
				"items":       function.Schema{"type": "string"},
			},
		}))
}

// taskSchema is the schema of one task in commit_plan and commit_reflection.
func taskSchema() function.Schema {
	return function.Object(function.Schema{
		"id":          function.String(`a short id of letters, digits and "_", unique in the plan`),
		"description": function.String("what to find or do and what to report, self-contained: the task's agent sees nothing else but the results of the tasks it depends on"),
		"depends_on": function.Schema{
			"type":        "array",
			"description": "the ids of the tasks whose results this task needs; [] when none",
			"items":       function.Schema{"type": "string"},
		},
	})
}

func planTool(maxTasks int) openai.FunctionDefinition {
	return function.Define(CommitPlanTool,
		"Save the plan: the tasks that together find what the answer needs.",
		function.Object(function.Schema{"tasks": function.Schema{
			"type":        "array",
			"description": fmt.Sprintf("1 to %d tasks, in the order they should start", maxTasks),
			"minItems":    1,
			"maxItems":    maxTasks,
			"items":       taskSchema(),
		}}))
}

func reflectionTool(maxTasks int) openai.FunctionDefinition {
	return function.Define(CommitReflectionTool,
		"Save whether the task results answer the request and, when not, what is missing and the new tasks that would find it.",
		function.Object(function.Schema{
			"answered": function.Schema{"type": "boolean", "description": "true when the results are enough to answer the request well"},
			"missing":  function.String(`what is still missing; "" when answered`),
			"new_tasks": function.Schema{
				"type":        "array",
				"description": fmt.Sprintf("at most %d new tasks with new ids; [] when answered or when nothing more can help", maxTasks),
				"maxItems":    maxTasks,
				"items":       taskSchema(),
			},
		}))
}

// The strategies of the assistant pipeline, for RouterConfig.
const (
	// StrategyReAct answers with the ReAct executor.
	StrategyReAct = "react"
	// StrategyPlanner answers with the Planner.
	StrategyPlanner = "planner"
	// StrategyAuto lets the small model choose between the two for each request.
	StrategyAuto = "auto"
)

// ParseStrategy returns the strategy s names ("react", "planner" or "auto", in any
// case, surrounded by spaces or not); "" is StrategyReAct. Errors: any other name.
func ParseStrategy(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "":
		return StrategyReAct, nil
	case StrategyReAct, StrategyPlanner, StrategyAuto:
		return v, nil
	}
	return "", fmt.Errorf("agents: unknown strategy %q (want react, planner or auto)", s)
}

// ParseChannelStrategies reads per-channel strategies written as
// "C123:planner,C456:react" (the STRATEGY_CHANNELS setting): comma-separated pairs of
// a Slack channel id and a strategy, spaces allowed around each part. An empty s gives
// nil. Errors: a pair without ":", an empty channel id, a channel given twice, or an
// unknown strategy.
func ParseChannelStrategies(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	pairs, bad := ChannelPairs(s)
	if bad != "" {
		return nil, fmt.Errorf("agents: channel strategy %q: want CHANNEL_ID:STRATEGY", bad)
	}
	out := map[string]string{}
	for _, p := range pairs {
		ch, st := p[0], p[1]
		strategy, err := ParseStrategy(st)
		if err != nil {
			return nil, fmt.Errorf("agents: channel %s: %w", ch, err)
		}
		if _, dup := out[ch]; dup {
			return nil, fmt.Errorf("agents: channel %s is given two strategies", ch)
		}
		out[ch] = strategy
	}
	return out, nil
}

// RouterConfig configures a Router. ReAct is required; Planner is required when any
// strategy is "planner" or "auto", and Client and SmallModel when any is "auto".
type RouterConfig struct {
	// Client calls the small model that judges requests in "auto".
	Client Completer
	// SmallModel is the small model's name (OPENAI_SMALL_MODEL).
	SmallModel string
	// ReAct and Planner are the executors of the two strategies (an *Executor and a
	// *Planner).
	ReAct   conversation.Executor
	Planner conversation.Executor
	// Default is the deployment's strategy, "react", "planner" or "auto" (see
	// ParseStrategy; default "react").
	Default string
	// Channels maps a Slack channel id to the strategy of its conversations, which
	// overrides Default (see ParseChannelStrategies).
	Channels map[string]string
	// History is how many of the newest history messages the judge sees with a
	// request (default DefaultScopeHistory, 4; negative: none).
	History int
	// Prompts renders the judge's prompts; default prompts.MustParse().
	Prompts *prompts.Set
	// Logger receives the strategy chosen for each request (debug) and unreadable
	// judgements (warning); default slog.Default().
	Logger *slog.Logger
}

// Router picks the strategy of each request (README.md, "Strategies": per
// deployment or per channel by config, or by the model for a request it judges
// complex) and runs it. It implements conversation.Executor and is safe for concurrent
// use.
type Router struct {
	client   Completer
	model    string
	react    conversation.Executor
	planner  conversation.Executor
	def      string
	channels map[string]string
	history  int
	prompts  *prompts.Set
	logger   *slog.Logger
}

var _ conversation.Executor = (*Router)(nil)

// NewRouter returns a Router for cfg. Errors: an unknown strategy name, no ReAct
// executor, a strategy that needs the Planner without one, or "auto" without a Client
// and SmallModel.
func NewRouter(cfg RouterConfig) (*Router, error) {
	def, err := ParseStrategy(cfg.Default)
	if err != nil {
		return nil, err
	}
	r := &Router{
		client: cfg.Client, model: cfg.SmallModel, react: cfg.ReAct, planner: cfg.Planner,
		def: def, channels: map[string]string{},
		history: orDefault(cfg.History, DefaultScopeHistory),
		prompts: cfg.Prompts, logger: cfg.Logger,
	}
	used := []string{def}
	for ch, s := range cfg.Channels {
		st, err := ParseStrategy(s)
		if err != nil || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("agents: channel %s: unknown strategy %q (want react, planner or auto)", ch, s)
		}
		r.channels[strings.TrimSpace(ch)] = st
		used = append(used, st)
	}
	switch {
	case cfg.ReAct == nil:
		return nil, errors.New("agents: NewRouter needs RouterConfig.ReAct")
	case cfg.Planner == nil && (slices.Contains(used, StrategyPlanner) || slices.Contains(used, StrategyAuto)):
		return nil, errors.New("agents: the planner strategy is configured but RouterConfig.Planner is nil")
	case (cfg.Client == nil || cfg.SmallModel == "") && slices.Contains(used, StrategyAuto):
		return nil, errors.New("agents: the auto strategy needs RouterConfig.Client and SmallModel")
	}
	r.prompts = orPrompts(r.prompts)
	r.logger = orLogger(r.logger)
	return r, nil
}

// Strategy returns the configured strategy of channelID: its own, or the deployment's
// Default ("react", "planner" or "auto").
func (r *Router) Strategy(channelID string) string {
	if s, ok := r.channels[channelID]; ok {
		return s
	}
	return r.def
}

// Execute runs p with the strategy of its channel (Strategy of p.PolicyChannel()), and
// a p.Resume with the ReAct executor, the one strategy that stops for a confirmation. In
// "auto" the small model first judges the request, with the last few messages of
// the history, and calls commit_route, which tool_choice forces, with "react" or
// "planner": anything else — another value, no call, an empty response or a failed
// model call — chooses react (logged as a warning). The judge's model call counts in
// the Findings' Steps and Usage. Errors: the chosen executor's, and ctx's when it ends
// during the judgement.
func (r *Router) Execute(ctx context.Context, p conversation.Prompt, progress conversation.Progress) (conversation.Findings, error) {
	if p.Resume != nil {
		f, err := r.react.Execute(ctx, p, progress) // only the ReAct executor stops for a confirmation
		f.Strategy = StrategyReAct
		return f, err
	}
	strategy := r.Strategy(p.PolicyChannel())
	var judged conversation.Findings
	if strategy == StrategyAuto {
		var reason string
		var err error
		strategy, reason, err = r.judge(ctx, p, &judged)
		if err != nil {
			return judged, err
		}
		r.logger.DebugContext(ctx, "strategy chosen by the model", slog.String("conversation", p.Key.String()),
			slog.String("strategy", strategy), slog.String("reason", reason))
	}
	exec := r.react
	if strategy == StrategyPlanner {
		exec = r.planner
	}
	f, err := exec.Execute(ctx, p, progress)
	f.Strategy = strategy
	f.Steps += judged.Steps
	f.Usage = f.Usage.Add(judged.Usage)
	return f, err
}

// judge asks the small model which strategy fits p, counting its call in f.
func (r *Router) judge(ctx context.Context, p conversation.Prompt, f *conversation.Findings) (strategy, reason string, err error) {
	log := r.logger.With(slog.String("conversation", p.Key.String()))
	system, err := r.prompts.Render(prompts.PlannerRoute, prompts.PlannerRouteData{ToolName: CommitRouteTool})
	if err != nil {
		return "", "", fmt.Errorf("agents: router: %w", err)
	}
	data := prompts.PlannerRouteRequestData{Text: p.Text}
	if r.history > 0 {
		for _, m := range p.History[max(len(p.History)-r.history, 0):] {
			role := "user"
			if m.Role == conversation.RoleAssistant {
				role = "assistant"
			}
			data.Recent = append(data.Recent, prompts.Turn{Role: role, Text: textcut.BytesMark(oneLine(m.Text), 500, textcut.Truncated)})
		}
	}
	user, err := r.prompts.Render(prompts.PlannerRouteRequest, data)
	if err != nil {
		return "", "", fmt.Errorf("agents: router: %w", err)
	}
	tool := routeTool()
	comp, err := r.client.Complete(ctx, openai.ChatCompletionRequest{
		Model: r.model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
		Tools:      []openai.Tool{{Type: openai.ToolTypeFunction, Function: &tool}},
		ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: tool.Name}},
	})
	f.Steps++
	f.Usage = f.Usage.Add(comp.Usage)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", "", fmt.Errorf("agents: router: %w", ctxErr)
		}
		log.WarnContext(ctx, "router: the model call failed; using react", slog.Any("err", err))
		return StrategyReAct, "the judgement failed", nil
	}
	for _, tc := range comp.ToolCalls {
		if tc.Function.Name != CommitRouteTool {
			continue
		}
		var in struct {
			Strategy string `json:"strategy"`
			Reason   string `json:"reason"`
		}
		if function.Decode(json.RawMessage(tc.Function.Arguments), &in) != nil {
			continue
		}
		switch s := strings.ToLower(strings.TrimSpace(in.Strategy)); s {
		case StrategyReAct, StrategyPlanner:
			return s, textcut.BytesMark(oneLine(in.Reason), 300, textcut.Truncated), nil
		}
	}
	log.WarnContext(ctx, "router: unreadable judgement; using react",
		slog.String("content", textcut.BytesMark(comp.Content, 200, textcut.Truncated)), slog.Int("tool_calls", len(comp.ToolCalls)))
	return StrategyReAct, "unreadable judgement", nil
}

func routeTool() openai.FunctionDefinition {
	strategy := function.String("react for most requests; planner only for a complex request that needs several separate investigations combined")
	strategy["enum"] = []string{StrategyReAct, StrategyPlanner}
	return function.Define(CommitRouteTool,
		"Save how the assistant should work on the message.",
		function.Object(function.Schema{"strategy": strategy, "reason": function.String("one short sentence explaining the choice")}))
}
