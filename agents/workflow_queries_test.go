package agents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
)

// TestWorkflowWriteApprovedQueries: an item whose brief lists "Search queries:" is
// researched from them: each runs with the offered search tool before the first
// model call, whose messages hold the calls and their results and whose prompt
// lists the queries; a brief without them runs nothing first, and a write without
// search tools only reads them.
func TestWorkflowWriteApprovedQueries(t *testing.T) {
	ctx := context.Background()
	answers := map[string]string{"acme desk price list": "Acme Desk: $25 per agent a month.", "helphub pricing 2024": "HelpHub: $19 per agent."}
	brief := "What do Acme Desk and HelpHub charge?\nKey points:\n- per-agent prices\nSearch queries:\n- acme desk price list\n- helphub pricing 2024\n"
	withBrief := func(b string) func(*conversation.ArtifactRequest) {
		return func(r *conversation.ArtifactRequest) { r.Item.Brief = b }
	}

	t.Run("RunFirst", func(t *testing.T) {
		srv := MustServer(t)
		reg, runs := knowledgeTools(t, answers)
		agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.Tools = reg })
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "Acme Desk charges $25, HelpHub $19."}))
		if _, _, err := agent.Write(ctx, itemRequest(withBrief(brief))); err != nil {
			t.Fatal(err)
		}
		if runs.Load() != 2 {
			t.Errorf("search_knowledge ran %d times, want 2: once per approved query", runs.Load())
		}
		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d requests, want 1", len(reqs))
		}
		var queries []string
		var results []string
		for _, m := range reqs[0].Chat.Messages {
			for _, tc := range m.ToolCalls {
				var in struct{ Query string }
				_ = json.Unmarshal([]byte(tc.Function.Arguments), &in)
				queries = append(queries, tc.Function.Name+": "+in.Query)
			}
			if m.Role == "tool" {
				results = append(results, m.Content)
			}
		}
		if want := []string{"search_knowledge: acme desk price list", "search_knowledge: helphub pricing 2024"}; !reflect.DeepEqual(queries, want) {
			t.Errorf("the first request holds the calls %q, want %q", queries, want)
		}
		if len(results) != 2 || !strings.Contains(results[0], "$25 per agent") || !strings.Contains(results[1], "$19 per agent") {
			t.Errorf("the first request's tool results = %q", results)
		}
		contains(t, "task", reqs[0].LastUserMessage(), "they have been run for you", "- acme desk price list", "- helphub pricing 2024")
	})

	t.Run("NoQueries", func(t *testing.T) {
		srv := MustServer(t)
		reg, runs := knowledgeTools(t, answers)
		agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.Tools = reg })
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "Nothing searched."}))
		if _, _, err := agent.Write(ctx, itemRequest()); err != nil {
			t.Fatal(err)
		}
		if runs.Load() != 0 || len(srv.Requests()[0].Chat.Messages) != 2 {
			t.Errorf("a brief without queries ran %d searches first, sent %d messages", runs.Load(), len(srv.Requests()[0].Chat.Messages))
		}
		lacks(t, "task", srv.Requests()[0].LastUserMessage(), "have been run for you")
	})

	t.Run("NoSearchTool", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "From the brief."}))
		if _, _, err := agent.Write(ctx, itemRequest(withBrief(brief))); err != nil {
			t.Fatal(err)
		}
		if n := len(srv.Requests()[0].Chat.Messages); n != 2 {
			t.Errorf("without search tools the request has %d messages, want 2", n)
		}
		lacks(t, "task", srv.Requests()[0].LastUserMessage(), "have been run for you")
	})

	// Queries are cut like a recovery plan's (200 bytes), a Russian label counts,
	// and a batch runs at most 10 searches before its first model call.
	t.Run("Bounded", func(t *testing.T) {
		srv := MustServer(t)
		reg, runs := knowledgeTools(t, answers)
		agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.Tools = reg })
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "Searched."}))
		long := strings.Repeat("стоимость поддержки ", 30)
		var batch []conversation.Item
		for i := range 3 {
			b := "Covers prices.\nПоисковые запросы:\n"
			for j := range 5 {
				b += fmt.Sprintf("- query %d %d\n", i, j)
			}
			if i == 0 {
				b = "Covers prices.\nПоисковые запросы:\n- " + long + "\n"
			}
			batch = append(batch, conversation.Item{Index: i + 1, Total: 3, Title: fmt.Sprint("Section ", i), Brief: b})
		}
		r := itemRequest(func(r *conversation.ArtifactRequest) { r.Item, r.Batch = nil, batch })
		if _, _, err := agent.Write(ctx, r); err != nil {
			t.Fatal(err)
		}
		if runs.Load() != 10 {
			t.Errorf("search_knowledge ran %d times before the model, want 10 (the bound)", runs.Load())
		}
		var queries []string
		for _, m := range srv.Requests()[0].Chat.Messages {
			for _, tc := range m.ToolCalls {
				var in struct{ Query string }
				_ = json.Unmarshal([]byte(tc.Function.Arguments), &in)
				queries = append(queries, in.Query)
			}
		}
		if len(queries) != 10 || len(queries[0]) > 200 || !strings.HasPrefix(queries[0], "стоимость поддержки") || queries[9] != "query 2 3" {
			t.Errorf("the approved calls ran %q; want the long query cut to 200 bytes, then the first 9 others", queries)
		}
		task := srv.Requests()[0].LastUserMessage()
		contains(t, "task", task, "\n- query 2 3")
		lacks(t, "task", task, "\n- query 2 4") // the list of queries run; the batch's briefs are quoted
	})
}
