package agents_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

func TestExecutorToolRoundTrip(t *testing.T) {
	srv := MustServer(t)
	exec := newExecutor(t, srv, nil)
	srv.Push(
		openaitest.Response{
			ToolCalls: []openaitest.ToolCall{{ID: "call_time", Name: "current_time", Arguments: `{"timezone":"Europe/Paris"}`}},
			Usage:     openaitest.Usage{PromptTokens: 100, CompletionTokens: 10},
		},
		openaitest.Response{Text: "It is **13:00** in Paris.", Usage: openaitest.Usage{PromptTokens: 150, CompletionTokens: 8}},
	)
	var progress statuses
	f, err := exec.Execute(context.Background(), prompt("What time is it in Paris?"), progress.Report)
	if err != nil {
		t.Fatal(err)
	}
	if f.Answer != "It is **13:00** in Paris." || f.Steps != 2 || f.Truncated {
		t.Errorf("findings = %+v", f)
	}
	if f.Usage != (conversation.Usage{PromptTokens: 250, CompletionTokens: 18}) {
		t.Errorf("usage = %+v, want the sum of both calls", f.Usage)
	}
	if len(f.ToolCalls) != 1 {
		t.Fatalf("tool calls = %+v", f.ToolCalls)
	}
	tc := f.ToolCalls[0]
	if tc.Name != "current_time" || tc.Arguments != `{"timezone":"Europe/Paris"}` || tc.Failed ||
		!strings.HasPrefix(tc.Result, "2024-05-14T13:00:00+02:00 (Tuesday, 14 May 2024, 13:00 CEST, Europe/Paris)") {
		t.Errorf("tool call = %+v", tc)
	}
	if len(progress.List) != 1 || progress.List[0] != "Running current_time…" {
		t.Errorf("progress = %q", progress.List)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := reqs[0].Chat
	if first.Model != "gpt-main" || first.ToolChoice != "auto" || !first.Stream || first.StreamOptions == nil || !first.StreamOptions.IncludeUsage {
		t.Errorf("first request: model %q tool_choice %v stream %v", first.Model, first.ToolChoice, first.Stream)
	}
	if got := strings.Join(reqs[0].ToolNames(), ","); got != "calculate,current_time" {
		t.Errorf("tools offered = %s", got)
	}
	sys := reqs[0].SystemPrompt()
	for _, want := range []string{"Tuesday, 14 May 2024 (UTC)", "### general", "- calculate: ", "- current_time: ", "Slack"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	msgs := reqs[1].Chat.Messages
	if len(msgs) != 4 {
		t.Fatalf("second request has %d messages, want system, user, assistant, tool", len(msgs))
	}
	if msgs[2].Role != "assistant" || len(msgs[2].ToolCalls) != 1 || msgs[2].ToolCalls[0].ID != "call_time" || msgs[2].ToolCalls[0].Function.Name != "current_time" {
		t.Errorf("assistant message = %+v", msgs[2])
	}
	if msgs[3].Role != "tool" || msgs[3].ToolCallID != "call_time" || msgs[3].Content != agents.ToolOutput("current_time", agents.TrustInternal, tc.Result) {
		t.Errorf("tool message = %+v", msgs[3])
	}
}

func TestExecutorParallelTools(t *testing.T) {
	// Both tools wait at a barrier that opens only when both are running: run one
	// after the other, the first would time out and the test would fail.
	var (
		mu      sync.Mutex
		arrived int
		open    = make(chan struct{})
	)
	barrier := func(name string) agents.ToolFunc {
		return func(ctx context.Context, args json.RawMessage) (string, error) {
			mu.Lock()
			arrived++
			if arrived == 2 {
				close(open)
			}
			mu.Unlock()
			select {
			case <-open:
				return name + " ran with " + string(args), nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
	}
	srv := MustServer(t)
	exec := newExecutor(t, srv, map[string]agents.ToolFunc{"alpha": barrier("alpha"), "beta": barrier("beta")})
	srv.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{ID: "call_b", Name: "beta", Arguments: `{"n":2}`},
			{ID: "call_a", Name: "alpha", Arguments: `{"n":1}`},
		}},
		openaitest.Response{Text: "Both done."},
	)
	var progress statuses
	f, err := exec.Execute(context.Background(), prompt("run both"), progress.Report)
	if err != nil {
		t.Fatal(err)
	}
	if f.Answer != "Both done." || len(f.ToolCalls) != 2 {
		t.Fatalf("findings = %+v", f)
	}
	for i, want := range []string{`beta ran with {"n":2}`, `alpha ran with {"n":1}`} {
		if got := f.ToolCalls[i]; got.Result != want || got.Failed {
			t.Errorf("tool call %d = %+v, want result %q", i, got, want)
		}
	}
	if progress.List[0] != "Running beta, alpha…" {
		t.Errorf("progress = %q", progress.List)
	}
	// Both results go back, in the order the model asked, each under its call's id.
	results := srv.Requests()[1].ToolResults()
	if len(results) != 2 ||
		results[0].ToolCallID != "call_b" || results[0].Content != agents.ToolOutput("beta", agents.TrustInternal, `beta ran with {"n":2}`) ||
		results[1].ToolCallID != "call_a" || results[1].Content != agents.ToolOutput("alpha", agents.TrustInternal, `alpha ran with {"n":1}`) {
		t.Errorf("tool results = %+v", results)
	}
}

func TestExecutorToolFailuresGoBackToTheModel(t *testing.T) {
	// stuck ignores its context on purpose (the executor must not wait for such a
	// tool); block lets it return when the test ends.
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	srv := MustServer(t)
	reg := agents.NewRegistry()
	reg.MustRegister(agents.ToolSpec{Name: "failing", Description: "fails"}, agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) {
		return "", errors.New("database is down")
	}))
	reg.MustRegister(agents.ToolSpec{Name: "stuck", Description: "ignores its context", Timeout: 50 * time.Millisecond}, agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) {
		<-block
		return "too late", nil
	}))
	reg.MustRegister(agents.ToolSpec{Name: "slow", Description: "honours its context", Timeout: 50 * time.Millisecond}, agents.ToolFunc(func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	reg.MustRegister(agents.ToolSpec{Name: "panicky", Description: "panics"}, agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) {
		panic("nil map write")
	}))
	reg.MustRegister(toolbox.Calculate())
	logger, logs := testLogger()
	exec := agents.NewExecutor(agents.ExecutorConfig{Client: newClient(t, srv), Model: "m", Registry: reg, Logger: logger})

	srv.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{ID: "c1", Name: "failing"},
			{ID: "c2", Name: "stuck"},
			{ID: "c3", Name: "slow"},
			{ID: "c4", Name: "panicky"},
			{ID: "c5", Name: "no_such_tool", Arguments: `{}`},
			{ID: "c6", Name: "calculate", Arguments: `{"expression": "2+`},
			{ID: "c7", Name: "calculate", Arguments: `["2+2"]`},
			{ID: "c8", Name: "calculate", Arguments: `{"expression": "6*7"}`},
		}},
		openaitest.Response{Text: "Only the calculation worked: 42."},
	)
	f, err := exec.Execute(context.Background(), prompt("try everything"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Answer != "Only the calculation worked: 42." || f.Steps != 2 {
		t.Errorf("findings = %+v", f)
	}
	want := []struct {
		failed bool
		result string
	}{
		{true, "error: database is down"},
		{true, "error: timed out after 50ms"},
		{true, "error: timed out after 50ms"},
		{true, "error: the tool crashed: nil map write"},
		{true, `error: tool "no_such_tool" is not available in this conversation; the available tools are: calculate, failing, panicky, slow, stuck`},
		{true, `error: the arguments are not a valid JSON object: {"expression": "2+`},
		{true, `error: the arguments are not a valid JSON object: ["2+2"]`},
		{false, "42"},
	}
	if len(f.ToolCalls) != len(want) {
		t.Fatalf("%d tool calls, want %d", len(f.ToolCalls), len(want))
	}
	results := srv.Requests()[1].ToolResults()
	for i, w := range want {
		got := f.ToolCalls[i]
		if got.Failed != w.failed || got.Result != w.result {
			t.Errorf("call %d (%s) = failed %v, %q; want %v, %q", i, got.Name, got.Failed, got.Result, w.failed, w.result)
		}
		if results[i].ToolCallID != fmt.Sprintf("c%d", i+1) || results[i].Content != agents.ToolOutput(got.Name, agents.TrustInternal, w.result) {
			t.Errorf("tool message %d = %+v", i, results[i])
		}
	}
	if out := logs.String(); !strings.Contains(out, "tool panicked") || !strings.Contains(out, "stack=") {
		t.Errorf("the panic was not logged with its stack: %s", out)
	}
}

func TestExecutorStepBound(t *testing.T) {
	srv := MustServer(t)
	exec := newExecutor(t, srv, nil, func(c *agents.ExecutorConfig) { c.MaxSteps = 3 })
	// A model that never stops asking for tools while it has them.
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		if len(r.Chat.Tools) > 0 {
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "current_time"}}, Usage: openaitest.Usage{PromptTokens: 10, CompletionTokens: 1}}
		}
		return openaitest.Response{Text: "Best effort: it is 11:00 UTC.", Usage: openaitest.Usage{PromptTokens: 10, CompletionTokens: 1}}
	})
	var progress statuses
	f, err := exec.Execute(context.Background(), prompt("loop forever"), progress.Report)
	if err != nil {
		t.Fatal(err)
	}
	if f.Answer != "Best effort: it is 11:00 UTC." || !f.Truncated || f.Steps != 4 || len(f.ToolCalls) != 3 {
		t.Errorf("findings = %+v", f)
	}
	if f.Usage != (conversation.Usage{PromptTokens: 40, CompletionTokens: 4}) {
		t.Errorf("usage = %+v", f.Usage)
	}
	last, _ := srv.LastRequest()
	if len(last.Chat.Tools) != 0 || last.Chat.ToolChoice != nil {
		t.Errorf("final request offers tools: %v %v", last.ToolNames(), last.Chat.ToolChoice)
	}
	if !strings.Contains(last.LastUserMessage(), "all 3 steps") {
		t.Errorf("final request's last user message = %q", last.LastUserMessage())
	}
	if got := progress.List[len(progress.List)-1]; got != "Writing the answer…" {
		t.Errorf("last progress = %q", got)
	}
}

func TestExecutorTokenBudget(t *testing.T) {
	srv := MustServer(t)
	exec := newExecutor(t, srv, nil, func(c *agents.ExecutorConfig) { c.TokenBudget = 100 })
	srv.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "current_time"}}, Usage: openaitest.Usage{PromptTokens: 90, CompletionTokens: 20}},
		openaitest.Response{Text: "Out of budget answer."},
	)
	f, err := exec.Execute(context.Background(), prompt("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Answer != "Out of budget answer." || !f.Truncated || f.Steps != 2 {
		t.Errorf("findings = %+v", f)
	}
	if last, _ := srv.LastRequest(); len(last.Chat.Tools) != 0 {
		t.Error("the call after the budget offered tools")
	}
}

func TestExecutorLengthCutOff(t *testing.T) {
	srv := MustServer(t)
	exec := newExecutor(t, srv, nil)
	srv.Push(openaitest.Response{Text: "The three reasons are: first,", FinishReason: "length"})
	f, err := exec.Execute(context.Background(), prompt("why?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Answer != "The three reasons are: first," || !f.Truncated || f.Steps != 1 {
		t.Errorf("findings = %+v", f)
	}
}

func TestExecutorEmptyResponse(t *testing.T) {
	t.Run("RetriedOnce", func(t *testing.T) {
		srv := MustServer(t)
		exec := newExecutor(t, srv, nil)
		srv.Push(openaitest.Response{Empty: true}, openaitest.Response{Text: "Here you go."})
		f, err := exec.Execute(context.Background(), prompt("x"), nil)
		if err != nil || f.Answer != "Here you go." || f.Steps != 2 {
			t.Errorf("findings = %+v, %v", f, err)
		}
	})
	t.Run("BlankCountsAsEmpty", func(t *testing.T) {
		srv := MustServer(t)
		exec := newExecutor(t, srv, nil)
		srv.Push(openaitest.Response{Text: " \n "}, openaitest.Response{Text: "Here you go."})
		f, err := exec.Execute(context.Background(), prompt("x"), nil)
		if err != nil || f.Answer != "Here you go." {
			t.Errorf("findings = %+v, %v", f, err)
		}
	})
	t.Run("TwiceFails", func(t *testing.T) {
		srv := MustServer(t)
		exec := newExecutor(t, srv, nil)
		srv.Push(openaitest.Response{Empty: true, Usage: openaitest.Usage{PromptTokens: 5, CompletionTokens: 1}}, openaitest.Response{})
		f, err := exec.Execute(context.Background(), prompt("x"), nil)
		if !errors.Is(err, agents.ErrEmptyResponse) {
			t.Fatalf("err = %v, want ErrEmptyResponse", err)
		}
		if f.Steps != 2 || f.Usage.PromptTokens < 5 {
			t.Errorf("findings = %+v, want the steps and usage so far", f)
		}
	})
}

func TestExecutorCancel(t *testing.T) {
	t.Run("BetweenSteps", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		srv := MustServer(t)
		exec := newExecutor(t, srv, map[string]agents.ToolFunc{
			"stop": func(context.Context, json.RawMessage) (string, error) { cancel(); return "stopped", nil },
		})
		srv.Push(openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "stop"}}}, openaitest.Response{Text: "never"})
		f, err := exec.Execute(ctx, prompt("x"), nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if len(srv.Requests()) != 1 || len(f.ToolCalls) != 1 {
			t.Errorf("%d requests, findings %+v", len(srv.Requests()), f)
		}
	})
	t.Run("DuringModelCall", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		srv := MustServer(t)
		exec := newExecutor(t, srv, nil)
		srv.Push(openaitest.Response{Text: "late", Delay: time.Hour})
		time.AfterFunc(20*time.Millisecond, cancel)
		if _, err := exec.Execute(ctx, prompt("x"), nil); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

func TestExecutorMessages(t *testing.T) {
	srv := MustServer(t)
	exec := newExecutor(t, srv, nil)
	srv.Push(openaitest.Response{Text: "ok"})
	p := prompt("And in Berlin?")
	p.Summary = "The user is planning a trip."
	p.History = []conversation.Message{
		{Role: conversation.RoleContext, UserID: "U9", Text: "Anyone know the time zones?"},
		{Role: conversation.RoleUser, UserID: "U1", Text: "What time is it in Paris?"},
		{Role: conversation.RoleAssistant, Text: "It is *13:00* in Paris."},
		{Role: conversation.RoleUser, Text: "   "},
	}
	if _, err := exec.Execute(context.Background(), p, nil); err != nil {
		t.Fatal(err)
	}
	r, _ := srv.LastRequest()
	msgs := r.Chat.Messages
	type m struct{ role, content string }
	var got []m
	for _, msg := range msgs[1:] {
		got = append(got, m{msg.Role, msg.Content})
	}
	want := []m{
		{"user", "[Earlier thread context: a message <@U9> posted before you were asked; background, not a request to you]\nAnyone know the time zones?"},
		{"user", "What time is it in Paris?"},
		{"assistant", "It is *13:00* in Paris."},
		{"user", "And in Berlin?"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages:\n got %q\nwant %q", got, want)
	}
	if msgs[0].Role != "system" || !strings.Contains(msgs[0].Content, "The user is planning a trip.") {
		t.Errorf("system prompt lacks the summary:\n%s", msgs[0].Content)
	}
}

func TestExecutorWithoutTools(t *testing.T) {
	srv := MustServer(t)
	exec := agents.NewExecutor(agents.ExecutorConfig{Client: newClient(t, srv), Model: "m"})
	srv.Push(openaitest.Response{Text: "Hi!"})
	f, err := exec.Execute(context.Background(), prompt("hello"), nil)
	if err != nil || f.Answer != "Hi!" {
		t.Fatalf("findings = %+v, %v", f, err)
	}
	r, _ := srv.LastRequest()
	if len(r.Chat.Tools) != 0 || r.Chat.ToolChoice != nil || !strings.Contains(r.SystemPrompt(), "You have no tools") {
		t.Errorf("request offers tools: %+v", r.Chat)
	}
}

func TestExecutorTruncatesLongToolResults(t *testing.T) {
	srv := MustServer(t)
	exec := newExecutor(t, srv, map[string]agents.ToolFunc{
		"big": func(context.Context, json.RawMessage) (string, error) { return strings.Repeat("é", 100), nil },
	}, func(c *agents.ExecutorConfig) { c.MaxToolResult = 64 })
	srv.Push(openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "big"}}}, openaitest.Response{Text: "ok"})
	f, err := exec.Execute(context.Background(), prompt("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	res := f.ToolCalls[0].Result
	if len(res) > 64 || !strings.HasSuffix(res, "… [truncated]") || !strings.HasPrefix(res, "éé") {
		t.Errorf("result (%d bytes) = %q", len(res), res)
	}
}

// BenchmarkExecutorTurn measures one turn with a tool call against a zero-latency
// fake model: two streamed model calls through HTTP and one calculate run.
func BenchmarkExecutorTurn(b *testing.B) {
	srv := MustServer(b)
	exec := newExecutor(b, srv, nil)
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		msgs := r.Chat.Messages
		if msgs[len(msgs)-1].Role == openai.ChatMessageRoleTool {
			return openaitest.Response{Text: "The result is **42**, as computed.", Usage: openaitest.Usage{PromptTokens: 200, CompletionTokens: 9}}
		}
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "calculate", Arguments: `{"expression":"6*7"}`}}, Usage: openaitest.Usage{PromptTokens: 180, CompletionTokens: 12}}
	})
	p := prompt("What is six times seven?")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		f, err := exec.Execute(ctx, p, nil)
		if err != nil || f.Steps != 2 {
			b.Fatalf("findings %+v, %v", f, err)
		}
	}
}

// TestExecutorSystemPromptFollowsChanges runs turns of one Executor between which its
// system prompt's data changes: a tool registered, the next day, a summary. Each
// turn's system prompt and tools say what is true at that turn (the rendered prompt
// and the tools list are reused only while they are the same).
func TestExecutorSystemPromptFollowsChanges(t *testing.T) {
	srv := MustServer(t)
	srv.Handle(func(openaitest.Request) openaitest.Response { return openaitest.Response{Text: "ok"} })
	var day atomic.Int64
	reg := agents.NewRegistry()
	reg.MustRegister(toolbox.Calculate())
	exec := agents.NewExecutor(agents.ExecutorConfig{Client: newClient(t, srv), Model: "gpt-main", Registry: reg,
		Now: func() time.Time { return fixedNow().AddDate(0, 0, int(day.Load())) }})
	turn := func(p conversation.Prompt, wants, unwanted []string) {
		t.Helper()
		if _, err := exec.Execute(context.Background(), p, nil); err != nil {
			t.Fatal(err)
		}
		last, _ := srv.LastRequest()
		contains(t, "system prompt", last.SystemPrompt(), wants...)
		lacks(t, "system prompt", last.SystemPrompt(), unwanted...)
		if got, want := strings.Join(last.ToolNames(), ","), strings.Join(reg.Names(), ","); got != want {
			t.Errorf("tools offered = %s, want %s", got, want)
		}
	}
	p := prompt("hi")
	turn(p, []string{"Tuesday, 14 May 2024", "- calculate: "}, []string{"current_time"})
	turn(p, []string{"Tuesday, 14 May 2024", "- calculate: "}, []string{"current_time"})
	reg.MustRegister(toolbox.CurrentTime(fixedNow))
	turn(p, []string{"Tuesday, 14 May 2024", "- calculate: ", "- current_time: "}, nil)
	day.Store(1)
	turn(p, []string{"Wednesday, 15 May 2024", "- current_time: "}, []string{"Tuesday"})
	p.Summary = "They asked about the Q3 budget."
	turn(p, []string{"Wednesday, 15 May 2024", "They asked about the Q3 budget."}, nil)
	p.Summary = ""
	turn(p, []string{"Wednesday, 15 May 2024"}, []string{"Q3 budget"})
}

// TestExecutorLogsNameTheConversation checks that what a turn logs names its
// conversation: the warning of an empty model response, asked again.
func TestExecutorLogsNameTheConversation(t *testing.T) {
	srv := MustServer(t)
	logger, logs := testLogger()
	exec := newExecutor(t, srv, nil, func(c *agents.ExecutorConfig) { c.Logger = logger })
	srv.Push(openaitest.Response{Empty: true}, openaitest.Response{Text: "ok"})
	if f, err := exec.Execute(context.Background(), prompt("hi"), nil); err != nil || f.Answer != "ok" {
		t.Fatalf("findings %+v, %v", f, err)
	}
	contains(t, "log", logs.String(), "empty model response; asking again", "conversation=T1/C1/1.2")
}

// replay is an http.RoundTripper that sends its first request to next and answers
// every later one with a copy of that first response, so that a benchmark measures
// the client's side of a model call alone.
type replay struct {
	next http.RoundTripper
	once sync.Once
	resp *http.Response
	body []byte
	err  error
}

func (r *replay) RoundTrip(req *http.Request) (*http.Response, error) {
	r.once.Do(func() {
		var resp *http.Response
		if resp, r.err = r.next.RoundTrip(req); r.err != nil {
			return
		}
		defer resp.Body.Close()
		r.resp = resp
		r.body, r.err = io.ReadAll(resp.Body)
	})
	if r.err != nil {
		return nil, r.err
	}
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	resp := *r.resp
	resp.Request = req
	resp.Body = io.NopCloser(bytes.NewReader(r.body))
	return &resp, nil
}

// countSink is a TextSink that counts what it is given.
type countSink struct{ n int }

func (s *countSink) Reset()         { s.n = 0 }
func (s *countSink) Write(d string) { s.n += len(d) }

// BenchmarkExecutorPlainAnswer measures the client's side of a turn that answers a
// plain question, as BenchmarkBurst's turns do (cmd/threadwright): one streamed
// model call offering the default tools, its text given to a sink. The model's
// response is the fake server's, recorded once and replayed, so the server's work
// is not counted.
func BenchmarkExecutorPlainAnswer(b *testing.B) {
	srv := MustServer(b)
	srv.Handle(func(openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: "answer to: burst question q1q", Usage: openaitest.Usage{PromptTokens: 900, CompletionTokens: 8}}
	})
	reg := agents.NewRegistry()
	reg.MustRegister(toolbox.CurrentTime(fixedNow))
	reg.MustRegister(toolbox.Calculate())
	reg.MustRegister(agents.Recall())
	reg.MustRegister(web.FetchURLTool(web.FetchConfig{}))
	logger, _ := testLogger()
	client := newClient(b, srv, func(c *agents.ClientConfig) {
		c.HTTPClient = &http.Client{Transport: &replay{next: http.DefaultTransport}}
	})
	exec := agents.NewExecutor(agents.ExecutorConfig{
		Client: client, Model: "gpt-main", Registry: reg, ToolTimeout: 5 * time.Second, Now: fixedNow, Logger: logger,
	})
	p := prompt("burst question q1q")
	sink := &countSink{}
	p.AnswerSink = sink
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		f, err := exec.Execute(ctx, p, nil)
		if err != nil || f.Answer != "answer to: burst question q1q" || sink.n == 0 {
			b.Fatalf("findings %+v, %v", f, err)
		}
		sink.n = 0
	}
}
