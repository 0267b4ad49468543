package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EPlannerTaskTypes: under STRATEGY=planner, a plan with a tool task that
// selects one tool and a reasoning task runs through the real program: the tool
// task's chat completions offer only its tool, the reasoning task's offer none (no
// "tools" in the request body), and the answer is posted.
func TestE2EPlannerTaskTypes(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STRATEGY"] = "planner"
	h.tools = func(r *agents.Registry) error {
		params := json.RawMessage(`{"type":"object","properties":{}}`)
		for _, name := range []string{"calendar", "wiki"} {
			r.MustRegister(agents.ToolSpec{Name: name, Description: "Reads the " + name, Category: "Test", Parameters: params, ReadOnly: true},
				agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) { return "launch: March 3", nil }))
		}
		return nil
	}
	var (
		mu               sync.Mutex
		toolTask, reason []openaitest.Request
	)
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if r.Chat.ToolChoice != nil && len(r.Chat.Tools) == 1 {
			args := map[string]string{
				"commit_understanding": `{"intent":"days until the launch","entities":["launch"]}`,
				"commit_plan": `{"tasks":[{"id":"a","description":"Find the launch date","depends_on":[],"type":"tool","tools":["calendar","no_such_tool"]},` +
					`{"id":"b","description":"Compute the days until the launch from a's date","depends_on":["a"],"type":"reasoning","tools":[]}]}`,
				"commit_reflection": `{"answered":true,"missing":"","new_tasks":[]}`,
			}
			if a, ok := args[r.Chat.Tools[0].Function.Name]; ok {
				return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: r.Chat.Tools[0].Function.Name, Arguments: a}}}
			}
		}
		task := r.LastUserMessage()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(task, "## The task (a)"):
			toolTask = append(toolTask, r)
			if len(r.ToolResults()) > 0 {
				return openaitest.Response{Text: "RESULT-A: the launch is on March 3"}
			}
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "calendar", Arguments: "{}"}}}
		case strings.Contains(task, "## The task (b)"):
			reason = append(reason, r)
			return openaitest.Response{Text: "RESULT-B: 12 days"}
		}
		return openaitest.Response{Text: "The launch is on March 3, in 12 days."}
	})
	h.start()
	ts := h.post(general, alice, "<@U0BOT> how many days until the launch?", "")
	h.waitFor("the answer", func() bool {
		for _, m := range h.emu.BotMessages(general, ts) {
			if m.Text == "The launch is on March 3, in 12 days." {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	if len(toolTask) != 2 || len(reason) != 1 {
		t.Fatalf("%d requests of the tool task (want 2), %d of the reasoning task (want 1)", len(toolTask), len(reason))
	}
	for _, r := range toolTask {
		if got := r.ToolNames(); !slices.Equal(got, []string{"calendar"}) {
			t.Errorf("the tool task was offered %v, want only [calendar]", got)
		}
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(reason[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if _, ok := body["tools"]; ok {
		t.Errorf("the reasoning task's chat completion offers tools: %s", body["tools"])
	}
	if !strings.Contains(reason[0].LastUserMessage(), "RESULT-A: the launch is on March 3") {
		t.Errorf("the reasoning task did not get the tool task's result: %q", reason[0].LastUserMessage())
	}
}
