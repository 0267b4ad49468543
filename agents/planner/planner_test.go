package planner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/planner"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// The planner tests script the model by what each request is: the commit function it
// forces (understanding, plan, reflection, route), a task's executor turn (by the
// task's id in its request) or the final answer (a request without tools). Tasks run
// in parallel, so a FIFO script would not do.

// forcedFunction returns the function a request's tool_choice forces; "" when none.
func forcedFunction(r openaitest.Request) string {
	var body struct {
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if json.Unmarshal(r.Body, &body) != nil {
		return ""
	}
	var choice struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(body.ToolChoice, &choice) != nil {
		return ""
	}
	return choice.Function.Name
}

// taskOf returns the id of the planner task an executor request works on; "" when
// the request is not a task's.
func taskOf(r openaitest.Request) string {
	for _, m := range r.Chat.Messages {
		if m.Role != "user" {
			continue
		}
		if _, rest, ok := strings.Cut(m.Content, "## The task ("); ok {
			id, _, _ := strings.Cut(rest, ")")
			return id
		}
	}
	return ""
}

// kindOf names what a request is: the forced function, "task:<id>", "answer", or "".
func kindOf(r openaitest.Request) string {
	if f := forcedFunction(r); f != "" {
		return f
	}
	if id := taskOf(r); id != "" {
		return "task:" + id
	}
	if len(r.Chat.Tools) == 0 && strings.HasPrefix(r.LastUserMessage(), "Phase: write the answer.") {
		return "answer"
	}
	return ""
}

// model answers requests by kind. A handler for a forced function that is a slice of
// responses answers its calls in order (the last one repeats).
type model struct {
	tb testing.TB

	mu       sync.Mutex
	handlers map[string]func(openaitest.Request) openaitest.Response
	scripts  map[string][]openaitest.Response
	calls    map[string]int
}

func newModel(tb testing.TB, srv *openaitest.Server) *model {
	m := &model{tb: tb, handlers: map[string]func(openaitest.Request) openaitest.Response{}, scripts: map[string][]openaitest.Response{}, calls: map[string]int{}}
	srv.Handle(m.answer)
	return m
}

// on sets the handler of kind.
func (m *model) on(kind string, h func(openaitest.Request) openaitest.Response) *model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handlers[kind] = h
	return m
}

// script sets the responses to kind's calls, in order.
func (m *model) script(kind string, rs ...openaitest.Response) *model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scripts[kind] = rs
	return m
}

func (m *model) answer(r openaitest.Request) openaitest.Response {
	kind := kindOf(r)
	m.mu.Lock()
	n := m.calls[kind]
	m.calls[kind]++
	h, rs := m.handlers[kind], m.scripts[kind]
	m.mu.Unlock()
	switch {
	case h != nil:
		return h(r)
	case len(rs) > 0:
		return rs[min(n, len(rs)-1)]
	}
	m.tb.Errorf("unexpected request %d (kind %q): last message %q", r.N, kind, r.LastUserMessage())
	return openaitest.Response{Status: 400, ErrorMessage: "unexpected request"}
}

// requests returns the requests of kind, in the order they arrived.
func requestsOf(srv *openaitest.Server, kind string) []openaitest.Request {
	var out []openaitest.Request
	for _, r := range srv.Requests() {
		if kindOf(r) == kind {
			out = append(out, r)
		}
	}
	return out
}

type planTask struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	DependsOn   []string `json:"depends_on"`
}

func understanding(intent string, entities ...string) openaitest.Response {
	return commit(planner.CommitUnderstandingTool, map[string]any{"intent": intent, "entities": append([]string{}, entities...)})
}

func plan(tasks ...planTask) openaitest.Response {
	return commit(planner.CommitPlanTool, map[string]any{"tasks": tasks})
}

func reflection(answered bool, missing string, tasks ...planTask) openaitest.Response {
	return commit(planner.CommitReflectionTool, map[string]any{"answered": answered, "missing": missing, "new_tasks": append([]planTask{}, tasks...)})
}

// toolThenAnswer is a task's executor turn: a call of tool, then answer once the
// tool's result is back.
func toolThenAnswer(tool, answer string) func(openaitest.Request) openaitest.Response {
	return func(r openaitest.Request) openaitest.Response {
		if len(r.ToolResults()) == 0 {
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: tool, Arguments: `{}`}}, Usage: openaitest.Usage{PromptTokens: 50, CompletionTokens: 5}}
		}
		return text(answer)
	}
}

func newPlanner(tb testing.TB, srv *openaitest.Server, tools map[string]agents.ToolFunc, edit ...func(*planner.Config)) *planner.Planner {
	tb.Helper()
	logger, _ := testLogger()
	cfg := planner.Config{
		Client:     newClient(tb, srv),
		Model:      "gpt-main",
		SmallModel: "gpt-small",
		Executor:   newExecutor(tb, srv, tools),
		Logger:     logger,
	}
	for _, f := range edit {
		f(&cfg)
	}
	return planner.New(cfg)
}

// barrier returns tools that each wait until all n of them are running: run one
// after another, the first would wait until its timeout and fail.
func barrier(n int, names ...string) map[string]agents.ToolFunc {
	var (
		mu      sync.Mutex
		arrived int
		open    = make(chan struct{})
	)
	tools := map[string]agents.ToolFunc{}
	for _, name := range names {
		tools[name] = func(ctx context.Context, _ json.RawMessage) (string, error) {
			mu.Lock()
			arrived++
			if arrived == n {
				close(open)
			}
			mu.Unlock()
			select {
			case <-open:
				return name + " passed the barrier", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
	}
	return tools
}

func TestPlannerDependentTasks(t *testing.T) {
	srv := MustServer(t)
	// A and C wait for each other in their tools: they must run at the same time. B
	// needs A's result.
	pl := newPlanner(t, srv, barrier(2, "alpha", "gamma"))
	m := newModel(t, srv)
	m.script(planner.CommitUnderstandingTool, understanding("Compare widget stock with the colour survey.", "widgets", "colour survey"))
	m.script(planner.CommitPlanTool, plan(
		planTask{ID: "A", Description: "Count the widgets in stock.", DependsOn: []string{}},
		planTask{ID: "B", Description: "Say which colour the counted widgets should be.", DependsOn: []string{"a"}},
		planTask{ID: "C", Description: "Read the colour survey.", DependsOn: []string{}},
	))
	m.on("task:A", toolThenAnswer("alpha", "A found 42 widgets."))
	m.on("task:C", toolThenAnswer("gamma", "C found: people like blue."))
	m.on("task:B", func(r openaitest.Request) openaitest.Response {
		contains(t, "task B's request", r.LastUserMessage(), "### A: Count the widgets in stock.\nA found 42 widgets.", "## The task (B)")
		lacks(t, "task B's request", r.LastUserMessage(), "people like blue")
		return text("B: the 42 widgets should be painted.")
	})
	m.script(planner.CommitReflectionTool, reflection(true, ""))
	m.script("answer", text("**42 widgets**, to be painted blue."))

	var progress statuses
	f, err := pl.Execute(context.Background(), prompt("How many widgets, and what colour?"), progress.Report)
	if err != nil {
		t.Fatal(err)
	}
	if f.Answer != "**42 widgets**, to be painted blue." || f.Truncated {
		t.Errorf("findings = %+v", f)
	}
	// understand, plan, A (2 calls), B, C (2 calls), reflect, answer.
	if f.Steps != 9 {
		t.Errorf("steps = %d, want 9", f.Steps)
	}
	// commit: 100+20; text: 90+10; a tool call: 50+5.
	want := conversation.Usage{PromptTokens: 3*100 + 4*90 + 2*50, CompletionTokens: 3*20 + 4*10 + 2*5}
	if f.Usage != want {
		t.Errorf("usage = %+v, want %+v", f.Usage, want)
	}
	var calls []string
	for _, tc := range f.ToolCalls {
		calls = append(calls, tc.Name+": "+tc.Result)
		if tc.Failed {
			t.Errorf("tool call failed: %+v", tc)
		}
	}
	if want := []string{"alpha: alpha passed the barrier", "gamma: gamma passed the barrier"}; !reflect.DeepEqual(calls, want) {
		t.Errorf("tool calls = %q, want %q (tasks in plan order)", calls, want)
	}

	// The phases: the small model understands, the main model plans and answers; the
	// plan sees the understanding; the answer sees every result.
	understand := requestsOf(srv, planner.CommitUnderstandingTool)[0]
	checkRequest(t, understand, "gpt-small", planner.CommitUnderstandingTool)
	contains(t, "the understanding request", understand.LastUserMessage(), "> How many widgets, and what colour?")
	contains(t, "the planner's system prompt", understand.SystemPrompt(), "- alpha: test tool alpha", "Tuesday, 14 May 2024 (UTC)")
	planReq := requestsOf(srv, planner.CommitPlanTool)[0]
	checkRequest(t, planReq, "gpt-main", planner.CommitPlanTool)
	contains(t, "the plan request", planReq.LastUserMessage(), "Intent: Compare widget stock with the colour survey.", "- colour survey", "at most 6 tasks")
	checkRequest(t, requestsOf(srv, planner.CommitReflectionTool)[0], "gpt-main", planner.CommitReflectionTool)
	answer := requestsOf(srv, "answer")[0]
	if answer.Chat.Model != "gpt-main" || len(answer.Chat.Tools) != 0 {
		t.Errorf("answer request: model %q, %d tools", answer.Chat.Model, len(answer.Chat.Tools))
	}
	contains(t, "the answer request", answer.LastUserMessage(),
		"### A: Count the widgets in stock.\nA found 42 widgets.",
		"### B: Say which colour the counted widgets should be.\nB: the 42 widgets should be painted.",
		"### C: Read the colour survey.\nC found: people like blue.")
	// A task's turn is the executor's, with its tools and its system prompt.
	taskA := requestsOf(srv, "task:A")[0]
	if taskA.Chat.Model != "gpt-main" || !slices.Contains(taskA.ToolNames(), "alpha") || !strings.Contains(taskA.SystemPrompt(), "## How to answer") {
		t.Errorf("task A's request: model %q, tools %v", taskA.Chat.Model, taskA.ToolNames())
	}

	// Each phase reported itself.
	list := progress.List
	if len(list) < 5 || list[0] != "Planning…" || list[1] != "Running 2 tasks…" ||
		!slices.Equal(list[len(list)-2:], []string{"Checking the answer…", "Writing the answer…"}) {
		t.Errorf("progress = %q", list)
	}
	for _, s := range list[2 : len(list)-2] {
		if !strings.HasPrefix(s, "Running ") {
			t.Errorf("progress = %q", list)
		}
	}
}

func TestPlannerMaxParallel(t *testing.T) {
	var (
		mu             sync.Mutex
		active, maxAct int
	)
	probe := func(context.Context, json.RawMessage) (string, error) {
		mu.Lock()
		active++
		maxAct = max(maxAct, active)
		mu.Unlock()
		defer func() { mu.Lock(); active--; mu.Unlock() }()
		return "probed", nil
	}
	srv := MustServer(t)
	pl := newPlanner(t, srv, map[string]agents.ToolFunc{"probe": probe}, func(c *planner.Config) { c.MaxParallel = 1 })
	m := newModel(t, srv)
	m.script(planner.CommitUnderstandingTool, understanding("probe thrice"))
	m.script(planner.CommitPlanTool, plan(planTask{ID: "p1", Description: "probe"}, planTask{ID: "p2", Description: "probe"}, planTask{ID: "p3", Description: "probe"}))
	for _, id := range []string{"p1", "p2", "p3"} {
		m.on("task:"+id, toolThenAnswer("probe", id+" done"))
	}
	m.script(planner.CommitReflectionTool, reflection(true, ""))
	m.script("answer", text("done"))
	var progress statuses
	if _, err := pl.Execute(context.Background(), prompt("probe"), progress.Report); err != nil {
		t.Fatal(err)
	}
	if maxAct != 1 {
		t.Errorf("%d tools ran at once, want 1", maxAct)
	}
	want := []string{"Planning…", "Running 1 task…", "Running 1 task (1 of 3 done)…", "Running 1 task (2 of 3 done)…", "Checking the answer…", "Writing the answer…"}
	if !slices.Equal(progress.List, want) {
		t.Errorf("progress = %q, want %q", progress.List, want)
	}
}

func TestPlannerReflection(t *testing.T) {
	t.Run("OneMoreRound", func(t *testing.T) {
		srv := MustServer(t)
		pl := newPlanner(t, srv, nil)
		m := newModel(t, srv)
		m.script(planner.CommitUnderstandingTool, understanding("Find the Q3 budget and who approved it."))
		m.script(planner.CommitPlanTool, plan(planTask{ID: "budget", Description: "Find the Q3 budget."}))
		m.script("task:budget", text("The Q3 budget is 1.2M."))
		m.on("task:approver", func(r openaitest.Request) openaitest.Response {
			contains(t, "the new task's request", r.LastUserMessage(), "The Q3 budget is 1.2M.", "Find who approved the 1.2M budget.")
			return text("Approved by <@U7>.")
		})
		m.script(planner.CommitReflectionTool,
			reflection(false, "who approved it", planTask{ID: "approver", Description: "Find who approved the 1.2M budget.", DependsOn: []string{"budget"}}),
			reflection(true, ""))
		m.script("answer", text("1.2M, approved by <@U7>."))
		var progress statuses
		f, err := pl.Execute(context.Background(), prompt("Q3 budget and approver?"), progress.Report)
		if err != nil {
			t.Fatal(err)
		}
		if f.Answer != "1.2M, approved by <@U7>." || f.Truncated || f.Steps != 7 {
			t.Errorf("findings = %+v", f)
		}
		refl := requestsOf(srv, planner.CommitReflectionTool)
		if len(refl) != 2 {
			t.Fatalf("%d reflections, want 2", len(refl))
		}
		contains(t, "the first reflection", refl[0].LastUserMessage(), "The Q3 budget is 1.2M.", "2 more rounds of new tasks may run.")
		lacks(t, "the first reflection", refl[0].LastUserMessage(), "### approver")
		contains(t, "the second reflection", refl[1].LastUserMessage(), "### approver: Find who approved the 1.2M budget.\nApproved by <@U7>.", "This is the last round of new tasks.")
		answer := requestsOf(srv, "answer")[0].LastUserMessage()
		contains(t, "the answer request", answer, "The Q3 budget is 1.2M.", "Approved by <@U7>.")
		lacks(t, "the answer request", answer, "Still missing")
		want := []string{"Planning…", "Running 1 task…", "Checking the answer…", "Running 1 task…", "Checking the answer…", "Writing the answer…"}
		if !slices.Equal(progress.List, want) {
			t.Errorf("progress = %q, want %q", progress.List, want)
		}
	})

	t.Run("RoundsRunOut", func(t *testing.T) {
		srv := MustServer(t)
		pl := newPlanner(t, srv, nil, func(c *planner.Config) { c.MaxRounds = 1 })
		m := newModel(t, srv)
		m.script(planner.CommitUnderstandingTool, understanding("Find the approver."))
		m.script(planner.CommitPlanTool, plan(planTask{ID: "t1", Description: "Look in the wiki."}))
		m.script("task:t1", text("Not in the wiki."))
		m.script("task:t2", text("Not in the tracker."))
		m.script(planner.CommitReflectionTool,
			reflection(false, "the approver", planTask{ID: "t2", Description: "Look in the tracker."}),
			reflection(false, "the approver, still", planTask{ID: "t3", Description: "Ask someone."}))
		m.script("answer", text("I could not find the approver."))
		f, err := pl.Execute(context.Background(), prompt("Who approved it?"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !f.Truncated || f.Answer != "I could not find the approver." {
			t.Errorf("findings = %+v, want Truncated", f)
		}
		if n := len(requestsOf(srv, "task:t3")); n != 0 {
			t.Errorf("task t3 ran %d times after the rounds ran out", n)
		}
		refl := requestsOf(srv, planner.CommitReflectionTool)
		contains(t, "the last reflection", refl[len(refl)-1].LastUserMessage(), "No more tasks can run")
		contains(t, "the answer request", requestsOf(srv, "answer")[0].LastUserMessage(), "Still missing after checking: the approver, still")
	})

	t.Run("NothingMoreToTry", func(t *testing.T) {
		srv := MustServer(t)
		pl := newPlanner(t, srv, nil)
		m := newModel(t, srv)
		m.script(planner.CommitUnderstandingTool, understanding("x"))
		m.script(planner.CommitPlanTool, plan(planTask{ID: "t1", Description: "Look."}))
		m.script("task:t1", text("Nothing found."))
		m.script(planner.CommitReflectionTool, reflection(false, "the data does not exist"))
		m.script("answer", text("There is no such data."))
		f, err := pl.Execute(context.Background(), prompt("x?"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.Truncated || len(requestsOf(srv, planner.CommitReflectionTool)) != 1 {
			t.Errorf("findings = %+v after %d reflections", f, len(requestsOf(srv, planner.CommitReflectionTool)))
		}
		contains(t, "the answer request", requestsOf(srv, "answer")[0].LastUserMessage(), "Still missing after checking: the data does not exist")
	})
}

func TestPlannerFailingTask(t *testing.T) {
	srv := MustServer(t)
	pl := newPlanner(t, srv, nil)
	m := newModel(t, srv)
	m.script(planner.CommitUnderstandingTool, understanding("Summarize the incident."))
	m.script(planner.CommitPlanTool, plan(
		planTask{ID: "logs", Description: "Read the incident logs."},
		planTask{ID: "summary", Description: "Summarize what the logs show.", DependsOn: []string{"logs"}},
	))
	m.script("task:logs", openaitest.Response{Status: 400, ErrorMessage: "context length exceeded"})
	m.on("task:summary", func(r openaitest.Request) openaitest.Response {
		contains(t, "the dependent task's request", r.LastUserMessage(), "### logs: Read the incident logs.\nFailed: ", "context length exceeded", "When one of them failed")
		return text("No logs to summarize.")
	})
	m.script(planner.CommitReflectionTool, reflection(true, ""))
	m.script("answer", text("I could not read the logs."))
	f, err := pl.Execute(context.Background(), prompt("What happened?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Answer != "I could not read the logs." {
		t.Errorf("findings = %+v", f)
	}
	contains(t, "the answer request", requestsOf(srv, "answer")[0].LastUserMessage(), "Failed: ", "context length exceeded", "No logs to summarize.")
}

func TestPlannerInvalidPlan(t *testing.T) {
	valid := plan(planTask{ID: "only", Description: "Do it."})
	for _, tc := range []struct {
		name    string
		plan    openaitest.Response
		problem string
	}{
		{"Cycle", plan(
			planTask{ID: "a", Description: "A", DependsOn: []string{"c"}},
			planTask{ID: "b", Description: "B", DependsOn: []string{"a"}},
			planTask{ID: "c", Description: "C", DependsOn: []string{"b"}},
			planTask{ID: "d", Description: "D"},
		), `the tasks a → c → b → a depend on each other in a cycle`},
		{"SelfDependency", plan(planTask{ID: "a", Description: "A", DependsOn: []string{"A"}}), `task "a" depends on itself`},
		{"UnknownDependency", plan(planTask{ID: "a", Description: "A"}, planTask{ID: "b", Description: "B", DependsOn: []string{"zzz"}}),
			`task "b" depends on "zzz", which is not a task (the tasks are: a, b)`},
		{"DuplicateID", plan(planTask{ID: "a", Description: "A"}, planTask{ID: "A", Description: "B"}), `the id "A" is used by two tasks`},
		{"TooMany", plan(
			planTask{ID: "a", Description: "A"}, planTask{ID: "b", Description: "B"}, planTask{ID: "c", Description: "C"},
			planTask{ID: "d", Description: "D"}, planTask{ID: "e", Description: "E"},
		), "there are 5 tasks; at most 4 are allowed"},
		{"NoTasks", plan(), "there are no tasks"},
		{"NoDescription", plan(planTask{ID: "a", Description: " "}), `task "a" has no description`},
		{"NotAnObject", commit(planner.CommitPlanTool, `[1,2]`), "the arguments are not a JSON object"},
		{"InText", text("1. Look it up. 2. Answer."), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := MustServer(t)
			pl := newPlanner(t, srv, nil, func(c *planner.Config) { c.MaxTasks = 4 })
			m := newModel(t, srv)
			m.script(planner.CommitUnderstandingTool, understanding("do it"))
			m.script(planner.CommitPlanTool, tc.plan, valid)
			m.script("task:only", text("done"))
			m.script(planner.CommitReflectionTool, reflection(true, ""))
			m.script("answer", text("Done."))
			f, err := pl.Execute(context.Background(), prompt("do it"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if f.Answer != "Done." || len(requestsOf(srv, "task:only")) != 1 {
				t.Errorf("findings = %+v", f)
			}
			plans := requestsOf(srv, planner.CommitPlanTool)
			if len(plans) != 2 {
				t.Fatalf("%d plan requests, want 2", len(plans))
			}
			reminder := plans[1].LastUserMessage()
			if tc.problem == "" {
				contains(t, "the reminder", reminder, "You answered without calling commit_plan")
				return
			}
			contains(t, "the reminder", reminder, "That was not saved: "+tc.problem, "Call commit_plan now")
			results := plans[1].ToolResults()
			if len(results) != 1 || !strings.Contains(results[0].Content, tc.problem) {
				t.Errorf("tool results = %+v", results)
			}
		})
	}

	t.Run("NewTasksReuseAnID", func(t *testing.T) {
		srv := MustServer(t)
		pl := newPlanner(t, srv, nil)
		m := newModel(t, srv)
		m.script(planner.CommitUnderstandingTool, understanding("do it"))
		m.script(planner.CommitPlanTool, valid)
		m.script("task:only", text("half done"))
		m.script("task:more", text("done"))
		m.script(planner.CommitReflectionTool,
			reflection(false, "the rest", planTask{ID: "only", Description: "Again."}),
			reflection(false, "the rest", planTask{ID: "more", Description: "The rest.", DependsOn: []string{"ONLY"}}),
			reflection(true, ""))
		m.script("answer", text("Done."))
		if _, err := pl.Execute(context.Background(), prompt("do it"), nil); err != nil {
			t.Fatal(err)
		}
		refl := requestsOf(srv, planner.CommitReflectionTool)
		if len(refl) != 3 {
			t.Fatalf("%d reflections, want 3", len(refl))
		}
		contains(t, "the reminder", refl[1].LastUserMessage(), `the id "only" is already used by an earlier task`)
		contains(t, "task more's request", requestsOf(srv, "task:more")[0].LastUserMessage(), "### only: Do it.\nhalf done")
	})

	t.Run("WeakModelArguments", func(t *testing.T) {
		// depends_on as a string, entities as one string, the plan encoded twice, a
		// task without an id: read, not rejected.
		srv := MustServer(t)
		pl := newPlanner(t, srv, nil)
		m := newModel(t, srv)
		m.script(planner.CommitUnderstandingTool, commit(planner.CommitUnderstandingTool, `{"intent": "Compare", "entities": "red, blue"}`))
		m.script(planner.CommitPlanTool, commit(planner.CommitPlanTool,
			`"{\"tasks\": [{\"id\": \"a\", \"description\": \"A\"}, {\"description\": \"B\", \"depends_on\": \"a\"}, {\"id\": \"c\", \"description\": \"C\", \"depends_on\": \"a, t2\"}]}"`))
		m.script("task:a", text("a done"))
		m.on("task:t2", func(r openaitest.Request) openaitest.Response {
			contains(t, "task t2's request", r.LastUserMessage(), "### a: A\na done", "Entities: red; blue")
			return text("t2 done")
		})
		m.on("task:c", func(r openaitest.Request) openaitest.Response {
			contains(t, "task c's request", r.LastUserMessage(), "### a: A\na done", "### t2: B\nt2 done")
			return text("c done")
		})
		m.script(planner.CommitReflectionTool, commit(planner.CommitReflectionTool, `{"answered": "yes"}`))
		m.script("answer", text("Done."))
		if _, err := pl.Execute(context.Background(), prompt("compare"), nil); err != nil {
			t.Fatal(err)
		}
		if n := len(requestsOf(srv, planner.CommitPlanTool)); n != 1 {
			t.Errorf("%d plan requests, want 1", n)
		}
	})

	t.Run("Fallbacks", func(t *testing.T) {
		// A model that never commits: the request is the intent, one task does it
		// all, and the results are taken as the answer.
		srv := MustServer(t)
		pl := newPlanner(t, srv, nil, func(c *planner.Config) { c.MaxReminders = 1 })
		m := newModel(t, srv)
		m.script(planner.CommitUnderstandingTool, text("It is about budgets."))
		m.script(planner.CommitPlanTool, text("Step 1: look."))
		m.script(planner.CommitReflectionTool, text("Looks good."))
		m.script("task:answer", text("The budget is 1.2M."))
		m.script("answer", text("1.2M."))
		f, err := pl.Execute(context.Background(), prompt("What is the  Q3\nbudget?"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.Answer != "1.2M." || f.Truncated || f.Steps != 2+2+1+2+1 {
			t.Errorf("findings = %+v", f)
		}
		contains(t, "the plan request", requestsOf(srv, planner.CommitPlanTool)[0].LastUserMessage(), "Intent: What is the Q3 budget?")
		contains(t, "the task's request", requestsOf(srv, "task:answer")[0].LastUserMessage(), "> What is the  Q3\n> budget?")
	})
}

func TestPlannerCancel(t *testing.T) {
	t.Run("BeforeStart", func(t *testing.T) {
		srv := MustServer(t)
		pl := newPlanner(t, srv, nil)
		newModel(t, srv)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := pl.Execute(ctx, prompt("x"), nil); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d requests after cancellation", n)
		}
	})

	t.Run("DuringUnderstanding", func(t *testing.T) {
		srv := MustServer(t)
		pl := newPlanner(t, srv, nil)
		m := newModel(t, srv)
		m.script(planner.CommitUnderstandingTool, openaitest.Response{Text: "late", Delay: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		if _, err := pl.Execute(ctx, prompt("x"), nil); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if n := len(requestsOf(srv, planner.CommitPlanTool)); n != 0 {
			t.Errorf("%d plan requests after cancellation", n)
		}
	})

	t.Run("DuringATask", func(t *testing.T) {
		// Task a's tool stops the turn: task b, which needs a, never starts, and
		// neither reflection nor answer is asked for.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		srv := MustServer(t)
		pl := newPlanner(t, srv, map[string]agents.ToolFunc{
			"stop": func(context.Context, json.RawMessage) (string, error) { cancel(); return "stopped", nil },
		})
		m := newModel(t, srv)
		m.script(planner.CommitUnderstandingTool, understanding("x"))
		m.script(planner.CommitPlanTool, plan(planTask{ID: "a", Description: "A"}, planTask{ID: "b", Description: "B", DependsOn: []string{"a"}}))
		m.on("task:a", toolThenAnswer("stop", "never"))
		var progress statuses
		f, err := pl.Execute(ctx, prompt("x"), progress.Report)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		for _, kind := range []string{"task:b", planner.CommitReflectionTool, "answer"} {
			if n := len(requestsOf(srv, kind)); n != 0 {
				t.Errorf("%d %s requests after cancellation", n, kind)
			}
		}
		// understand, plan, a's first call; a's tool call is kept.
		if f.Steps != 3 || len(f.ToolCalls) != 1 || f.ToolCalls[0].Name != "stop" {
			t.Errorf("findings = %+v, want what was done so far", f)
		}
		if slices.Contains(progress.List, "Writing the answer…") {
			t.Errorf("progress = %q", progress.List)
		}
	})
}

// fakeExecutor records the prompts it is asked.
type fakeExecutor struct {
	name string
	mu   sync.Mutex
	got  []string
}

func (e *fakeExecutor) Execute(_ context.Context, p conversation.Prompt, _ conversation.Progress) (conversation.Findings, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, p.Text)
	return conversation.Findings{Answer: e.name + " answered", Steps: 1, Usage: conversation.Usage{PromptTokens: 1, CompletionTokens: 1}}, nil
}

func channelPrompt(channel, text string) conversation.Prompt {
	p := prompt(text)
	p.Key.ChannelID = channel
	return p
}

func TestRouterChannels(t *testing.T) {
	react, deep := &fakeExecutor{name: "react"}, &fakeExecutor{name: "planner"}
	router, err := planner.NewRouter(planner.RouterConfig{
		ReAct: react, Planner: deep,
		Default:  "react",
		Channels: map[string]string{"CDEEP": "planner", "CSHALLOW": "react"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ channel, want string }{
		{"CDEEP", "planner answered"}, {"CSHALLOW", "react answered"}, {"COTHER", "react answered"},
	} {
		f, err := router.Execute(context.Background(), channelPrompt(tc.channel, "q"), nil)
		if err != nil || f.Answer != tc.want || f.Steps != 1 {
			t.Errorf("channel %s: findings %+v, err %v; want %q", tc.channel, f, err, tc.want)
		}
	}
	if router.Strategy("CDEEP") != planner.StrategyPlanner || router.Strategy("X") != planner.StrategyReAct {
		t.Errorf("Strategy: %q, %q", router.Strategy("CDEEP"), router.Strategy("X"))
	}

	t.Run("PlannerDeployment", func(t *testing.T) {
		router, err := planner.NewRouter(planner.RouterConfig{ReAct: react, Planner: deep, Default: " Planner ", Channels: map[string]string{"CQUICK": "react"}})
		if err != nil {
			t.Fatal(err)
		}
		for channel, want := range map[string]string{"CQUICK": "react answered", "C1": "planner answered"} {
			if f, _ := router.Execute(context.Background(), channelPrompt(channel, "q"), nil); f.Answer != want {
				t.Errorf("channel %s: answer %q, want %q", channel, f.Answer, want)
			}
		}
	})
}

func TestRouterAuto(t *testing.T) {
	srv := MustServer(t)
	react, deep := &fakeExecutor{name: "react"}, &fakeExecutor{name: "planner"}
	logger, logs := testLogger()
	router, err := planner.NewRouter(planner.RouterConfig{
		Client: newClient(t, srv, func(c *agents.ClientConfig) { c.MaxRetries = -1 }), SmallModel: "gpt-small",
		ReAct: react, Planner: deep,
		Default:  "auto",
		Channels: map[string]string{"CFAST": "react"},
		Logger:   logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	route := func(strategy string) openaitest.Response {
		return commit(planner.CommitRouteTool, map[string]any{"strategy": strategy, "reason": "because"})
	}
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		if forcedFunction(r) != planner.CommitRouteTool {
			t.Errorf("request %d forces %q", r.N, forcedFunction(r))
		}
		switch q := r.LastUserMessage(); {
		case strings.Contains(q, "compare"):
			return route("planner")
		case strings.Contains(q, "shouting"):
			return route(" PLANNER ")
		case strings.Contains(q, "garbage"):
			return route("banana")
		case strings.Contains(q, "prose"):
			return text("planner")
		case strings.Contains(q, "broken"):
			return commit(planner.CommitRouteTool, `{"strategy": `)
		case strings.Contains(q, "failing"):
			return openaitest.Response{Status: 400}
		}
		return route("react")
	})
	for _, tc := range []struct{ text, want string }{
		{"compare Q1 with Q2 across all teams", "planner answered"},
		{"shouting", "planner answered"},
		{"hi", "react answered"},
		{"garbage", "react answered"},
		{"prose", "react answered"},
		{"broken", "react answered"},
		{"failing", "react answered"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			f, err := router.Execute(context.Background(), channelPrompt("C1", tc.text), nil)
			if err != nil {
				t.Fatal(err)
			}
			if f.Answer != tc.want || f.Steps != 2 || (tc.text != "failing" && f.Usage.PromptTokens < 2) {
				t.Errorf("findings = %+v, want %q with the judge's call counted", f, tc.want)
			}
		})
	}
	if !strings.Contains(logs.String(), "unreadable judgement; using react") {
		t.Errorf("no warning logged:\n%s", logs)
	}

	// The judge uses the small model, sees the recent history, and is not asked
	// about channels set to a strategy.
	p := channelPrompt("C1", "compare them")
	p.History = []conversation.Message{{Role: conversation.RoleUser, Text: "list the teams"}, {Role: conversation.RoleAssistant, Text: "Red and Blue."}}
	if _, err := router.Execute(context.Background(), p, nil); err != nil {
		t.Fatal(err)
	}
	last, _ := srv.LastRequest()
	if last.Chat.Model != "gpt-small" {
		t.Errorf("judge model = %q", last.Chat.Model)
	}
	contains(t, "the judge's request", last.LastUserMessage(), "user: list the teams\nassistant: Red and Blue.\n\nMessage to judge:\n> compare them")
	n := len(srv.Requests())
	if f, _ := router.Execute(context.Background(), channelPrompt("CFAST", "compare everything"), nil); f.Answer != "react answered" || len(srv.Requests()) != n {
		t.Errorf("channel set to react: answer %q after %d judge calls", f.Answer, len(srv.Requests())-n)
	}

	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := router.Execute(ctx, channelPrompt("C1", "compare"), nil); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

func TestNewRouterErrors(t *testing.T) {
	react, deep := &fakeExecutor{}, &fakeExecutor{}
	srv := MustServer(t)
	client := newClient(t, srv)
	for _, tc := range []struct {
		name string
		cfg  planner.RouterConfig
		want string
	}{
		{"UnknownDefault", planner.RouterConfig{ReAct: react, Planner: deep, Default: "deep"}, `unknown strategy "deep"`},
		{"UnknownChannelStrategy", planner.RouterConfig{ReAct: react, Planner: deep, Channels: map[string]string{"C1": "fast"}}, `channel C1: unknown strategy "fast"`},
		{"EmptyChannelStrategy", planner.RouterConfig{ReAct: react, Planner: deep, Channels: map[string]string{"C1": ""}}, `channel C1`},
		{"NoReAct", planner.RouterConfig{Planner: deep}, "needs RouterConfig.ReAct"},
		{"NoPlanner", planner.RouterConfig{ReAct: react, Channels: map[string]string{"C1": "planner"}}, "RouterConfig.Planner is nil"},
		{"AutoWithoutModel", planner.RouterConfig{ReAct: react, Planner: deep, Default: "auto", Client: client}, "needs RouterConfig.Client and SmallModel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planner.NewRouter(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := planner.NewRouter(planner.RouterConfig{ReAct: react}); err != nil {
		t.Errorf("react only: %v", err)
	}
}

func TestParseChannelStrategies(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{"", nil, ""},
		{"C123:planner,C456:react", map[string]string{"C123": "planner", "C456": "react"}, ""},
		{" C1 : Auto , ,C2:REACT ", map[string]string{"C1": "auto", "C2": "react"}, ""},
		{"C1", nil, `"C1": want CHANNEL_ID:STRATEGY`},
		{":planner", nil, "want CHANNEL_ID:STRATEGY"},
		{"C1:", nil, "want CHANNEL_ID:STRATEGY"},
		{"C1:deep", nil, `channel C1: agents: unknown strategy "deep"`},
		{"C1:react,C1:planner", nil, "C1 is given two strategies"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := planner.ParseChannelStrategies(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestNewPlannerPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Executor") {
			t.Errorf("recover() = %v", r)
		}
	}()
	planner.New(planner.Config{Client: agents.NewClient(agents.ClientConfig{}), Model: "m"})
}
