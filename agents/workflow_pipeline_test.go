package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// The tests of automated pipelines: foreach items, the failure argument, the recovery
// agent, tools while writing and model profiles.

const outlineText = "## Market size\nHow big is it?\n\n## Competitor pricing\nWhat do Acme Desk and HelpHub charge?"

// itemLine is the regexp the offline demo model reads the item with.
var itemLine = regexp.MustCompile(`Item (\d+) of (\d+): (.+)`)

// pipelineWorkflow is a market study: an outline (draft), research written per
// outline section (auto, foreach, with tools and an editor pass) and a summary
// (auto).
func pipelineWorkflow() *workflow.Definition {
	return &workflow.Definition{
		Name: "market-study", Title: "Market study",
		Artifacts: []workflow.Artifact{
			{ID: "outline", Title: "Outline", Mode: workflow.ModeDraft},
			{ID: "research", Title: "Research", Mode: workflow.ModeAuto, DependsOn: []string{"outline"},
				Foreach: "outline", Retries: 2, Tools: []string{"search_knowledge", "web_search"},
				Editor: &workflow.Editor{Prompt: "Tighten the prose; keep every fact."}},
			{ID: "summary", Title: "Summary", Mode: workflow.ModeAuto, DependsOn: []string{"research"}},
		},
	}
}

// itemRequest is a request for item 2 of 5 of the research; edit applies changes.
func itemRequest(edit ...func(*conversation.ArtifactRequest)) conversation.ArtifactRequest {
	def := pipelineWorkflow()
	r := conversation.ArtifactRequest{
		Workflow: def, Artifact: &def.Artifacts[1], Locale: "en",
		Approved: map[string]string{"outline": outlineText},
		Item:     &conversation.Item{Index: 1, Total: 5, Title: "Competitor pricing", Brief: "What do Acme Desk and HelpHub charge?"},
	}
	for _, f := range edit {
		f(&r)
	}
	return r
}

// knowledgeTools returns a registry with search_knowledge, which answers from
// answers by query (and counts its runs), and lookup_price, which no artifact names.
func knowledgeTools(tb testing.TB, answers map[string]string) (*agents.Registry, *atomic.Int32) {
	tb.Helper()
	runs := new(atomic.Int32)
	reg := agents.NewRegistry()
	reg.MustRegister(agents.ToolSpec{
		Name: "search_knowledge", Description: "Search the team's knowledge base.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
	}, agents.ToolFunc(func(_ context.Context, args json.RawMessage) (string, error) {
		runs.Add(1)
		var in struct{ Query string }
		if err := json.Unmarshal(args, &in); err != nil {
			return "", err
		}
		if a, ok := answers[in.Query]; ok {
			return a, nil
		}
		return "", fmt.Errorf("nothing found for %q", in.Query)
	}))
	reg.MustRegister(agents.ToolSpec{Name: "lookup_price", Description: "Look up a price."},
		agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) { return "$1", nil }))
	return reg, runs
}

// call is a scripted response that calls the named functions with the arguments.
func call(calls ...openaitest.ToolCall) openaitest.Response {
	return openaitest.Response{ToolCalls: calls, Usage: openaitest.Usage{PromptTokens: 50, CompletionTokens: 5}}
}

// rawToolChoice returns the request's tool_choice as sent.
func rawToolChoice(tb testing.TB, r openaitest.Request) string {
	tb.Helper()
	var body struct {
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		tb.Fatal(err)
	}
	return string(body.ToolChoice)
}

// required returns the request's first tool's required properties.
func required(tb testing.TB, r openaitest.Request) []string {
	tb.Helper()
	var out []string
	for _, v := range parameters(tb, r)["required"].([]any) {
		out = append(out, v.(string))
	}
	return out
}

func TestWorkflowItem(t *testing.T) {
	ctx := context.Background()

	t.Run("Write", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "Acme Desk charges $25 per agent a month."}))
		got, _, err := agent.Write(ctx, itemRequest(func(r *conversation.ArtifactRequest) {
			r.Instructions = "Look for the 2024 price lists."
		}))
		if err != nil || got != "Acme Desk charges $25 per agent a month." {
			t.Fatalf("Write = %q, %v", got, err)
		}
		req, _ := srv.LastRequest()
		checkRequest(t, req, "gpt-main", agents.CommitFinalTextTool)
		task := req.LastUserMessage()
		m := itemLine.FindAllStringSubmatch(task, -1)
		if len(m) != 1 || m[0][1] != "2" || m[0][2] != "5" || m[0][3] != "Competitor pricing" {
			t.Errorf("item lines = %q, want one for item 2 of 5, Competitor pricing:\n%s", m, task)
		}
		contains(t, "task", task, "\nItem 2 of 5: Competitor pricing\n> What do Acme Desk and HelpHub charge?",
			"no heading", "> Look for the 2024 price lists.", "with the complete text of the item, without its heading")
		lacks(t, "task", task, `Write "Research" in full`)
		contains(t, "system prompt", req.SystemPrompt(), "## The artifact now: Research (`research`)", "### Outline (`outline`)\n"+outlineText)
		if got := required(t, req); !reflect.DeepEqual(got, []string{"text"}) {
			t.Errorf("required = %v, want [text] (failure is optional)", got)
		}
		if _, ok := parameters(t, req)["properties"].(map[string]any)["failure"]; !ok {
			t.Error("an item's commit function has no failure argument")
		}
	})

	t.Run("Revise", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "Acme Desk: $25 per agent."}))
		got, _, err := agent.Revise(ctx, itemRequest(func(r *conversation.ArtifactRequest) {
			r.Current, r.Instructions = "Acme Desk charges, as far as we know, $25 per agent a month.", r.Artifact.Editor.Prompt
		}))
		if err != nil || got != "Acme Desk: $25 per agent." {
			t.Fatalf("Revise = %q, %v", got, err)
		}
		req, _ := srv.LastRequest()
		checkRequest(t, req, "gpt-main", agents.CommitFinalTextTool)
		task := req.LastUserMessage()
		if !strings.HasPrefix(task, "Revise ") {
			t.Errorf("the task does not start with \"Revise \" (the demo model's cue):\n%s", task)
		}
		if m := itemLine.FindAllStringSubmatch(task, -1); len(m) != 1 || m[0][3] != "Competitor pricing" {
			t.Errorf("item lines = %q:\n%s", m, task)
		}
		contains(t, "task", task, "The current text:\n> Acme Desk charges", "> Tighten the prose; keep every fact.", "without its heading")
	})

	t.Run("TitleMadeOneLine", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "ok"}))
		r := itemRequest(func(r *conversation.ArtifactRequest) {
			r.Item = &conversation.Item{Index: 0, Total: 1, Title: "  Market\n size "}
		})
		if _, _, err := agent.Write(ctx, r); err != nil {
			t.Fatal(err)
		}
		req, _ := srv.LastRequest()
		contains(t, "task", req.LastUserMessage(), "\nItem 1 of 1: Market size\n")
	})

	t.Run("OutOfRange", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		r := itemRequest(func(r *conversation.ArtifactRequest) { r.Item.Index = 5 })
		if _, _, err := agent.Write(ctx, r); err == nil || !strings.Contains(err.Error(), "item 5 is not one of 5") {
			t.Errorf("err = %v", err)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d model calls, want 0", n)
		}
	})
}

func TestWorkflowTaskFailure(t *testing.T) {
	ctx := context.Background()
	const reason = "Searched the knowledge base for Acme Desk and HelpHub pricing; nothing mentions a price."

	for _, tc := range []struct {
		name string
		r    conversation.ArtifactRequest
		call func(*agents.WorkflowAgent, context.Context, conversation.ArtifactRequest) (string, conversation.Usage, error)
	}{
		{"WriteItem", itemRequest(), (*agents.WorkflowAgent).Write},
		{"WriteAuto", itemRequest(func(r *conversation.ArtifactRequest) { r.Item = nil }), (*agents.WorkflowAgent).Write},
		{"ReviseItem", itemRequest(func(r *conversation.ArtifactRequest) { r.Current = "Draft." }), (*agents.WorkflowAgent).Revise},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := MustServer(t)
			agent, logs := newWorkflowAgent(t, srv)
			srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": " ", "failure": reason + "\n"}))
			got, usage, err := tc.call(agent, ctx, tc.r)
			var tf *conversation.TaskFailure
			if !errors.As(err, &tf) || tf.Reason != reason {
				t.Fatalf("Write = %q, %v; want a *TaskFailure with the reason", got, err)
			}
			if got != "" || errors.Is(err, agents.ErrNoCommit) {
				t.Errorf("text %q, err %v: want no text and no CommitError", got, err)
			}
			if conversation.ErrorReply(err) != reason {
				t.Errorf("ErrorReply = %q, want the reason", conversation.ErrorReply(err))
			}
			if usage.PromptTokens != 100 {
				t.Errorf("usage = %+v", usage)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1 (no reminder)", n)
			}
			lacks(t, "log", logs.String(), "model did not commit")
		})
	}

	t.Run("BothSet", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(
			commit(agents.CommitFinalTextTool, map[string]string{"text": "No prices found.", "failure": reason}),
			commit(agents.CommitFinalTextTool, map[string]string{"text": "", "failure": reason}),
		)
		_, _, err := agent.Write(ctx, itemRequest())
		var tf *conversation.TaskFailure
		if !errors.As(err, &tf) {
			t.Fatalf("err = %v, want a TaskFailure after the reminder", err)
		}
		req, _ := srv.LastRequest()
		contains(t, "reminder", req.LastUserMessage(), `That was not saved: "text" and "failure" are both set`)
	})

	t.Run("NeitherSet", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": ""}), commit(agents.CommitFinalTextTool, map[string]string{"text": "Prices."}))
		if got, _, err := agent.Write(ctx, itemRequest()); err != nil || got != "Prices." {
			t.Fatalf("Write = %q, %v", got, err)
		}
		req, _ := srv.LastRequest()
		contains(t, "reminder", req.LastUserMessage(), `"text" is empty; pass the complete text, or set "failure" when the task cannot be done`)
	})

	t.Run("NotOfferedForDraft", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(
			commit(agents.CommitFinalTextTool, map[string]string{"text": "", "failure": reason}),
			commit(agents.CommitFinalTextTool, map[string]string{"text": "Support leads."}),
		)
		got, _, err := agent.Write(ctx, audienceRequest())
		if err != nil || got != "Support leads." {
			t.Fatalf("Write = %q, %v; want the failure ignored for a reviewed artifact", got, err)
		}
		reqs := srv.Requests()
		if _, ok := parameters(t, reqs[0])["properties"].(map[string]any)["failure"]; ok {
			t.Error("a choice artifact's commit function offers failure")
		}
		lacks(t, "task", reqs[0].LastUserMessage(), `"failure"`)
		contains(t, "reminder", reqs[1].LastUserMessage(), `That was not saved: "text" is empty; pass the complete text.`)
	})
}

func TestWorkflowRecover(t *testing.T) {
	ctx := context.Background()

	t.Run("HappyPath", func(t *testing.T) {
		srv := MustServer(t)
		reg, _ := knowledgeTools(t, nil)
		agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.Tools = reg })
		srv.Push(commit(agents.CommitRecoveryTool, map[string]any{
			"instructions": "  Search for each competitor's pricing page by name.\n",
			"queries":      []string{"Acme Desk pricing", " ", "acme desk  pricing", "HelpHub\nplans per agent"},
			"rationale":    "The tries searched for both at once.",
		}))
		failures := []string{"first failure", "second", "third", "fourth", "fifth",
			"agents: write: the model could not do the task: nothing\nfound", strings.Repeat("long ", 300)}
		r := itemRequest(func(r *conversation.ArtifactRequest) { r.Instructions = "Compare the prices." })
		got, usage, err := agent.Recover(ctx, r, failures)
		if err != nil {
			t.Fatal(err)
		}
		want := workflow.Recovery{
			Instructions: "Search for each competitor's pricing page by name.",
			Queries:      []string{"Acme Desk pricing", "HelpHub plans per agent"},
			Rationale:    "The tries searched for both at once.",
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Recover =\n%+v\nwant\n%+v", got, want)
		}
		if usage.PromptTokens != 100 {
			t.Errorf("usage = %+v", usage)
		}
		req, _ := srv.LastRequest()
		checkRequest(t, req, "gpt-main", agents.CommitRecoveryTool)
		task := req.LastUserMessage()
		if m := itemLine.FindAllStringSubmatch(task, -1); len(m) != 1 || m[0][1] != "2" {
			t.Errorf("item lines = %q:\n%s", m, task)
		}
		contains(t, "task", task, "> What do Acme Desk and HelpHub charge?", "> Compare the prices.",
			"(2 earlier failures left out)\n- third\n", "- agents: write: the model could not do the task: nothing found\n",
			"- search_knowledge: Search the team's knowledge base.", "more specific search queries")
		lacks(t, "task", task, "first failure", "second", "web_search", "lookup_price", strings.Repeat("long ", 150))
		if got := required(t, req); !reflect.DeepEqual(got, []string{"instructions", "rationale"}) {
			t.Errorf("required = %v, want instructions and rationale", got)
		}
	})

	t.Run("Reminder", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(
			commit(agents.CommitRecoveryTool, map[string]any{"instructions": " ", "rationale": "?"}),
			commit(agents.CommitRecoveryTool, `{"instructions": "Use the outline's wording.", "queries": "[\"acme pricing\"]", "rationale": ""}`),
		)
		got, usage, err := agent.Recover(ctx, itemRequest(), []string{"timed out"})
		if err != nil {
			t.Fatal(err)
		}
		if want := (workflow.Recovery{Instructions: "Use the outline's wording.", Queries: []string{"acme pricing"}}); !reflect.DeepEqual(got, want) {
			t.Errorf("Recover = %+v, want %+v", got, want)
		}
		if usage.PromptTokens != 200 {
			t.Errorf("usage = %+v, want both calls", usage)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		checkRequest(t, reqs[1], "gpt-main", agents.CommitRecoveryTool)
		contains(t, "reminder", reqs[1].LastUserMessage(), `That was not saved: "instructions" is empty`, "Call commit_recovery_plan now.")
		contains(t, "task", reqs[0].LastUserMessage(), "The writer has no tools", "- timed out")
	})

	t.Run("NeverCommits", func(t *testing.T) {
		srv := MustServer(t)
		srv.Handle(func(openaitest.Request) openaitest.Response { return text("Try harder.") })
		agent, _ := newWorkflowAgent(t, srv)
		_, _, err := agent.Recover(ctx, itemRequest(), nil)
		if !errors.Is(err, agents.ErrNoCommit) {
			t.Fatalf("err = %v", err)
		}
		contains(t, "user message", conversation.ErrorReply(err), "new instructions for item 2 of Research after 3 tries")
	})
}

func TestWorkflowWriteTools(t *testing.T) {
	ctx := context.Background()
	answers := map[string]string{"acme pricing": "Acme Desk: $25 per agent a month (price list 2024)."}

	t.Run("CallsThenCommits", func(t *testing.T) {
		srv := MustServer(t)
		reg, runs := knowledgeTools(t, answers)
		agent, logs := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.Tools = reg })
		srv.Push(
			call(openaitest.ToolCall{ID: "call_a", Name: "search_knowledge", Arguments: `{"query": "acme pricing"}`}),
			commit(agents.CommitFinalTextTool, map[string]string{"text": "Acme Desk charges $25 per agent a month."}),
		)
		got, usage, err := agent.Write(ctx, itemRequest())
		if err != nil || got != "Acme Desk charges $25 per agent a month." {
			t.Fatalf("Write = %q, %v", got, err)
		}
		if want := (conversation.Usage{PromptTokens: 150, CompletionTokens: 25}); usage != want {
			t.Errorf("usage = %+v, want %+v (both calls)", usage, want)
		}
		if runs.Load() != 1 {
			t.Errorf("search_knowledge ran %d times, want 1", runs.Load())
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		for i, r := range reqs {
			if got := r.ToolNames(); !reflect.DeepEqual(got, []string{"search_knowledge", agents.CommitFinalTextTool}) {
				t.Errorf("request %d offers %v, want search_knowledge and the commit function (not web_search, unconfigured, nor lookup_price, not named)", i+1, got)
			}
			if got := rawToolChoice(t, r); got != `"required"` {
				t.Errorf("request %d: tool_choice = %s, want \"required\"", i+1, got)
			}
		}
		// web_search, named but not configured, is named as unavailable, not offered.
		contains(t, "task", reqs[0].LastUserMessage(), "- search_knowledge: Search the team's knowledge base.", "Item 2 of 5: Competitor pricing",
			"These tools the task names are not available here: web_search.")
		lacks(t, "task", reqs[0].LastUserMessage(), "- web_search", "lookup_price")
		msgs := reqs[1].Chat.Messages
		if n := len(msgs); n != 4 || msgs[2].Role != openai.ChatMessageRoleAssistant || len(msgs[2].ToolCalls) != 1 {
			t.Fatalf("second request's messages = %+v, want system, task, the tool call, its result", msgs)
		}
		if res := reqs[1].ToolResults(); len(res) != 1 || res[0].ToolCallID != "call_a" || res[0].Content != agents.ToolOutput("search_knowledge", agents.TrustInternal, answers["acme pricing"]) {
			t.Errorf("tool results = %+v, want the search's answer for call_a", res)
		}
		contains(t, "log", logs.String(), "level=DEBUG msg=\"tool call\"", "tool=search_knowledge", "artifact tools not configured", "web_search")
		lacks(t, "log", logs.String(), "model did not commit")
	})

	t.Run("LastStepForced", func(t *testing.T) {
		srv := MustServer(t)
		reg, runs := knowledgeTools(t, answers)
		agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.Tools, c.MaxToolSteps = reg, 3 })
		srv.Handle(func(r openaitest.Request) openaitest.Response {
			if len(r.Chat.Tools) == 1 || r.N > 10 { // a loop past its bound ends, and fails below
				return commit(agents.CommitFinalTextTool, map[string]string{"text": "What was found."})
			}
			return call(openaitest.ToolCall{Name: "search_knowledge", Arguments: `{"query": "acme pricing"}`})
		})
		got, _, err := agent.Write(ctx, itemRequest())
		if err != nil || got != "What was found." {
			t.Fatalf("Write = %q, %v", got, err)
		}
		reqs := srv.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests, want 3 (MaxToolSteps)", len(reqs))
		}
		if runs.Load() != 2 {
			t.Errorf("search_knowledge ran %d times, want 2", runs.Load())
		}
		for _, r := range reqs[:2] {
			if rawToolChoice(t, r) != `"required"` || len(r.ToolNames()) != 2 {
				t.Errorf("request %d: tools %v, tool_choice %s; want both, required", r.N, r.ToolNames(), rawToolChoice(t, r))
			}
		}
		checkRequest(t, reqs[2], "gpt-main", agents.CommitFinalTextTool) // the commit function alone, forced
		if n := len(reqs[2].ToolResults()); n != 2 {
			t.Errorf("the last request carries %d tool results, want 2", n)
		}
	})

	t.Run("ParallelCallsAndErrors", func(t *testing.T) {
		srv := MustServer(t)
		reg, runs := knowledgeTools(t, answers)
		agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.Tools = reg })
		srv.Push(
			call(
				openaitest.ToolCall{ID: "c1", Name: "search_knowledge", Arguments: `{"query": "acme pricing"}`},
				openaitest.ToolCall{ID: "c2", Name: "search_knowledge", Arguments: `{"query": "helphub pricing"}`},
				openaitest.ToolCall{ID: "c3", Name: "lookup_price", Arguments: `{}`},
				openaitest.ToolCall{ID: "c4", Name: agents.CommitFinalTextTool, Arguments: `{"text": ""}`},
			),
			commit(agents.CommitFinalTextTool, map[string]string{"text": "Acme Desk: $25."}),
		)
		if got, _, err := agent.Write(ctx, itemRequest()); err != nil || got != "Acme Desk: $25." {
			t.Fatalf("Write = %q, %v", got, err)
		}
		if runs.Load() != 2 {
			t.Errorf("search_knowledge ran %d times, want 2", runs.Load())
		}
		req, _ := srv.LastRequest()
		res := req.ToolResults()
		if len(res) != 4 {
			t.Fatalf("tool results = %+v, want one per call", res)
		}
		for i, want := range []string{
			answers["acme pricing"],
			`error: nothing found for "helphub pricing"`,
			`error: tool "lookup_price" is not available in this conversation; the available tools are: search_knowledge`,
			`error: "text" is empty`,
		} {
			if res[i].ToolCallID != fmt.Sprintf("c%d", i+1) || !strings.Contains(res[i].Content, want) {
				t.Errorf("result %d = %s %q, want c%d %q", i, res[i].ToolCallID, res[i].Content, i+1, want)
			}
		}
		lacks(t, "last message", req.LastUserMessage(), "That was not saved") // research, not a failed try
	})

	t.Run("TextAnswerIsAFailedTry", func(t *testing.T) {
		srv := MustServer(t)
		reg, _ := knowledgeTools(t, answers)
		agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.Tools = reg })
		srv.Push(text("Acme Desk charges $25."), commit(agents.CommitFinalTextTool, map[string]string{"text": "Acme Desk charges $25."}))
		if _, _, err := agent.Write(ctx, itemRequest()); err != nil {
			t.Fatal(err)
		}
		req, _ := srv.LastRequest()
		contains(t, "reminder", req.LastUserMessage(), "You answered without calling commit_artifact_final_text")
		if rawToolChoice(t, req) != `"required"` {
			t.Errorf("tool_choice = %s, want the tools still offered", rawToolChoice(t, req))
		}
	})

	t.Run("NeverCommits", func(t *testing.T) {
		srv := MustServer(t)
		reg, _ := knowledgeTools(t, answers)
		agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.Tools, c.MaxToolSteps, c.MaxReminders = reg, 2, 1 })
		srv.Handle(func(r openaitest.Request) openaitest.Response {
			if r.N > 10 { // a loop past its bound ends, and fails below
				return text("Stopping.")
			}
			return call(openaitest.ToolCall{Name: "search_knowledge", Arguments: `{"query": "acme pricing"}`})
		})
		_, usage, err := agent.Write(ctx, itemRequest())
		var ce *agents.CommitError
		if !errors.As(err, &ce) || ce.Tries != 2 {
			t.Fatalf("err = %v, want a CommitError after 2 tries", err)
		}
		// One research call, then two forced calls answered with search_knowledge.
		if n := len(srv.Requests()); n != 3 || usage.PromptTokens != 150 {
			t.Errorf("%d requests, usage %+v; want 3", n, usage)
		}
		contains(t, "problem", ce.Problem, `there is no function "search_knowledge"`)
	})

	for _, tc := range []struct {
		name  string
		tools func(testing.TB) *agents.Registry
		names []string
		steps int
	}{
		{"NoneConfigured", func(tb testing.TB) *agents.Registry { reg, _ := knowledgeTools(tb, nil); return reg }, []string{"web_search", agents.CommitDocsetTool}, 0},
		{"NilRegistry", func(testing.TB) *agents.Registry { return nil }, []string{"search_knowledge"}, 0},
		{"OneStep", func(tb testing.TB) *agents.Registry { reg, _ := knowledgeTools(tb, nil); return reg }, []string{"search_knowledge"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := MustServer(t)
			agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.Tools, c.MaxToolSteps = tc.tools(t), tc.steps })
			srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "From what is known."}))
			r := itemRequest(func(r *conversation.ArtifactRequest) { r.Artifact.Tools = tc.names })
			if got, _, err := agent.Write(ctx, r); err != nil || got != "From what is known." {
				t.Fatalf("Write = %q, %v", got, err)
			}
			req, _ := srv.LastRequest()
			checkRequest(t, req, "gpt-main", agents.CommitFinalTextTool) // as without tools
			lacks(t, "task", req.LastUserMessage(), "Before you save")
		})
	}
}

func TestWorkflowProfiles(t *testing.T) {
	ctx := context.Background()
	main, fast := MustServer(t), MustServer(t)
	newAgent := func(t *testing.T) *agents.WorkflowAgent {
		agent, _ := newWorkflowAgent(t, main, func(c *agents.WorkflowAgentConfig) {
			c.Profiles = map[string]agents.Profile{
				"fast":  {Client: newClient(t, fast), Model: "gpt-fast"},
				"cheap": {Model: "gpt-cheap"}, // the main client
			}
		})
		return agent
	}
	options := audienceRequest(func(r *conversation.ArtifactRequest) { r.Options = audienceOptions })
	textArgs := map[string]string{"text": "ok"}

	t.Run("Routes", func(t *testing.T) {
		agent := newAgent(t)
		for _, tc := range []struct {
			name, profile string
			srv           *openaitest.Server
			model         string
			reply         openaitest.Response
			call          func(conversation.ArtifactRequest) error
		}{
			{"WriteFast", "fast", fast, "gpt-fast", commit(agents.CommitFinalTextTool, textArgs), func(r conversation.ArtifactRequest) error {
				_, _, err := agent.Write(ctx, r)
				return err
			}},
			{"ReviseCheap", "cheap", main, "gpt-cheap", commit(agents.CommitFinalTextTool, textArgs), func(r conversation.ArtifactRequest) error {
				r.Current = "Draft."
				_, _, err := agent.Revise(ctx, r)
				return err
			}},
			{"RecoverFast", "fast", fast, "gpt-fast", commit(agents.CommitRecoveryTool, map[string]string{"instructions": "x", "rationale": "y"}), func(r conversation.ArtifactRequest) error {
				_, _, err := agent.Recover(ctx, r, []string{"failed"})
				return err
			}},
			{"InterpretReplyFast", "fast", fast, "gpt-fast", commit(agents.CommitSelectionTool, map[string]any{"label": "A"}), func(r conversation.ArtifactRequest) error {
				_, _, err := agent.InterpretReply(ctx, options, "the first one, please")
				return err
			}},
			{"WriteDefault", "", main, "gpt-main", commit(agents.CommitFinalTextTool, textArgs), func(r conversation.ArtifactRequest) error {
				_, _, err := agent.Write(ctx, r)
				return err
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := map[*openaitest.Server]int{main: len(main.Requests()), fast: len(fast.Requests())}
				tc.srv.Push(tc.reply)
				options.Profile = tc.profile
				if err := tc.call(itemRequest(func(r *conversation.ArtifactRequest) { r.Profile = tc.profile })); err != nil {
					t.Fatal(err)
				}
				for _, s := range []*openaitest.Server{main, fast} {
					want := before[s]
					if s == tc.srv {
						want++
					}
					if n := len(s.Requests()); n != want {
						t.Errorf("a server got %d requests, want %d", n, want)
					}
				}
				req, _ := tc.srv.LastRequest()
				if req.Chat.Model != tc.model {
					t.Errorf("model = %q, want %q", req.Chat.Model, tc.model)
				}
			})
		}
	})

	t.Run("Unknown", func(t *testing.T) {
		agent := newAgent(t)
		before := len(main.Requests()) + len(fast.Requests())
		r := itemRequest(func(r *conversation.ArtifactRequest) { r.Profile, r.Current = "nope", "Draft." })
		o := options
		o.Profile = "nope"
		for name, call := range map[string]func() (conversation.Usage, error){
			"ProposeOptions": func() (conversation.Usage, error) { _, u, err := agent.ProposeOptions(ctx, o); return u, err },
			"InterpretReply": func() (conversation.Usage, error) { _, u, err := agent.InterpretReply(ctx, o, "hmm"); return u, err },
			"Write":          func() (conversation.Usage, error) { _, u, err := agent.Write(ctx, r); return u, err },
			"Revise":         func() (conversation.Usage, error) { _, u, err := agent.Revise(ctx, r); return u, err },
			"Evaluate":       func() (conversation.Usage, error) { _, u, err := agent.Evaluate(ctx, o, "text"); return u, err },
			"Summarize":      func() (conversation.Usage, error) { _, u, err := agent.Summarize(ctx, r); return u, err },
			"Recover":        func() (conversation.Usage, error) { _, u, err := agent.Recover(ctx, r, nil); return u, err },
		} {
			t.Run(name, func(t *testing.T) {
				usage, err := call()
				var pe *agents.ProfileError
				if !errors.As(err, &pe) || !errors.Is(err, agents.ErrUnknownProfile) || pe.Name != "nope" {
					t.Fatalf("err = %v, want a *ProfileError", err)
				}
				if want := `agents: model profile "nope" is not configured`; err.Error() != want {
					t.Errorf("Error() = %q, want %q", err, want)
				}
				contains(t, "user message", conversation.ErrorReply(err), `"nope"`, "MODEL_PROFILES")
				if usage != (conversation.Usage{}) {
					t.Errorf("usage = %+v, want zero", usage)
				}
			})
		}
		if n := len(main.Requests()) + len(fast.Requests()); n != before {
			t.Errorf("%d model calls for an unknown profile, want 0", n-before)
		}
	})

	t.Run("ProfileWithoutModelPanics", func(t *testing.T) {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `"broken"`) {
				t.Errorf("recover() = %v, want a panic naming the profile", r)
			}
		}()
		agents.NewWorkflowAgent(agents.WorkflowAgentConfig{Client: newClient(t, main), Model: "m", Profiles: map[string]agents.Profile{"broken": {}}})
	})
}

// The schemas of the new commit functions are what the package doc says.
func TestWorkflowPipelineSchemas(t *testing.T) {
	srv := MustServer(t)
	agent, _ := newWorkflowAgent(t, srv)
	srv.Push(commit(agents.CommitRecoveryTool, map[string]string{"instructions": "x", "rationale": "y"}))
	if _, _, err := agent.Recover(context.Background(), itemRequest(), nil); err != nil {
		t.Fatal(err)
	}
	req, _ := srv.LastRequest()
	props := parameters(t, req)["properties"].(map[string]any)
	var names []string
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	if !reflect.DeepEqual(names, []string{"instructions", "queries", "rationale"}) {
		t.Errorf("commit_recovery_plan properties = %v", names)
	}
	if q := props["queries"].(map[string]any); q["type"] != "array" || q["items"].(map[string]any)["type"] != "string" {
		t.Errorf("queries = %v, want an array of strings", q)
	}
}
