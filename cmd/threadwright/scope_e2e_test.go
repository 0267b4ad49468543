package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/threadwright/threadwright/agents/openaitest"
	"github.com/threadwright/threadwright/bot/emulator"
)

// TestE2EMCPOutOfScopeWhereverTheJSONSits: an MCP server's results mark an item out
// of scope in JSON after leading text, and at the end of a result over 16 KiB (past
// what the model reads): both are rejected, and the model's answer about the item
// is not posted, streamed or not.
func TestE2EMCPOutOfScopeWhereverTheJSONSits(t *testing.T) {
	const label = `{"entities":[{"id":"INV-1","title":"Invoice March"}],"out_of_scope":[{"id":"MED-7","title":"Medical leave note","reason":"medical records are outside billing"}]}`
	type args struct {
		Customer string `json:"customer" jsonschema:"the customer's name"`
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "crm", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "leading", Description: "Records, with a preface.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, _ args) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Here is what I found for you:\n" + label + "\nEnd of records."}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "big", Description: "Records, many of them.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, _ args) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("record line\n", 3000) + label}}}, nil, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer hs.Close()
	cfg := filepath.Join(t.TempDir(), "mcp.yaml")
	if err := os.WriteFile(cfg, []byte("servers:\n  - name: crm\n    url: "+hs.URL+"\n    timeout: 10s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tool, stream string }{{"crm__leading", "false"}, {"crm__big", "false"}, {"crm__leading", "true"}, {"crm__big", "true"}} {
		t.Run(tc.tool+"/stream="+tc.stream, func(t *testing.T) {
			h := newHarness(t, emulator.Config{})
			h.env["MCP_CONFIG"] = cfg
			h.env["STREAM_ANSWERS"] = tc.stream
			h.start()
			const answer = "MED-7 is Alice's medical leave note from March."
			h.ai.Push(
				openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: tc.tool, Arguments: `{"customer":"Acme"}`}}},
				openaitest.Response{Text: answer},
			)
			ts := h.post(general, alice, "<@U0BOT> show me everything for Acme", "")
			h.waitFor("the rejection", func() bool {
				for _, m := range h.emu.BotMessages(general, ts) {
					if !m.Streaming && strings.Contains(m.Text, "MED-7") && strings.Contains(m.Text, "medical records are outside billing") {
						return true
					}
				}
				return false
			})
			h.idle()
			for _, m := range h.emu.BotMessages(general, ts) {
				if strings.Contains(m.Text, "medical leave note from March") {
					t.Fatalf("the answer about the rejected item was posted: %q", m.Text)
				}
			}
			if tc.tool == "crm__big" {
				reqs := h.ai.Requests()
				if got := reqs[len(reqs)-1].ToolResults()[0].Content; strings.Contains(got, "MED-7") {
					t.Fatal("the test needs the label past what the model reads")
				}
			}
		})
	}
}

// TestE2EFollowUpResolvesFromKnowledgeEntities: search_knowledge reports the sections
// it found as entities, so a follow-up "tell me more about the second one" in a
// default deployment reaches the model with the second section named second in the
// session context.
func TestE2EFollowUpResolvesFromKnowledgeEntities(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.ingest("handbook", "leave.md", "# Leave\n\n## Parental leave\n\nEmployees get 16 weeks of paid parental leave.\n\n## Sick leave\n\nUp to 10 paid sick leave days a year.\n")
	h.start()
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "search_knowledge", Arguments: `{"query":"leave"}`}}},
		openaitest.Response{Text: "There are two kinds of leave [1] [2]."},
		openaitest.Response{Text: "More about it."},
	)
	ts := h.post(general, alice, "<@U0BOT> what kinds of leave are there?", "")
	h.replies(general, ts, 2)
	reqs := h.ai.Requests()
	result := reqs[1].ToolResults()[0].Content
	var second string // "source — heading" of passage [2]
	for _, line := range strings.Split(result, "\n") {
		if rest, ok := strings.CutPrefix(line, "[2] "); ok {
			second = rest
		}
	}
	source, heading, ok := strings.Cut(second, " — ")
	if !ok {
		t.Fatalf("no second passage in the result:\n%s", result)
	}
	h.post(general, alice, "tell me more about the second one", ts)
	h.replies(general, ts, 3)
	reqs = h.ai.Requests()
	var session string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		if strings.Contains(m.Content, "Items recently discussed") {
			session = m.Content
		}
	}
	if want := "2. " + source + "#" + heading + " — " + heading + " (section)"; !strings.Contains(session, want) {
		t.Fatalf("session context %q, want %q", session, want)
	}
}
