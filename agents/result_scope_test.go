package agents_test

import (
	"context"
	"errors"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// fixedExecutor returns its findings.
type fixedExecutor conversation.Findings

func (f fixedExecutor) Execute(context.Context, conversation.Prompt, conversation.Progress) (conversation.Findings, error) {
	return conversation.Findings(f), nil
}

func TestResultScope(t *testing.T) {
	calls := []conversation.ToolCall{
		{Name: "records", Arguments: "{}", Result: "r", Entities: []conversation.Entity{{ID: "A"}, {ID: "B"}}},
		{Name: "page", Arguments: `{"url":"x"}`, Result: "p"},
		{Name: "labelled", Result: "l", Scoped: true},
		{Name: "broken", Result: "error: x", Failed: true},
	}
	verdict := func(args string) openaitest.Response {
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "classify_results", Arguments: args}}}
	}
	for _, tc := range []struct {
		name      string
		responses []openaitest.Response
		out       string
		err       error
		requests  int
	}{
		{name: "AllInScope", responses: []openaitest.Response{verdict(`{"results":[{"result":1,"in_scope":true,"reason":"ok"},{"result":2,"in_scope":"yes","reason":"ok"}]}`)}, requests: 1},
		{name: "OneItem", responses: []openaitest.Response{verdict(`{"results":[{"result":1,"in_scope":true,"reason":"r","out_of_scope_items":["B"]},{"result":2,"in_scope":true,"reason":"ok"}]}`)}, out: "B", requests: 1},
		{name: "WholeResults", responses: []openaitest.Response{verdict(`{"results":[{"result":1,"in_scope":false,"reason":"r"},{"result":2,"in_scope":false,"reason":"r"}]}`)}, out: "A,B,page", requests: 1},
		{name: "TextJSON", responses: []openaitest.Response{{Text: "Sure: {\"results\":[{\"result\":1,\"in_scope\":true,\"reason\":\"\"},{\"result\":2,\"in_scope\":false,\"reason\":\"r\"}]}"}}, out: "page", requests: 1},
		{name: "GarbageThenVerdict", responses: []openaitest.Response{{Text: "I think it is fine"}, verdict(`{"results":[{"result":1,"in_scope":true,"reason":""},{"result":2,"in_scope":true,"reason":""}]}`)}, requests: 2},
		{name: "ResultLeftOutTwice", responses: []openaitest.Response{verdict(`{"results":[{"result":1,"in_scope":true,"reason":""}]}`), verdict(`{"results":[{"result":2,"in_scope":true}]}`)}, err: agents.ErrUnreadableClassification, requests: 2},
		{name: "GarbageTwice", responses: []openaitest.Response{{Text: "maybe"}, verdict(`not json`)}, err: agents.ErrUnreadableClassification, requests: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := openaitest.NewServer()
			defer srv.Close()
			srv.Push(tc.responses...)
			rs := agents.NewResultScope(fixedExecutor{ToolCalls: calls, Answer: "a"}, agents.ResultScopeConfig{
				Client: agents.NewClient(agents.ClientConfig{BaseURL: srv.URL(), MaxRetries: -1}), Model: "small", Description: "billing"})
			f, err := rs.Execute(context.Background(), conversation.Prompt{Text: "q"}, nil)
			if !errors.Is(err, tc.err) || ids(f.OutOfScope) != tc.out {
				t.Fatalf("out of scope %q, err %v", ids(f.OutOfScope), err)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Fatalf("%d requests", n)
			}
			if srv.Requests()[0].Chat.Model != "small" {
				t.Fatalf("model %q", srv.Requests()[0].Chat.Model)
			}
		})
	}
	t.Run("NothingToClassify", func(t *testing.T) {
		srv := openaitest.NewServer()
		defer srv.Close()
		for _, f := range []conversation.Findings{
			{ToolCalls: calls[2:]},
			{ToolCalls: calls, Pending: &conversation.PendingTool{Name: "x"}},
		} {
			rs := agents.NewResultScope(fixedExecutor(f), agents.ResultScopeConfig{
				Client: agents.NewClient(agents.ClientConfig{BaseURL: srv.URL(), MaxRetries: -1}), Model: "small", Description: "billing"})
			if _, err := rs.Execute(context.Background(), conversation.Prompt{Text: "q"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(srv.Requests()); n != 0 {
			t.Fatalf("%d requests", n)
		}
	})
}
