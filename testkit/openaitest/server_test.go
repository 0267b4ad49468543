package openaitest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/testkit/openaitest"
)

func newServer(t *testing.T) (*openaitest.Server, *openai.Client) {
	t.Helper()
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return srv, openai.NewClientWithConfig(srv.ClientConfig())
}

func chatRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}},
	}
}

// collect reads a whole stream the simple way, to check what the server sent.
type collected struct {
	content string
	calls   map[int]*openai.ToolCall
	finish  openai.FinishReason
	usage   *openai.Usage
	chunks  int
}

func readStream(t *testing.T, stream *openai.ChatCompletionStream) collected {
	t.Helper()
	defer stream.Close()
	c := collected{calls: map[int]*openai.ToolCall{}}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return c
		}
		if err != nil {
			t.Errorf("Recv: %v", err) // not Fatal: also called from other goroutines
			return c
		}
		c.chunks++
		if resp.Usage != nil {
			c.usage = resp.Usage
		}
		for _, ch := range resp.Choices {
			c.content += ch.Delta.Content
			for _, d := range ch.Delta.ToolCalls {
				tc := c.calls[*d.Index]
				if tc == nil {
					tc = &openai.ToolCall{}
					c.calls[*d.Index] = tc
				}
				if d.ID != "" {
					tc.ID = d.ID
				}
				tc.Function.Name += d.Function.Name
				tc.Function.Arguments += d.Function.Arguments
			}
			if ch.FinishReason != "" {
				c.finish = ch.FinishReason
			}
		}
	}
}

func TestServerURL(t *testing.T) {
	srv, _ := newServer(t)
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || !strings.HasSuffix(srv.URL(), "/v1") {
		t.Errorf("URL() = %q", srv.URL())
	}
}

func TestNonStreamed(t *testing.T) {
	ctx := context.Background()
	srv, client := newServer(t)

	t.Run("Text", func(t *testing.T) {
		srv.Push(openaitest.Response{Text: "Hello there.", Usage: openaitest.Usage{PromptTokens: 12, CompletionTokens: 3}})
		resp, err := client.CreateChatCompletion(ctx, chatRequest("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Choices) != 1 || resp.Choices[0].Message.Content != "Hello there." || resp.Choices[0].FinishReason != openai.FinishReasonStop {
			t.Errorf("got %+v", resp.Choices)
		}
		if resp.Usage.PromptTokens != 12 || resp.Usage.CompletionTokens != 3 || resp.Usage.TotalTokens != 15 {
			t.Errorf("usage = %+v", resp.Usage)
		}
		if resp.Model != "gpt-test" {
			t.Errorf("model = %q", resp.Model)
		}
	})

	t.Run("ToolCalls", func(t *testing.T) {
		srv.Push(openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{ID: "call_a", Name: "current_time", Arguments: `{"timezone":"UTC"}`},
			{Name: "calculate"},
		}})
		resp, err := client.CreateChatCompletion(ctx, chatRequest("time and math"))
		if err != nil {
			t.Fatal(err)
		}
		ch := resp.Choices[0]
		if ch.FinishReason != openai.FinishReasonToolCalls || len(ch.Message.ToolCalls) != 2 {
			t.Fatalf("got %+v", ch)
		}
		if tc := ch.Message.ToolCalls[0]; tc.ID != "call_a" || tc.Function.Name != "current_time" || tc.Function.Arguments != `{"timezone":"UTC"}` {
			t.Errorf("call 0 = %+v", tc)
		}
		if tc := ch.Message.ToolCalls[1]; tc.ID == "" || tc.Function.Arguments != "{}" {
			t.Errorf("call 1 = %+v, want a default id and {} arguments", tc)
		}
	})

	t.Run("Empty", func(t *testing.T) {
		srv.Push(openaitest.Response{Empty: true})
		resp, err := client.CreateChatCompletion(ctx, chatRequest("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Choices) != 0 {
			t.Errorf("choices = %+v, want none", resp.Choices)
		}
	})
}

func TestStreamed(t *testing.T) {
	ctx := context.Background()
	srv, client := newServer(t)
	streamReq := func(text string, usage bool) openai.ChatCompletionRequest {
		r := chatRequest(text)
		if usage {
			r.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
		}
		return r
	}

	t.Run("Text", func(t *testing.T) {
		srv.Push(openaitest.Response{Text: "The time is noon, más o menos.", Usage: openaitest.Usage{PromptTokens: 7, CompletionTokens: 9}})
		stream, err := client.CreateChatCompletionStream(ctx, streamReq("time?", true))
		if err != nil {
			t.Fatal(err)
		}
		c := readStream(t, stream)
		if c.content != "The time is noon, más o menos." || c.finish != openai.FinishReasonStop {
			t.Errorf("got %q %q", c.content, c.finish)
		}
		if c.chunks < 5 {
			t.Errorf("got %d chunks, want the text in pieces", c.chunks)
		}
		if c.usage == nil || c.usage.PromptTokens != 7 || c.usage.CompletionTokens != 9 {
			t.Errorf("usage = %+v", c.usage)
		}
	})

	t.Run("NoUsageUnlessAsked", func(t *testing.T) {
		srv.Push(openaitest.Response{Text: "ok"})
		stream, err := client.CreateChatCompletionStream(ctx, streamReq("x", false))
		if err != nil {
			t.Fatal(err)
		}
		if c := readStream(t, stream); c.usage != nil {
			t.Errorf("usage = %+v, want none without stream_options.include_usage", c.usage)
		}
	})

	t.Run("ToolCalls", func(t *testing.T) {
		args := `{"expression": "(2 + 3) * 4", "note": "ünïcödé"}`
		srv.Push(openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{ID: "call_1", Name: "calculate", Arguments: args},
			{ID: "call_2", Name: "current_time", Arguments: `{}`},
		}})
		stream, err := client.CreateChatCompletionStream(ctx, streamReq("x", true))
		if err != nil {
			t.Fatal(err)
		}
		c := readStream(t, stream)
		if c.finish != openai.FinishReasonToolCalls || len(c.calls) != 2 {
			t.Fatalf("got %+v", c)
		}
		if tc := c.calls[0]; tc.ID != "call_1" || tc.Function.Name != "calculate" || tc.Function.Arguments != args {
			t.Errorf("call 0 = %+v", tc)
		}
		if tc := c.calls[1]; tc.ID != "call_2" || tc.Function.Name != "current_time" || tc.Function.Arguments != "{}" {
			t.Errorf("call 1 = %+v", tc)
		}
		if c.usage == nil || c.usage.PromptTokens == 0 || c.usage.CompletionTokens == 0 {
			t.Errorf("usage = %+v, want an estimate", c.usage)
		}
	})

	t.Run("FinishLength", func(t *testing.T) {
		srv.Push(openaitest.Response{Text: "cut", FinishReason: "length"})
		stream, err := client.CreateChatCompletionStream(ctx, streamReq("x", false))
		if err != nil {
			t.Fatal(err)
		}
		if c := readStream(t, stream); c.finish != openai.FinishReasonLength {
			t.Errorf("finish = %q", c.finish)
		}
	})

	t.Run("Empty", func(t *testing.T) {
		srv.Push(openaitest.Response{Empty: true})
		stream, err := client.CreateChatCompletionStream(ctx, streamReq("x", true))
		if err != nil {
			t.Fatal(err)
		}
		c := readStream(t, stream)
		if c.content != "" || c.finish != "" || len(c.calls) != 0 || c.usage == nil {
			t.Errorf("got %+v, want only a usage chunk", c)
		}
	})

	t.Run("RawSSE", func(t *testing.T) {
		raw, err := os.ReadFile("../../../shared/fixtures/openai/stream_text.sse")
		if err != nil {
			t.Skip(err)
		}
		srv.Push(openaitest.Response{RawSSE: raw})
		stream, err := client.CreateChatCompletionStream(ctx, streamReq("x", true))
		if err != nil {
			t.Fatal(err)
		}
		c := readStream(t, stream)
		if !strings.HasPrefix(c.content, "I'm unable to provide real-time weather updates.") || c.usage.CompletionTokens != 30 {
			t.Errorf("got %q usage %+v", c.content, c.usage)
		}
	})
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	srv, client := newServer(t)

	t.Run("Status", func(t *testing.T) {
		srv.Push(openaitest.Response{Status: http.StatusTooManyRequests, RetryAfter: 1500 * time.Millisecond})
		resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("Retry-After-Ms") != "1500" {
			t.Errorf("status %d, headers %v", resp.StatusCode, resp.Header)
		}
		if !strings.Contains(string(body), `"type":"requests"`) || !strings.Contains(string(body), `"code":"rate_limit_exceeded"`) {
			t.Errorf("body = %s", body)
		}
	})

	t.Run("APIError", func(t *testing.T) {
		srv.Push(openaitest.Response{Status: 503, ErrorMessage: "overloaded"})
		_, err := client.CreateChatCompletionStream(ctx, chatRequest("x"))
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 || apiErr.Message != "overloaded" || apiErr.Type != "server_error" {
			t.Errorf("err = %#v", err)
		}
	})

	t.Run("EmptyScript", func(t *testing.T) {
		_, err := client.CreateChatCompletion(ctx, chatRequest("x"))
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || !strings.Contains(apiErr.Message, "script is empty") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("InvalidRequest", func(t *testing.T) {
		cases := map[string]openai.ChatCompletionRequest{
			"ToolChoiceWithoutTools": {Model: "m", Messages: chatRequest("x").Messages, ToolChoice: "auto"},
			"UnansweredToolCall": {Model: "m", Messages: []openai.ChatCompletionMessage{
				{Role: "user", Content: "x"},
				{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "f"}}}},
				{Role: "user", Content: "y"},
			}},
			"UnknownToolCallID": {Model: "m", Messages: []openai.ChatCompletionMessage{
				{Role: "user", Content: "x"},
				{Role: "tool", ToolCallID: "nope", Content: "r"},
			}},
			"NoModel": {Messages: chatRequest("x").Messages},
		}
		for name, req := range cases {
			t.Run(name, func(t *testing.T) {
				srv.Push(openaitest.Response{Text: "should not be used"})
				n := len(srv.Requests())
				_, err := client.CreateChatCompletion(ctx, req)
				var apiErr *openai.APIError
				if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 {
					t.Errorf("err = %v, want 400", err)
				}
				// Recorded, but the script is left for the next valid request.
				if len(srv.Requests()) != n+1 {
					t.Error("the invalid request was not recorded")
				}
				if got := srv.Pending(); got != 1 {
					t.Errorf("Pending() = %d, want 1", got)
				}
				resp, err := client.CreateChatCompletion(ctx, chatRequest("ok"))
				if err != nil || resp.Choices[0].Message.Content != "should not be used" {
					t.Errorf("next valid request got %+v, %v", resp, err)
				}
			})
		}
	})

	t.Run("UnknownPath", func(t *testing.T) {
		resp, err := http.Get(srv.URL() + "/models")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("status = %d", resp.StatusCode)
		}
	})
}

// waitForRequests waits until srv has received n requests, failing the test after a
// generous deadline.
func waitForRequests(t *testing.T, srv *openaitest.Server, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := srv.WaitRequests(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// receiveErr returns the error sent on errc, failing the test after a generous
// deadline.
func receiveErr(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not return")
		return nil
	}
}

func TestDelayHonoursCancel(t *testing.T) {
	srv, client := newServer(t)
	srv.Push(openaitest.Response{Text: "late", Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := client.CreateChatCompletion(ctx, chatRequest("x"))
		errc <- err
	}()
	waitForRequests(t, srv, 1) // cancel once the server has the request
	cancel()
	if err := receiveErr(t, errc); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestDelayAbortedByClose(t *testing.T) {
	srv, client := newServer(t)
	srv.Push(openaitest.Response{Text: "late", Delay: time.Hour})
	errc := make(chan error, 1)
	go func() {
		_, err := client.CreateChatCompletion(context.Background(), chatRequest("x"))
		errc <- err
	}()
	waitForRequests(t, srv, 1)
	srv.Close() // must not wait an hour
	if err := receiveErr(t, errc); err == nil {
		t.Error("want an error from a request cut by Close")
	}
}

// A handler that holds a request returns once the client gives up (Request.Done), and
// once the server closes.
func TestRequestDone(t *testing.T) {
	srv, client := newServer(t)
	returned := make(chan struct{}, 2)
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		<-r.Done()
		returned <- struct{}{}
		return openaitest.Response{Text: "nobody reads this"}
	})
	receive := func(what string) {
		t.Helper()
		select {
		case <-returned:
		case <-time.After(10 * time.Second):
			t.Fatalf("the handler did not return after %s", what)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := client.CreateChatCompletion(ctx, chatRequest("x"))
		errc <- err
	}()
	waitForRequests(t, srv, 1)
	cancel()
	receive("the client cancelled")
	if err := receiveErr(t, errc); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}

	go func() {
		_, err := client.CreateChatCompletion(context.Background(), chatRequest("y"))
		errc <- err
	}()
	waitForRequests(t, srv, 2)
	srv.Close()
	receive("the server closed")
	if err := receiveErr(t, errc); err == nil {
		t.Error("want an error from a request cut by Close")
	}
}

func TestHandleAndRequests(t *testing.T) {
	srv, client := newServer(t)
	srv.Push(openaitest.Response{Text: "from the queue"})
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: "echo: " + r.LastUserMessage()}
	})
	ctx := context.Background()
	for i, want := range []string{"from the queue", "echo: two", "echo: three"} {
		req := chatRequest([]string{"one", "two", "three"}[i])
		req.Messages = append([]openai.ChatCompletionMessage{{Role: "system", Content: "be brief"}}, req.Messages...)
		resp, err := client.CreateChatCompletion(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != want {
			t.Errorf("answer %d = %q, want %q", i, got, want)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[2]
	if r.N != 3 || r.Method != "POST" || r.Path != "/v1/chat/completions" || r.Time.IsZero() {
		t.Errorf("request = %+v", r)
	}
	if r.Header.Get("Authorization") != "Bearer test" {
		t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
	}
	if r.SystemPrompt() != "be brief" || r.LastUserMessage() != "three" || !strings.Contains(string(r.Body), `"three"`) {
		t.Errorf("system %q, user %q", r.SystemPrompt(), r.LastUserMessage())
	}
	if last, ok := srv.LastRequest(); !ok || last.N != 3 {
		t.Errorf("LastRequest = %+v, %v", last, ok)
	}
}

func TestConcurrent(t *testing.T) {
	srv, client := newServer(t)
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: r.LastUserMessage()}
	})
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req := chatRequest(fmt.Sprint(i))
			req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
			stream, err := client.CreateChatCompletionStream(context.Background(), req)
			if err != nil {
				t.Error(err)
				return
			}
			if c := readStream(t, stream); c.content != fmt.Sprint(i) {
				t.Errorf("got %q, want %d", c.content, i)
			}
		})
		srv.Push() // exercise the lock alongside
	}
	wg.Wait()
	if got := len(srv.Requests()); got != n {
		t.Errorf("%d requests recorded, want %d", got, n)
	}
}

func TestInFlightAndConnections(t *testing.T) {
	srv, client := newServer(t)
	const n = 3
	arrived, release := make(chan int, n), make(chan struct{})
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		arrived <- r.InFlight
		select {
		case <-release:
		case <-r.Done():
		}
		return openaitest.Response{Text: "ok"}
	})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := client.CreateChatCompletion(context.Background(), chatRequest("x")); err != nil {
				t.Error(err)
			}
		})
	}
	seen := map[int]bool{}
	for range n {
		seen[<-arrived] = true
	}
	if got := srv.InFlight(); got != n || !seen[n] {
		t.Errorf("InFlight() = %d, Request.InFlight seen %v; want %d and %d among them", got, seen, n, n)
	}
	close(release)
	wg.Wait()
	if in, most, conns := srv.InFlight(), srv.MaxInFlight(), srv.Connections(); in != 0 || most != n || conns != n {
		t.Errorf("InFlight %d, MaxInFlight %d, Connections %d; want 0, %d, %d", in, most, conns, n, n)
	}

	// A keep-alive client sends the next request on a connection it already has.
	srv.Handle(nil)
	srv.Push(openaitest.Response{Text: "again"})
	if _, err := client.CreateChatCompletion(context.Background(), chatRequest("x")); err != nil {
		t.Fatal(err)
	}
	if last, _ := srv.LastRequest(); last.InFlight != 1 || srv.Connections() != n {
		t.Errorf("Request.InFlight %d, Connections %d; want 1 and still %d", last.InFlight, srv.Connections(), n)
	}
}
