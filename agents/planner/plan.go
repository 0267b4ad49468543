package planner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"
	"github.com/threadwright/threadwright/agents/function"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// The planner's commit functions, which tool_choice forces. Their arguments:
//
//	commit_understanding  {"intent": "…", "entities": ["…", …]}
//	commit_plan           {"tasks": [{"id": "…", "description": "…", "depends_on": ["…"],
//	                                  "type": "tool"|"reasoning", "tools": ["…"]}, …]}
//	commit_reflection     {"answered": true|false, "missing": "…", "new_tasks": [<task>, …]}
//
// The router's is CommitRouteTool.
const (
	CommitUnderstandingTool = "commit_understanding"
	CommitPlanTool          = "commit_plan"
	CommitReflectionTool    = "commit_reflection"
)

// Bounds of what a plan holds, in bytes.
const (
	maxPlanText = 2000 // a task's description, the intent, the missing note
	maxEntity   = 200  // one entity
	maxEntities = 20
	maxTaskID   = 64
)

// taskArg is a task as the model writes it in commit_plan and commit_reflection.
type taskArg struct {
	ID          string     `json:"id"`
	Description string     `json:"description"`
	DependsOn   stringList `json:"depends_on"`
	// Type and Tools came later: a task without them (an older model's or plan's)
	// is a tool task offered every tool.
	Type  string     `json:"type"`
	Tools stringList `json:"tools"`
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
		typ, err := taskType(t.Type)
		if err != nil {
			return nil, fmt.Errorf("task %q: %w", id, err)
		}
		out[i] = prompts.PlanTask{ID: id, Description: textcut.BytesMark(desc, maxPlanText, textcut.Truncated), Type: typ}
		if typ == prompts.TaskTool {
			out[i].Tools = t.Tools
		}
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

// taskType returns the canonical type of a task the model wrote: TaskTool for
// "tool" or none (a plan from before task types), TaskReasoning for "reasoning",
// in any case; anything else is an error the model is reminded of.
func taskType(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", prompts.TaskTool, "tools":
		return prompts.TaskTool, nil
	case prompts.TaskReasoning:
		return prompts.TaskReasoning, nil
	}
	return "", fmt.Errorf(`its type is %q; use "tool" or "reasoning"`, s)
}

// selectTools keeps, of each tool task's Tools, the names in offered (the tools the
// channel may use), each once, in the plan's order, and returns the names dropped
// per task id. A tool task whose selection ends up empty is offered every tool
// (docs/architecture.md, "Assistant pipeline").
func selectTools(tasks []prompts.PlanTask, offered []string) (dropped map[string][]string) {
	for i := range tasks {
		var keep []string
		for _, name := range tasks[i].Tools {
			name = strings.TrimSpace(name)
			switch {
			case name == "" || slices.Contains(keep, name):
			case slices.Contains(offered, name):
				keep = append(keep, name)
			default:
				if dropped == nil {
					dropped = map[string][]string{}
				}
				dropped[tasks[i].ID] = append(dropped[tasks[i].ID], name)
			}
		}
		tasks[i].Tools = keep
	}
	return dropped
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
		"type": function.Schema{
			"type":        "string",
			"enum":        []string{prompts.TaskTool, prompts.TaskReasoning},
			"description": `"tool" when the task looks something up or acts with tools; "reasoning" when it only thinks over the request and the results it depends on (no tools)`,
		},
		"tools": function.Schema{
			"type":        "array",
			"description": `for a "tool" task, the names of the tools it needs, from the tools listed; [] offers it every tool, and a "reasoning" task has none`,
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
