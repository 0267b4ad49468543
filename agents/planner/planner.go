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
// most MaxReminders times. Each task runs as one turn of the ReAct Executor (offered
// no tools for a reasoning task, only its selected tools for a tool task), whose
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

	// offered are the names of the tools the prompt's channel may use, which a tool
	// task may select (selectTools).
	offered []string

	intent   string
	entities []string
	// tasks are every task planned, in the order they were planned, round after
	// round; byID finds them by their canonical id in lower case.
	tasks []*taskRun
	byID  map[string]*taskRun
	// tainted is set once a finished task called an untrusted tool: the tasks that
	// start after it may read its result, so they run tainted (docs/tools.md, "Tool policy").
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
	if m := agents.FocusMessage(pr.Focus); m != nil { // every phase and task sees the conversation's focus
		base = append(base, *m)
	}
	var offered []string
	for _, c := range e.Categories {
		for _, t := range c.Tools {
			offered = append(offered, t.Name)
		}
	}
	return &planRun{
		p: p, prompt: pr, base: slices.Clip(base), byID: map[string]*taskRun{}, offered: offered,
		log: p.logger.With(slog.String("conversation", pr.Key.String()), slog.String("strategy", StrategyPlanner)),
	}, nil
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

// add records tasks as planned and returns their runs. A tool task's selection keeps
// only tools the channel may use; the names dropped are logged.
func (r *planRun) add(ctx context.Context, tasks []prompts.PlanTask) []*taskRun {
	for id, names := range selectTools(tasks, r.offered) {
		r.log.WarnContext(ctx, "planner: a task selected tools that are not offered; dropped them",
			slog.String("task", id), slog.Any("tools", names))
	}
	out := make([]*taskRun, len(tasks))
	for i, t := range tasks {
		out[i] = &taskRun{PlanTask: t}
		r.tasks = append(r.tasks, out[i])
		r.byID[strings.ToLower(t.ID)] = out[i]
	}
	return out
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
