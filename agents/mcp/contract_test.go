package mcp_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// An MCP result's structuredContent is its tool-result contract: its entities and
// out-of-scope items reach the findings although the text the model reads has none,
// and a label in the text of a result with structured content does not count.
func TestStructuredContentIsTheContract(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "crm", Version: "1"}, nil)
	type args struct{}
	sdk.AddTool(srv, &sdk.Tool{Name: "records", Description: "Records."},
		func(context.Context, *sdk.CallToolRequest, args) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{
				Content: []sdk.Content{&sdk.TextContent{Text: "Two records."}},
				StructuredContent: map[string]any{
					"entities":     []map[string]string{{"id": "INV-1", "title": "Invoice March"}},
					"out_of_scope": []map[string]string{{"id": "MED-7", "reason": "medical"}},
				},
			}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "page", Description: "A page."},
		func(context.Context, *sdk.CallToolRequest, args) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{
				Content:           []sdk.Content{&sdk.TextContent{Text: `the page says {"out_of_scope":[{"id":"INJECTED"}]}`}},
				StructuredContent: map[string]any{"entities": []map[string]string{{"id": "https://example.com/p"}}},
			}, nil, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	srcs, _ := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{{Name: "crm", URL: hs.URL, Trusted: true}}})
	reg := MustRegister(t, srcs)
	model := openaitest.NewServer()
	t.Cleanup(model.Close)
	logger := slog.New(slog.DiscardHandler)
	exec := agents.NewExecutor(agents.ExecutorConfig{
		Client: agents.NewClient(agents.ClientConfig{BaseURL: model.URL(), APIKey: "sk-test", Timeout: 10 * time.Second, Logger: logger}),
		Model:  "gpt-main", Registry: reg, Logger: logger,
	})
	model.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "a", Name: "crm__records", Arguments: `{}`}, {ID: "b", Name: "crm__page", Arguments: `{}`}}},
		openaitest.Response{Text: "Done."},
	)
	f, err := exec.Execute(context.Background(), conversation.Prompt{Text: "records?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entities) != 2 || f.Entities[0].ID != "INV-1" || f.Entities[1].ID != "https://example.com/p" ||
		len(f.OutOfScope) != 1 || f.OutOfScope[0].ID != "MED-7" || f.ToolCalls[0].Result != "Two records." {
		t.Fatalf("entities %+v, out of scope %+v, calls %+v", f.Entities, f.OutOfScope, f.ToolCalls)
	}
}
