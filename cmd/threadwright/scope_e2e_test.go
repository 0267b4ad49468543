package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
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

// TestE2EClassifierRejectsUnlabelledItem: with a scope set, by default as with
// SCOPE_CLASSIFY_RESULTS=true, the turn's unlabelled tool results go to the small
// model in one call; the item it rejects is named in the reply (in the asker's
// language), the answer about it is not posted, and the next turn's session context
// has the other items but not it.
func TestE2EClassifierRejectsUnlabelledItem(t *testing.T) {
	t.Run("Default", func(t *testing.T) { testClassifierRejectsUnlabelledItem(t, "") })
	t.Run("Explicit", func(t *testing.T) { testClassifierRejectsUnlabelledItem(t, "true") })
}

// TestE2EClassifierOptOut: SCOPE_CLASSIFY_RESULTS=false turns the check off with a
// scope set: no classifier call, and the answer about the unlabelled item is posted.
func TestE2EClassifierOptOut(t *testing.T) {
	h := newUnlabelledRecordsHarness(t, "false")
	const answer = "MED-7 is Bob's medical leave note."
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if len(r.ToolResults()) > 0 {
			return openaitest.Response{Text: answer}
		}
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "find_records", Arguments: "{}"}, {ID: "c2", Name: "notes", Arguments: "{}"}}}
	})
	ts := h.post(general, alice, "<@U0BOT> show every record of Acme", "")
	if got := h.lastBotText(general, ts); !strings.Contains(got, answer) {
		t.Fatalf("reply %q, want the answer", got)
	}
	for _, r := range h.ai.Requests() {
		if slices.Contains(r.ToolNames(), "classify_results") {
			t.Fatalf("classifier called with SCOPE_CLASSIFY_RESULTS=false:\n%s", r.LastUserMessage())
		}
	}
}

// newUnlabelledRecordsHarness starts the program with a scope (every request allowed
// by SCOPE_ALLOW), SCOPE_CLASSIFY_RESULTS set to setting ("" leaves it unset) and two
// tools whose results carry no scope label: find_records (INV-1 and MED-7) and notes.
func newUnlabelledRecordsHarness(t *testing.T, setting string) *harness {
	h := newHarness(t, emulator.Config{})
	h.env["SCOPE_DESCRIPTION"] = "questions about ACME's billing"
	h.env["SCOPE_ALLOW"] = "." // the request itself is in scope without a model call
	if setting != "" {
		h.env["SCOPE_CLASSIFY_RESULTS"] = setting
	}
	h.env["STREAM_ANSWERS"] = "true"
	h.tools = func(r *agents.Registry) error {
		r.MustRegister(agents.ToolSpec{Name: "find_records", Description: "Find records"},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) {
				return `Records: {"entities":[{"id":"INV-1","title":"Invoice March","type":"invoice"},{"id":"MED-7","title":"Medical leave note"}]}`, nil
			}))
		r.MustRegister(agents.ToolSpec{Name: "notes", Description: "Account notes"},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) { return "Acme pays by card.", nil }))
		return nil
	}
	h.start()
	return h
}

func testClassifierRejectsUnlabelledItem(t *testing.T, setting string) {
	h := newUnlabelledRecordsHarness(t, setting)
	const answer = "MED-7 is Bob's medical leave note."
	var classify []openaitest.Request
	var mu sync.Mutex
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if names := r.ToolNames(); len(names) == 1 && names[0] == "classify_results" {
			mu.Lock()
			classify = append(classify, r)
			mu.Unlock()
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "classify_results", Arguments: `{"results":[` +
				`{"result":1,"in_scope":true,"reason":"медицинские записи не относятся к оплате","out_of_scope_items":["MED-7"]},` +
				`{"result":2,"in_scope":true,"reason":"billing"}]}`}}}
		}
		switch {
		case strings.Contains(r.LastUserMessage(), "first one"):
			return openaitest.Response{Text: "The March invoice."}
		case len(r.ToolResults()) > 0:
			return openaitest.Response{Text: answer}
		}
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "find_records", Arguments: "{}"}, {ID: "c2", Name: "notes", Arguments: "{}"}}}
	})
	ts := h.post(general, alice, "<@U0BOT> покажи все записи по Acme", "")
	h.waitFor("the rejection", func() bool {
		for _, m := range h.emu.BotMessages(general, ts) {
			if !m.Streaming && strings.Contains(m.Text, "MED-7") {
				return true
			}
		}
		return false
	})
	h.idle()
	var reply string
	for _, m := range h.emu.BotMessages(general, ts) {
		if strings.Contains(m.Text, "medical leave note.") {
			t.Fatalf("the answer about the rejected item was posted: %q", m.Text)
		}
		if strings.Contains(m.Text, "MED-7") {
			reply = m.Text
		}
	}
	if !strings.Contains(reply, "выходит за рамки") || !strings.Contains(reply, "медицинские записи не относятся к оплате") || strings.Contains(reply, "INV-1") {
		t.Fatalf("rejection %q", reply)
	}
	mu.Lock()
	if len(classify) != 1 {
		t.Fatalf("%d classifier calls, want one for the turn", len(classify))
	}
	if msg := classify[0].LastUserMessage(); !strings.Contains(msg, "[1] tool find_records") || !strings.Contains(msg, "[2] tool notes") || !strings.Contains(msg, "Acme pays by card.") {
		t.Fatalf("classifier request:\n%s", msg)
	}
	if classify[0].Chat.Model != "gpt-test" { // OPENAI_SMALL_MODEL defaults to OPENAI_MODEL
		t.Fatalf("classifier model %q", classify[0].Chat.Model)
	}
	mu.Unlock()

	h.post(general, alice, "what about the first one?", ts)
	h.waitFor("the follow-up's answer", func() bool {
		for _, m := range h.emu.BotMessages(general, ts) {
			if !m.Streaming && strings.Contains(m.Text, "The March invoice.") {
				return true
			}
		}
		return false
	})
	reqs := h.ai.Requests()
	var session string
	for _, r := range reqs {
		if strings.Contains(r.LastUserMessage(), "first one") {
			for _, m := range r.Chat.Messages {
				if strings.Contains(m.Content, "Items recently discussed") {
					session = m.Content
				}
			}
		}
	}
	if !strings.Contains(session, "1. INV-1 — Invoice March") || strings.Contains(session, "MED-7") {
		t.Fatalf("session context after the rejection: %q", session)
	}
}

func TestLoadConfigScopeClassifyResults(t *testing.T) {
	setEnv(t, map[string]string{"SCOPE_CLASSIFY_RESULTS": "true"})
	var c Config
	want := "SCOPE_CLASSIFY_RESULTS: expected SCOPE_DESCRIPTION to be set"
	if err := LoadConfig(&c); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	setEnv(t, map[string]string{"SCOPE_CLASSIFY_RESULTS": "maybe", "SCOPE_DESCRIPTION": "billing"})
	if err := LoadConfig(&c); err == nil || !strings.HasPrefix(err.Error(), "SCOPE_CLASSIFY_RESULTS: expected auto, true or false") {
		t.Fatalf("error %v for maybe", err)
	}
	// On by default whenever a scope is set; off without one; false opts out.
	for _, tc := range []struct {
		setting, scope string
		want           bool
	}{
		{"", "billing", true}, {"auto", "billing", true}, {"true", "billing", true},
		{"", "", false}, {"auto", "", false}, {"false", "billing", false}, {"FALSE", "billing", false},
	} {
		setEnv(t, map[string]string{"SCOPE_DESCRIPTION": tc.scope, "SCOPE_CLASSIFY_RESULTS": tc.setting})
		if tc.setting == "" {
			os.Unsetenv("SCOPE_CLASSIFY_RESULTS") // unset: the default; t.Setenv restores it
		}
		c = Config{}
		if err := LoadConfig(&c); err != nil || c.classifyResults() != tc.want {
			t.Errorf("SCOPE_CLASSIFY_RESULTS=%q SCOPE_DESCRIPTION=%q: %v, classify %v, want %v", tc.setting, tc.scope, err, c.classifyResults(), tc.want)
		}
	}
}
