package mcp_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// The executor offers the MCP tools to the model and runs them, one succeeding and
// one failing in the same step, as it runs any tool.
func TestExecutor(t *testing.T) {
	sc := stdioServer("")
	sc.Trusted = true // its tools have no hints: from a trusted server they run unconfirmed
	srcs, _ := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{sc}})
	reg := MustRegister(t, srcs)
	model := openaitest.NewServer()
	t.Cleanup(model.Close)
	logger := slog.New(slog.DiscardHandler)
	exec := agents.NewExecutor(agents.ExecutorConfig{
		Client:   agents.NewClient(agents.ClientConfig{BaseURL: model.URL(), APIKey: "sk-test", Timeout: 10 * time.Second, Logger: logger}),
		Model:    "gpt-main",
		Registry: reg,
		Logger:   logger,
	})
	model.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{ID: "call_echo", Name: "files__echo", Arguments: `{"text":"from the server"}`},
			{ID: "call_fail", Name: "files__fail", Arguments: `{}`},
		}},
		openaitest.Response{Text: "The server said: from the server."},
	)
	prompt := conversation.Prompt{Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2"}, UserID: "U1", Text: "Ask the server."}
	f, err := exec.Execute(context.Background(), prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Answer != "The server said: from the server." || len(f.ToolCalls) != 2 {
		t.Fatalf("findings = %+v", f)
	}
	results := map[string]conversation.ToolCall{}
	for _, tc := range f.ToolCalls {
		results[tc.Name] = tc
	}
	if tc := results["files__echo"]; tc.Failed || tc.Result != "from the server" {
		t.Errorf("echo: %+v", tc)
	}
	if tc := results["files__fail"]; !tc.Failed || tc.Result != "error: boom: the disk is full" {
		t.Errorf("fail: %+v", tc)
	}

	req := model.Requests()[0]
	if names := strings.Join(req.ToolNames(), ","); !strings.Contains(names, "files__echo") {
		t.Errorf("tools offered: %s", names)
	}
	if sys := req.SystemPrompt(); !strings.Contains(sys, "MCP: files") || !strings.Contains(sys, "- files__echo: Repeat a text.") {
		t.Errorf("system prompt lacks the MCP category:\n%s", sys)
	}
}
