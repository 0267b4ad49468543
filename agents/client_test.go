package agents_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

func userRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}},
	}
}

func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "openai", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestCompleteFixtures(t *testing.T) {
	srv := MustServer(t)
	client := newClient(t, srv)
	ctx := context.Background()

	// Every recorded stream must be covered here.
	files, _ := filepath.Glob(filepath.Join("testdata", "openai", "*.sse"))
	tested := map[string]bool{}

	run := func(t *testing.T, name string) agents.Completion {
		t.Helper()
		tested[name] = true
		srv.Push(openaitest.Response{RawSSE: readFixture(t, name)})
		comp, err := client.Complete(ctx, userRequest("weather?"))
		if err != nil {
			t.Fatal(err)
		}
		return comp
	}

	t.Run("Text", func(t *testing.T) {
		comp := run(t, "stream_text.sse")
		want := "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app."
		if comp.Content != want || comp.FinishReason != openai.FinishReasonStop || comp.Truncated || len(comp.ToolCalls) != 0 {
			t.Errorf("got %+v", comp)
		}
		if comp.Usage != (conversation.Usage{PromptTokens: 14, CompletionTokens: 30}) {
			t.Errorf("usage = %+v", comp.Usage)
		}
		if comp.Model != "gpt-4o-2024-08-06" || comp.Attempts != 1 {
			t.Errorf("model %q attempts %d", comp.Model, comp.Attempts)
		}
	})

	t.Run("SingleToolCall", func(t *testing.T) {
		comp := run(t, "stream_single_tool_call.sse")
		if comp.Content != "" || comp.FinishReason != openai.FinishReasonToolCalls || len(comp.ToolCalls) != 1 {
			t.Fatalf("got %+v", comp)
		}
		tc := comp.ToolCalls[0]
		if tc.ID != "call_c91SqDXlYFuETYv8mUHzz6pp" || tc.Type != openai.ToolTypeFunction || tc.Function.Name != "GetWeatherArgs" ||
			tc.Function.Arguments != `{"city":"Edinburgh","country":"UK","units":"c"}` || tc.Index != nil {
			t.Errorf("tool call = %+v", tc)
		}
		if comp.Usage != (conversation.Usage{PromptTokens: 76, CompletionTokens: 24}) {
			t.Errorf("usage = %+v", comp.Usage)
		}
	})

	t.Run("ParallelToolCalls", func(t *testing.T) {
		comp := run(t, "stream_parallel_tool_calls.sse")
		if comp.FinishReason != openai.FinishReasonToolCalls || len(comp.ToolCalls) != 2 {
			t.Fatalf("got %+v", comp)
		}
		want := []openai.ToolCall{
			{ID: "call_JMW1whyEaYG438VE1OIflxA2", Type: "function", Function: openai.FunctionCall{Name: "GetWeatherArgs", Arguments: `{"city": "Edinburgh", "country": "GB", "units": "c"}`}},
			{ID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Type: "function", Function: openai.FunctionCall{Name: "get_stock_price", Arguments: `{"ticker": "AAPL", "exchange": "NASDAQ"}`}},
		}
		for i := range want {
			if got := comp.ToolCalls[i]; got.ID != want[i].ID || got.Function != want[i].Function || got.Type != want[i].Type {
				t.Errorf("call %d = %+v, want %+v", i, got, want[i])
			}
		}
		if comp.Usage != (conversation.Usage{PromptTokens: 149, CompletionTokens: 60}) {
			t.Errorf("usage = %+v", comp.Usage)
		}
	})

	t.Run("FinishLength", func(t *testing.T) {
		comp := run(t, "stream_finish_length.sse")
		if comp.Content != `{"` || comp.FinishReason != openai.FinishReasonLength || !comp.Truncated {
			t.Errorf("got %+v", comp)
		}
		if comp.Usage != (conversation.Usage{PromptTokens: 79, CompletionTokens: 1}) {
			t.Errorf("usage = %+v", comp.Usage)
		}
	})

	for _, f := range files {
		if !tested[filepath.Base(f)] {
			t.Errorf("fixture %s is not replayed by this test", f)
		}
	}

	// What the client sent: a stream with usage.
	for _, r := range srv.Requests() {
		if !r.Chat.Stream || r.Chat.StreamOptions == nil || !r.Chat.StreamOptions.IncludeUsage {
			t.Errorf("request %d: stream=%v stream_options=%+v", r.N, r.Chat.Stream, r.Chat.StreamOptions)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization = %q", got)
		}
	}
}

// sse renders chunks as a server-sent event stream.
func sse(chunks ...string) []byte {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

func TestCompleteInterleavedToolCalls(t *testing.T) {
	srv := MustServer(t)
	client := newClient(t, srv)
	const c = `{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`
	d := func(delta string) string { return fmt.Sprintf(c, delta, "null") }
	srv.Push(openaitest.Response{RawSSE: sse(
		d(`{"role":"assistant","content":"Let me check. "}`),
		d(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"alpha","arguments":""}}]}`),
		d(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"beta","arguments":"{\"y\""}}]}`),
		d(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\":"}}]}`),
		d(`{"tool_calls":[{"index":1,"function":{"arguments":":2}"}}]}`),
		d(`{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}`),
		fmt.Sprintf(c, `{}`, `"tool_calls"`),
		`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}`,
	)})
	comp, err := client.Complete(context.Background(), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if comp.Content != "Let me check. " || len(comp.ToolCalls) != 2 {
		t.Fatalf("got %+v", comp)
	}
	if a := comp.ToolCalls[0]; a.ID != "call_a" || a.Function.Name != "alpha" || a.Function.Arguments != `{"x":1}` {
		t.Errorf("call 0 = %+v", a)
	}
	if b := comp.ToolCalls[1]; b.ID != "call_b" || b.Function.Name != "beta" || b.Function.Arguments != `{"y":2}` {
		t.Errorf("call 1 = %+v", b)
	}
	if comp.Usage != (conversation.Usage{PromptTokens: 5, CompletionTokens: 6}) {
		t.Errorf("usage = %+v", comp.Usage)
	}
	msg := comp.Message()
	if msg.Role != "assistant" || msg.Content != "Let me check. " || len(msg.ToolCalls) != 2 {
		t.Errorf("Message() = %+v", msg)
	}
}

// TestCompleteRefusalAndChoices checks what the client reads of a stream besides text
// and tool calls: a refusal (the content when there is none), the choices other than
// the first (left out), the finish reason and the usage, with the fields it does not
// use (logprobs, system_fingerprint) present.
func TestCompleteRefusalAndChoices(t *testing.T) {
	srv := MustServer(t)
	client := newClient(t, srv)
	const c = `{"id":"x","object":"chat.completion.chunk","created":1,"model":"m-1","system_fingerprint":"fp","choices":[%s]}`
	srv.Push(openaitest.Response{RawSSE: sse(
		fmt.Sprintf(c, `{"index":0,"delta":{"role":"assistant","refusal":"I can't "},"logprobs":null,"finish_reason":null}`),
		fmt.Sprintf(c, `{"index":1,"delta":{"content":"other choice"},"finish_reason":null},{"index":0,"delta":{"refusal":"help with that."},"finish_reason":null}`),
		fmt.Sprintf(c, `{"index":0,"delta":{},"finish_reason":"content_filter"}`),
		`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":0}}}`,
	)})
	var sink stringSink
	comp, err := client.Complete(agents.WithTextSink(context.Background(), &sink), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if comp.Content != "I can't help with that." || comp.FinishReason != openai.FinishReasonContentFilter || comp.Model != "m-1" || len(comp.ToolCalls) != 0 {
		t.Errorf("got %+v", comp)
	}
	if comp.Usage != (conversation.Usage{PromptTokens: 7, CompletionTokens: 3}) {
		t.Errorf("usage = %+v", comp.Usage)
	}
	if sink.b.Len() != 0 {
		t.Errorf("the sink was given %q; a refusal is not streamed, nor another choice", sink.b.String())
	}
}

// stringSink is a TextSink that keeps what it is given.
type stringSink struct{ b strings.Builder }

func (s *stringSink) Reset()         { s.b.Reset() }
func (s *stringSink) Write(d string) { s.b.WriteString(d) }

func TestCompleteScripted(t *testing.T) {
	srv := MustServer(t)
	client := newClient(t, srv)
	srv.Push(openaitest.Response{
		Text:      "Checking both.",
		ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "calculate", Arguments: `{"expression":"1+1"}`}, {ID: "c2", Name: "current_time"}},
		Usage:     openaitest.Usage{PromptTokens: 3, CompletionTokens: 4},
	})
	comp, err := client.Complete(context.Background(), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if comp.Content != "Checking both." || len(comp.ToolCalls) != 2 || comp.ToolCalls[0].Function.Arguments != `{"expression":"1+1"}` ||
		comp.ToolCalls[1].Function.Arguments != "{}" || comp.Usage.PromptTokens != 3 {
		t.Errorf("got %+v", comp)
	}
}

func TestCompleteErrors(t *testing.T) {
	ctx := context.Background()

	t.Run("EmptyResponse", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv)
		srv.Push(openaitest.Response{Empty: true, Usage: openaitest.Usage{PromptTokens: 9, CompletionTokens: 1}})
		comp, err := client.Complete(ctx, userRequest("x"))
		if !errors.Is(err, agents.ErrEmptyResponse) {
			t.Fatalf("err = %v, want ErrEmptyResponse", err)
		}
		if comp.Usage.PromptTokens != 9 {
			t.Errorf("usage = %+v, want it kept with the error", comp.Usage)
		}
		if !strings.HasPrefix(err.Error(), "agents: ") {
			t.Errorf("err = %q, want the package prefix", err)
		}
		// Empty content, no tool calls: also empty. Neither is retried.
		srv.Push(openaitest.Response{})
		if _, err := client.Complete(ctx, userRequest("x")); !errors.Is(err, agents.ErrEmptyResponse) {
			t.Errorf("err = %v, want ErrEmptyResponse", err)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("%d requests, want 2 (no retries)", n)
		}
	})

	t.Run("Length", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv)
		srv.Push(openaitest.Response{Text: "The answer is", FinishReason: "length"})
		comp, err := client.Complete(ctx, userRequest("x"))
		if err != nil || !comp.Truncated || comp.Content != "The answer is" {
			t.Errorf("got %+v, %v", comp, err)
		}
	})

	t.Run("RateLimitedThenSuccess", func(t *testing.T) {
		srv := MustServer(t)
		logger, logs := testLogger()
		client := newClient(t, srv, func(c *agents.ClientConfig) {
			c.APIKey = "sk-very-secret-key"
			c.Logger = logger
		})
		const retryAfter = 150 * time.Millisecond
		srv.Push(openaitest.Response{Status: http.StatusTooManyRequests, RetryAfter: retryAfter}, openaitest.Response{Text: "ok"})
		comp, err := client.Complete(ctx, userRequest("x"))
		if err != nil || comp.Content != "ok" || comp.Attempts != 2 {
			t.Fatalf("got %+v, %v", comp, err)
		}
		reqs := srv.Requests()
		if gap := reqs[1].Time.Sub(reqs[0].Time); gap < retryAfter {
			t.Errorf("retried after %s, want at least the Retry-After of %s", gap, retryAfter)
		}
		out := logs.String()
		if !strings.Contains(out, "retrying") {
			t.Errorf("no retry logged: %s", out)
		}
		if strings.Contains(out, "sk-very-secret-key") {
			t.Errorf("the API key was logged: %s", out)
		}
		if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-very-secret-key" {
			t.Errorf("Authorization = %q", got)
		}
	})

	t.Run("ServerErrorRetried", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv)
		srv.Push(openaitest.Response{Status: 500}, openaitest.Response{Status: 502}, openaitest.Response{Text: "ok"})
		comp, err := client.Complete(ctx, userRequest("x"))
		if err != nil || comp.Content != "ok" || comp.Attempts != 3 {
			t.Errorf("got %+v, %v", comp, err)
		}
	})

	t.Run("ErrorInStreamRetried", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv)
		srv.Push(
			openaitest.Response{RawSSE: []byte("data: {\"error\": {\"message\": \"The server had an error\", \"type\": \"server_error\"}}\n\n")},
			openaitest.Response{Text: "ok"},
		)
		comp, err := client.Complete(ctx, userRequest("x"))
		if err != nil || comp.Content != "ok" || comp.Attempts != 2 {
			t.Errorf("got %+v, %v", comp, err)
		}
	})

	t.Run("BadRequestNotRetried", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv)
		srv.Push(openaitest.Response{Status: 400, ErrorMessage: "bad schema"}, openaitest.Response{Text: "never"})
		_, err := client.Complete(ctx, userRequest("x"))
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || apiErr.Message != "bad schema" {
			t.Fatalf("err = %v, want the 400 APIError", err)
		}
		if n := len(srv.Requests()); n != 1 || srv.Pending() != 1 {
			t.Errorf("%d requests, %d pending: want 1 and 1", n, srv.Pending())
		}
	})

	t.Run("RetriesExhausted", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv, func(c *agents.ClientConfig) { c.MaxRetries = 2 })
		srv.Handle(func(openaitest.Request) openaitest.Response { return openaitest.Response{Status: 503} })
		_, err := client.Complete(ctx, userRequest("x"))
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 || !strings.Contains(err.Error(), "after 3 attempts") {
			t.Errorf("err = %v", err)
		}
		if n := len(srv.Requests()); n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})

	t.Run("NoRetries", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv, func(c *agents.ClientConfig) { c.MaxRetries = -1 })
		srv.Push(openaitest.Response{Status: 503}, openaitest.Response{Text: "never"})
		if _, err := client.Complete(ctx, userRequest("x")); err == nil || len(srv.Requests()) != 1 {
			t.Errorf("err = %v after %d requests, want an error after 1", err, len(srv.Requests()))
		}
	})

	t.Run("RetryAfterBeyondMaxElapsed", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv, func(c *agents.ClientConfig) { c.MaxElapsed = time.Second })
		srv.Push(openaitest.Response{Status: 429, RetryAfter: time.Hour}, openaitest.Response{Text: "never"})
		_, err := client.Complete(ctx, userRequest("x"))
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 {
			t.Errorf("err = %v, want the 429 at once", err)
		}
	})

	t.Run("TimeoutRetried", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv, func(c *agents.ClientConfig) { c.Timeout = 300 * time.Millisecond })
		srv.Push(openaitest.Response{Text: "late", Delay: time.Hour}, openaitest.Response{Text: "ok"})
		comp, err := client.Complete(ctx, userRequest("x"))
		if err != nil || comp.Content != "ok" || comp.Attempts != 2 {
			t.Errorf("got %+v, %v", comp, err)
		}
	})

	t.Run("TimeoutExhausted", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv, func(c *agents.ClientConfig) { c.Timeout = 20 * time.Millisecond; c.MaxRetries = 1 })
		srv.Handle(func(openaitest.Request) openaitest.Response { return openaitest.Response{Delay: time.Hour} })
		_, err := client.Complete(ctx, userRequest("x"))
		if !errors.Is(err, agents.ErrTimeout) {
			t.Errorf("err = %v, want ErrTimeout", err)
		}
	})

	t.Run("ConnectionRefusedRetried", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		client := agents.NewClient(agents.ClientConfig{BaseURL: "http://" + addr + "/v1", MaxRetries: 2, InitialBackoff: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		_, err = client.Complete(ctx, userRequest("x"))
		if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "after 3 attempts") {
			t.Errorf("err = %v, want connection refused after 3 attempts", err)
		}
	})

	t.Run("CancelStops", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv)
		ctx, cancel := context.WithCancel(ctx)
		// Cancel once the server has the request, and keep it waiting.
		srv.Handle(func(r openaitest.Request) openaitest.Response {
			if r.N == 1 {
				cancel()
				return openaitest.Response{Text: "late", Delay: time.Hour}
			}
			return openaitest.Response{Text: "never"}
		})
		_, err := client.Complete(ctx, userRequest("x"))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1 (no retry after cancel)", n)
		}
	})

	t.Run("CancelDuringBackoff", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv)
		srv.Push(openaitest.Response{Status: 429, RetryAfter: 30 * time.Second}, openaitest.Response{Text: "never"})
		ctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := client.Complete(ctx, userRequest("x"))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

func TestClientConfigHidesKey(t *testing.T) {
	cfg := agents.ClientConfig{BaseURL: "https://api.example.com/v1", APIKey: "sk-secret"}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "cfg", cfg)
	for _, s := range []string{buf.String(), cfg.String(), fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
		if strings.Contains(s, "sk-secret") {
			t.Errorf("key leaked: %s", s)
		}
	}
}
