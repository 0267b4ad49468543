package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/sashabaranov/go-openai"
	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/function"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

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
	if errors.Is(err, agents.ErrNoCommit) {
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
	if errors.Is(err, agents.ErrNoCommit) {
		r.log.WarnContext(ctx, "planner: no valid plan; running the request as a single task", slog.Any("err", err))
		tasks = []prompts.PlanTask{{ID: "answer", Description: "Find what is needed to answer the person's request below, completely.", Type: prompts.TaskTool}}
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return r.add(ctx, tasks), nil
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
	if errors.Is(err, agents.ErrNoCommit) {
		r.log.WarnContext(ctx, "planner: no valid reflection; answering from the results", slog.Any("err", err))
		return true, "", nil, nil
	}
	if err != nil {
		return false, "", nil, err
	}
	return answered, missing, r.add(ctx, tasks), nil
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
			err = agents.ErrEmptyResponse
		}
		if errors.Is(err, agents.ErrEmptyResponse) && try == 1 {
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
