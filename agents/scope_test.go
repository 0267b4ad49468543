package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/testkit/logtest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

const hrScope = "questions about ACME's HR policies & benefits"

func newScopeChecker(tb testing.TB, srv *openaitest.Server, edit ...func(*agents.ScopeConfig)) (*agents.ScopeChecker, *logtest.Buffer) {
	tb.Helper()
	logger, logs := testLogger()
	cfg := agents.ScopeConfig{
		Client:      newClient(tb, srv),
		Model:       "gpt-small",
		Description: hrScope,
		Deny:        []*regexp.Regexp{regexp.MustCompile(`(?i)\bcrypto\b`)},
		Allow:       []*regexp.Regexp{regexp.MustCompile(`(?i)\b(vacation|holiday|payroll)\b`)},
		Logger:      logger,
	}
	for _, f := range edit {
		f(&cfg)
	}
	return agents.NewScopeChecker(cfg), logs
}

func classify(inScope any, reason string) openaitest.Response {
	args := map[string]any{"in_scope": inScope, "reason": reason}
	b, _ := json.Marshal(args)
	return openaitest.Response{
		ToolCalls: []openaitest.ToolCall{{Name: "classify_scope", Arguments: string(b)}},
		Usage:     openaitest.Usage{PromptTokens: 50, CompletionTokens: 7},
	}
}

func TestScopeRules(t *testing.T) {
	srv := MustServer(t)
	sc, _ := newScopeChecker(t, srv)
	ctx := context.Background()

	t.Run("Deny", func(t *testing.T) {
		v, err := sc.CheckScope(ctx, prompt("Should I buy crypto with my vacation pay?")) // deny wins over allow
		if err != nil {
			t.Fatal(err)
		}
		if v.InScope || !strings.Contains(v.Reason, "deny rule") {
			t.Errorf("verdict = %+v", v)
		}
		want := "Sorry <@U1>, that's outside what I can help with here. I'm set up for questions about ACME's HR policies &amp; benefits. If you have a question about that, ask away!"
		if v.Reply != want {
			t.Errorf("reply = %q\nwant %q", v.Reply, want)
		}
	})

	t.Run("Allow", func(t *testing.T) {
		v, err := sc.CheckScope(ctx, prompt("How many vacation days do I have?"))
		if err != nil || !v.InScope || !strings.Contains(v.Reason, "allow rule") || v.Reply != "" {
			t.Errorf("verdict = %+v, %v", v, err)
		}
	})

	t.Run("EmptyRequest", func(t *testing.T) {
		if v, err := sc.CheckScope(ctx, prompt("  ")); err != nil || !v.InScope {
			t.Errorf("verdict = %+v, %v", v, err)
		}
	})

	t.Run("NoDescription", func(t *testing.T) {
		rulesOnly := agents.NewScopeChecker(agents.ScopeConfig{Deny: []*regexp.Regexp{regexp.MustCompile(`secret`)}})
		if v, err := rulesOnly.CheckScope(ctx, prompt("anything at all")); err != nil || !v.InScope {
			t.Errorf("verdict = %+v, %v", v, err)
		}
		v, err := rulesOnly.CheckScope(ctx, prompt("tell me a secret"))
		if err != nil || v.InScope || v.Reply == "" {
			t.Errorf("verdict = %+v, %v", v, err)
		}
	})

	if n := len(srv.Requests()); n != 0 {
		t.Errorf("rules made %d model calls, want none", n)
	}
}

func TestScopeModel(t *testing.T) {
	ctx := context.Background()

	t.Run("InScope", func(t *testing.T) {
		srv := MustServer(t)
		sc, _ := newScopeChecker(t, srv)
		srv.Push(classify(true, "asks about parental leave"))
		p := prompt("What is the parental leave policy?")
		p.History = []conversation.Message{
			{Role: conversation.RoleUser, Text: "old one"},
			{Role: conversation.RoleUser, Text: "hi"}, {Role: conversation.RoleAssistant, Text: "Hello!"},
			{Role: conversation.RoleUser, Text: "about leave"}, {Role: conversation.RoleAssistant, Text: "Sure."},
		}
		v, err := sc.CheckScope(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if !v.InScope || v.Reason != "asks about parental leave" || v.Usage != (conversation.Usage{PromptTokens: 50, CompletionTokens: 7}) {
			t.Errorf("verdict = %+v", v)
		}
		r, _ := srv.LastRequest()
		if r.Chat.Model != "gpt-small" || len(r.Chat.Tools) != 1 || r.Chat.Tools[0].Function.Name != "classify_scope" {
			t.Errorf("request: model %q tools %v", r.Chat.Model, r.ToolNames())
		}
		// tool_choice forces the function.
		choice, _ := r.Chat.ToolChoice.(map[string]any)
		if fn, _ := choice["function"].(map[string]any); choice["type"] != "function" || fn["name"] != "classify_scope" {
			t.Errorf("tool_choice = %#v", r.Chat.ToolChoice)
		}
		if !strings.Contains(r.SystemPrompt(), "This assistant is for "+hrScope+".") {
			t.Errorf("system prompt = %s", r.SystemPrompt())
		}
		user := r.LastUserMessage()
		if !strings.Contains(user, "> What is the parental leave policy?") || !strings.Contains(user, "assistant: Sure.") || strings.Contains(user, "old one") {
			t.Errorf("classified message = %s", user)
		}
	})

	t.Run("OutOfScope", func(t *testing.T) {
		srv := MustServer(t)
		sc, _ := newScopeChecker(t, srv)
		srv.Push(classify(false, "a cooking question"))
		v, err := sc.CheckScope(ctx, prompt("How do I make risotto?"))
		if err != nil {
			t.Fatal(err)
		}
		if v.InScope || v.Reason != "a cooking question" || !strings.Contains(v.Reply, "I'm set up for questions about ACME's HR policies") || v.Usage.PromptTokens != 50 {
			t.Errorf("verdict = %+v", v)
		}
	})

	// Answers that weak or non-conforming models give.
	tests := []struct {
		name    string
		resp    openaitest.Response
		inScope bool
		warned  bool
	}{
		{"QuotedBoolean", classify("false", "nope"), false, false},
		{"TextNo", openaitest.Response{Text: "No."}, false, false},
		{"TextOutOfScope", openaitest.Response{Text: "OUT_OF_SCOPE"}, false, false},
		{"TextYes", openaitest.Response{Text: "yes"}, true, false},
		{"Garbage", openaitest.Response{Text: "Well, it depends on how you look at it."}, true, true},
		{"InvalidArguments", openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "classify_scope", Arguments: `{"in_scope": tru`}}}, true, true},
		{"OtherFunction", openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "answer", Arguments: `{"in_scope": false}`}}}, true, true},
		{"MissingField", classify(nil, "no decision"), true, true},
		{"Empty", openaitest.Response{Empty: true}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := MustServer(t)
			sc, logs := newScopeChecker(t, srv)
			srv.Push(tt.resp)
			v, err := sc.CheckScope(ctx, prompt("Is this in scope?"))
			if err != nil {
				t.Fatal(err)
			}
			if v.InScope != tt.inScope || (!v.InScope && v.Reply == "") {
				t.Errorf("verdict = %+v, want in scope %v", v, tt.inScope)
			}
			if warned := strings.Contains(logs.String(), "level=WARN"); warned != tt.warned {
				t.Errorf("warned = %v, want %v: %s", warned, tt.warned, logs)
			}
		})
	}

	t.Run("ModelError", func(t *testing.T) {
		srv := MustServer(t)
		sc, _ := newScopeChecker(t, srv)
		srv.Push(openaitest.Response{Status: 401, ErrorMessage: "Incorrect API key"})
		_, err := sc.CheckScope(ctx, prompt("Is this in scope?"))
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 {
			t.Errorf("err = %v, want the 401", err)
		}
	})
}
