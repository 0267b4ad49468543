package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mcp"
)

// Connect to an MCP server over streamable HTTP and call its tool through the
// registry, as the executor does.
func ExampleConnect() {
	// An MCP server with one tool, shout, served over HTTP.
	server := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1"}, nil)
	type shoutArgs struct {
		Text string `json:"text" jsonschema:"the text to shout"`
	}
	sdk.AddTool(server, &sdk.Tool{Name: "shout", Description: "Repeat a text in capitals."},
		func(_ context.Context, _ *sdk.CallToolRequest, a shoutArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.ToUpper(a.Text)}}}, nil, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	defer hs.Close()

	ctx := context.Background()
	cfg := mcp.Config{Servers: []mcp.ServerConfig{{Name: "notes", URL: hs.URL}}}
	srcs, err := mcp.Connect(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		panic(err)
	}
	defer srcs.Close()
	reg := agents.NewRegistry()
	if err := srcs.Register(reg); err != nil {
		panic(err)
	}

	fmt.Print(reg.Describe())
	_, tool, _ := reg.Lookup("notes__shout")
	out, err := tool.Run(ctx, json.RawMessage(`{"text":"hello"}`))
	fmt.Println(out, err)
	// Output:
	// MCP: notes:
	// - notes__shout: <tool_description trust="untrusted">Repeat a text in capitals.</tool_description>
	// HELLO <nil>
}
