package agents_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// holdUntilAll makes the server hold each request until n are in flight, so that a round of
// n concurrent calls needs n connections at once.
func holdUntilAll(srv *openaitest.Server, n int, resp openaitest.Response) {
	var (
		mu      sync.Mutex
		waiting int
		release = make(chan struct{})
	)
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		mu.Lock()
		waiting++
		gate := release
		if waiting == n {
			waiting = 0
			close(release)
			release = make(chan struct{})
		}
		mu.Unlock()
		select {
		case <-gate:
		case <-r.Done(): // the client gave up
		}
		return resp
	})
}

// completeAll makes n concurrent calls and fails the test on an error.
func completeAll(t *testing.T, client *agents.Client, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			comp, err := client.Complete(context.Background(), userRequest(fmt.Sprint(i)))
			if err != nil || comp.Content == "" {
				t.Errorf("call %d: %+v, %v", i, comp, err)
			}
		})
	}
	wg.Wait()
}

func TestCompleteReusesConnections(t *testing.T) {
	const n = agents.DefaultMaxConcurrent
	answer := openaitest.Response{Text: "A streamed answer of a few words.", ToolCalls: []openaitest.ToolCall{{Name: "current_time"}}}

	t.Run("Concurrent", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv)
		holdUntilAll(srv, n, answer)
		completeAll(t, client, n)
		if got := srv.Connections(); got != n {
			t.Fatalf("the first round opened %d connections, want %d", got, n)
		}
		completeAll(t, client, n)
		if got := srv.Connections() - n; got != 0 {
			t.Errorf("the second round opened %d new connections, want 0", got)
		}
	})

	// A bound of calls in flight above the idle pool of package httpclient keeps
	// that many connections too (MODEL_MAX_CONCURRENT is 500 by default).
	t.Run("AboveIdlePool", func(t *testing.T) {
		const n = 2 * agents.DefaultMaxConcurrent
		srv := MustServer(t)
		client := newClient(t, srv, func(c *agents.ClientConfig) { c.MaxConcurrent = n })
		holdUntilAll(srv, n, answer)
		completeAll(t, client, n)
		completeAll(t, client, n)
		if got := srv.Connections() - n; got != 0 {
			t.Errorf("the second round of %d calls opened %d new connections, want 0", n, got)
		}
	})

	// A stream's body is read to its end and an error's body is closed, so one
	// connection serves calls one after another whatever they got.
	t.Run("AfterErrors", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv)
		srv.Push(
			openaitest.Response{Status: http.StatusTooManyRequests}, answer,
			openaitest.Response{Status: http.StatusServiceUnavailable, ErrorMessage: strings.Repeat("overloaded ", 1000)}, answer,
			openaitest.Response{Empty: true},
			openaitest.Response{Text: "cut", FinishReason: "length"},
		)
		for range 4 {
			client.Complete(context.Background(), userRequest("x"))
		}
		if n, conns := len(srv.Requests()), srv.Connections(); n != 6 || conns != 1 {
			t.Errorf("%d requests on %d connections, want 6 on 1", n, conns)
		}
	})

	// The test would catch a client that does not keep its connections: Go's default
	// transport keeps 2 idle connections per host.
	t.Run("DefaultTransportDoesNot", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv, func(c *agents.ClientConfig) { c.HTTPClient = &http.Client{} })
		holdUntilAll(srv, n, answer)
		completeAll(t, client, n)
		completeAll(t, client, n)
		if got := srv.Connections() - n; got < n/2 {
			t.Errorf("the second round opened %d new connections; want most of %d", got, n)
		}
	})
}

// BenchmarkComplete measures Complete against the fake server (on the same machine,
// whose work is counted too) with 1, 8 and 64 callers at once.
func BenchmarkComplete(b *testing.B) {
	answer := openaitest.Response{
		Text:  "The quarterly report is due on Friday. It covers revenue, costs and the hiring plan for the next two quarters.",
		Usage: openaitest.Usage{PromptTokens: 40, CompletionTokens: 25},
	}
	for _, callers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			srv := MustServer(b)
			srv.Handle(func(openaitest.Request) openaitest.Response { return answer })
			client := newClient(b, srv)
			req := userRequest("When is the quarterly report due, and what does it cover?")
			b.ReportAllocs()
			b.ResetTimer()
			var (
				next atomic.Int64
				wg   sync.WaitGroup
			)
			for range callers {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if _, err := client.Complete(context.Background(), req); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(srv.Connections()), "conns")
		})
	}
}
