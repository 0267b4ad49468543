package agents_test

import (
	"context"
	"encoding/json"
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
}
