package planner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/planner"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// typedTask is a task of commit_plan with the task type and the tool selection.
type typedTask struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	DependsOn   []string `json:"depends_on"`
	Type        string   `json:"type,omitempty"`
	Tools       []string `json:"tools,omitempty"`
}

func typedPlan(tasks ...typedTask) openaitest.Response {
	return commit(planner.CommitPlanTool, map[string]any{"tasks": tasks})
}

// TestPlannerTaskTypes: a tool task is offered only the tools it selected (an
// unknown name is dropped with a log line), a reasoning task's chat completion offers
// no tools at all, and a task without a type (a plan of before task types) is a tool
// task offered every tool.
func TestPlannerTaskTypes(t *testing.T) {
	srv := MustServer(t)
	logger, logs := testLogger()
	noop := func(name string) agents.ToolFunc {
		return func(context.Context, json.RawMessage) (string, error) { return name + " ran", nil }
	}
	pl := newPlanner(t, srv, map[string]agents.ToolFunc{"lookup_part": noop("lookup_part"), "search_web": noop("search_web")},
		func(c *planner.Config) { c.Logger = logger })
	m := newModel(t, srv)
	m.script(planner.CommitUnderstandingTool, understanding("Check whether part P-7 fits model WM-100."))
	m.script(planner.CommitPlanTool, typedPlan(
		typedTask{ID: "find", Description: "Look up part P-7.", DependsOn: []string{}, Type: "tool", Tools: []string{"lookup_part", "no_such_tool"}},
		typedTask{ID: "judge", Description: "Decide from the part's data whether it fits WM-100.", DependsOn: []string{"find"}, Type: "Reasoning"},
		typedTask{ID: "old", Description: "Anything else worth knowing.", DependsOn: []string{}},
	))
	m.on("task:find", toolThenAnswer("lookup_part", "P-7 fits WM-100 and WM-200."))
	m.on("task:judge", func(r openaitest.Request) openaitest.Response { return text("Yes, it fits.") })
	m.on("task:old", func(r openaitest.Request) openaitest.Response { return text("Nothing else.") })
	m.script(planner.CommitReflectionTool, reflection(true, ""))
	m.script("answer", text("Yes: P-7 fits the WM-100."))

	f, err := pl.Execute(context.Background(), prompt("Does P-7 fit my WM-100?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Answer != "Yes: P-7 fits the WM-100." {
		t.Fatalf("answer %q", f.Answer)
	}

	find := requestsOf(srv, "task:find")
	if len(find) != 2 {
		t.Fatalf("%d requests of the tool task, want 2 (the call, the answer)", len(find))
	}
	for _, r := range find {
		if got := r.ToolNames(); !slices.Equal(got, []string{"lookup_part"}) {
			t.Errorf("the tool task was offered %v, want only its selection [lookup_part]", got)
		}
	}
	contains(t, "the tool task's system prompt", find[0].SystemPrompt(), "lookup_part")
	lacks(t, "the tool task's system prompt", find[0].SystemPrompt(), "search_web", "current_time")

	judge := requestsOf(srv, "task:judge")
	if len(judge) != 1 {
		t.Fatalf("%d requests of the reasoning task, want 1", len(judge))
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(judge[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if tools, ok := body["tools"]; ok {
		t.Errorf("the reasoning task's chat completion offers tools: %s", tools)
	}
	if _, ok := body["tool_choice"]; ok {
		t.Errorf("the reasoning task's chat completion has a tool_choice")
	}
	contains(t, "the reasoning task's request", judge[0].LastUserMessage(), "this task has no tools", "P-7 fits WM-100 and WM-200.")

	old := requestsOf(srv, "task:old")
	if got := old[0].ToolNames(); !slices.Equal(got, []string{"calculate", "current_time", "lookup_part", "search_web"}) {
		t.Errorf("a task without a type was offered %v, want every tool", got)
	}
	if len(f.ToolCalls) != 1 || f.ToolCalls[0].Name != "lookup_part" {
		t.Errorf("tool calls %+v, want only the tool task's lookup_part", f.ToolCalls)
	}
	if s := logs.String(); !strings.Contains(s, "no_such_tool") || !strings.Contains(s, "task=find") {
		t.Errorf("the dropped tool name was not logged: %s", s)
	}

	// The plan's schema asks for the type and the tools of each task.
	planReq := requestsOf(srv, planner.CommitPlanTool)[0]
	if !bytes.Contains(planReq.Body, []byte(`"enum":["tool","reasoning"]`)) {
		t.Errorf("commit_plan's schema has no task type enum: %s", planReq.Body)
	}
	contains(t, "the plan request", planReq.LastUserMessage(), `- type: "tool"`, "- tools:")
}

// TestPlannerRejectsUnknownTaskType: a task type other than tool or reasoning is
// sent back to the model with a reminder, and the corrected plan runs.
func TestPlannerRejectsUnknownTaskType(t *testing.T) {
	srv := MustServer(t)
	pl := newPlanner(t, srv, nil)
	m := newModel(t, srv)
	m.script(planner.CommitUnderstandingTool, understanding("Say hello."))
	m.script(planner.CommitPlanTool,
		typedPlan(typedTask{ID: "hi", Description: "Greet.", DependsOn: []string{}, Type: "magic"}),
		typedPlan(typedTask{ID: "hi", Description: "Greet.", DependsOn: []string{}, Type: "reasoning"}),
	)
	m.on("task:hi", func(r openaitest.Request) openaitest.Response { return text("Hello.") })
	m.script(planner.CommitReflectionTool, reflection(true, ""))
	m.script("answer", text("Hello!"))
	if _, err := pl.Execute(context.Background(), prompt("hi"), nil); err != nil {
		t.Fatal(err)
	}
	reqs := requestsOf(srv, planner.CommitPlanTool)
	if len(reqs) != 2 {
		t.Fatalf("%d plan requests, want 2 (the rejected plan, the corrected one)", len(reqs))
	}
	contains(t, "the reminder", reqs[1].LastUserMessage(), `"magic"`, `use "tool" or "reasoning"`)
	if tools := requestsOf(srv, "task:hi")[0].ToolNames(); len(tools) != 0 {
		t.Errorf("the reasoning task was offered %v", tools)
	}
}
