package agents_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// waitUntil polls cond until it holds, failing the test after a generous deadline.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// receive returns the next value of c, failing the test after a generous deadline.
func receive[T any](tb testing.TB, c <-chan T) T {
	tb.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(30 * time.Second):
		tb.Fatal("timed out waiting for the server")
		panic("unreachable")
	}
}

// held is a request the gated server holds until the test answers it.
type held struct {
	openaitest.Request
	answer chan<- openaitest.Response
}

// gatedServer holds every request until the test answers it, reporting each on
// arrived (after calling onArrival, when set, in the server's handler). Requests still
// held when the test ends get a 500.
func gatedServer(tb testing.TB, onArrival func(openaitest.Request)) (srv *openaitest.Server, arrived <-chan held) {
	tb.Helper()
	srv = MustServer(tb)
	arr, done := make(chan held, 256), make(chan struct{})
	tb.Cleanup(func() { close(done) }) // runs before srv.Close, registered earlier
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		if onArrival != nil {
			onArrival(r)
		}
		answer := make(chan openaitest.Response, 1)
		arr <- held{r, answer}
		select {
		case resp := <-answer:
			return resp
		case <-r.Done(): // the client gave up, or the server is closing
			return openaitest.Response{Status: http.StatusInternalServerError}
		case <-done:
			return openaitest.Response{Status: http.StatusInternalServerError}
		}
	})
	return srv, arr
}

// A burst of HTTP 429s with Retry-After: 1 and then three 5xx is ridden out with the
// default settings (as the issue measured it: it used to end in an apology).
func TestCompleteRidesOutBurst(t *testing.T) {
	t.Parallel()
	srv := MustServer(t)
	logger, logs := testLogger()
	client := agents.NewClient(agents.ClientConfig{BaseURL: srv.URL(), Logger: logger})
	limited := openaitest.Response{Status: http.StatusTooManyRequests, RetryAfter: time.Second}
	failed := openaitest.Response{Status: http.StatusServiceUnavailable}
	srv.Push(limited, limited, limited, limited, failed, failed, failed, openaitest.Response{Text: "made it"})

	began := time.Now()
	comp, err := client.Complete(context.Background(), userRequest("x"))
	if err != nil || comp.Content != "made it" || comp.Attempts != 8 {
		t.Fatalf("got %+v, %v; want the answer after 8 attempts", comp, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 8 {
		t.Fatalf("%d requests, want 8", len(reqs))
	}
	for i := range 4 {
		if gap := reqs[i+1].Time.Sub(reqs[i].Time); gap < time.Second {
			t.Errorf("attempt %d came %s after a 429 with Retry-After: 1", i+2, gap)
		}
	}
	if took := time.Since(began); took > agents.DefaultMaxElapsed {
		t.Errorf("took %s, beyond the retry budget", took)
	}
	if n := strings.Count(logs.String(), "retrying"); n != 7 {
		t.Errorf("%d retries logged, want 7", n)
	}
	// Each 429 answered a retry sent after the limit was last lowered: four halvings.
	if got := client.Limit(); got != agents.DefaultMaxConcurrent/16 {
		t.Errorf("Limit() = %d, want %d", got, agents.DefaultMaxConcurrent/16)
	}
}

func TestCompleteRetryCounts(t *testing.T) {
	limited := openaitest.Response{Status: http.StatusTooManyRequests, RetryAfter: 10 * time.Millisecond}
	failed := openaitest.Response{Status: http.StatusBadGateway}
	ok := openaitest.Response{Text: "ok"}
	tests := []struct {
		name       string
		maxRetries int
		script     []openaitest.Response
		attempts   int
		wantErr    int // HTTP status of the error; 0 for success
	}{
		{"RateLimitsDoNotCount", 1, []openaitest.Response{limited, limited, limited, failed, ok}, 5, 0},
		{"ErrorsCount", 1, []openaitest.Response{failed, limited, failed, ok}, 3, http.StatusBadGateway},
		{"NeverRetryMeansNot429Either", -1, []openaitest.Response{limited, ok}, 1, http.StatusTooManyRequests},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := MustServer(t)
			client := newClient(t, srv, func(c *agents.ClientConfig) { c.MaxRetries = tt.maxRetries })
			srv.Push(tt.script...)
			comp, err := client.Complete(context.Background(), userRequest("x"))
			var apiErr *openai.APIError
			switch {
			case tt.wantErr == 0 && (err != nil || comp.Content != "ok"):
				t.Errorf("got %+v, %v; want ok", comp, err)
			case tt.wantErr != 0 && (!errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tt.wantErr):
				t.Errorf("err = %v, want HTTP %d", err, tt.wantErr)
			}
			if n := len(srv.Requests()); comp.Attempts != tt.attempts || n != tt.attempts {
				t.Errorf("Attempts %d, %d requests; want %d", comp.Attempts, n, tt.attempts)
			}
		})
	}

	t.Run("RateLimitsBoundedByBudget", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv, func(c *agents.ClientConfig) { c.MaxElapsed = 100 * time.Millisecond; c.MaxRetries = 1 })
		srv.Handle(func(openaitest.Request) openaitest.Response {
			return openaitest.Response{Status: http.StatusTooManyRequests} // no Retry-After: backoff
		})
		comp, err := client.Complete(context.Background(), userRequest("x"))
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusTooManyRequests || !strings.Contains(err.Error(), "would pass 100ms") {
			t.Errorf("err = %v, want the 429 once the budget is spent", err)
		}
		if comp.Attempts <= 2 {
			t.Errorf("%d attempts; want 429s retried beyond MaxRetries", comp.Attempts)
		}
	})
}

// A burst of 429s halves the limit once; successes raise it by one per run as long as
// the limit; the server never has more requests in flight than the limit allows.
func TestCompleteAdaptsConcurrency(t *testing.T) {
	const maxConcurrent, callers = 8, 20
	// The server checks each arrival against the limit: the limit falls only when a
	// 429 is answered, and no request is sent while the new limit or more are in
	// flight, so an arrival never finds more requests in flight than the limit.
	var (
		current atomic.Pointer[agents.Client]
		mu      sync.Mutex
		overrun []string
	)
	srv, arrived := gatedServer(t, func(r openaitest.Request) {
		if limit := current.Load().Limit(); r.InFlight > limit {
			mu.Lock()
			defer mu.Unlock()
			overrun = append(overrun, fmt.Sprintf("request %d: %d in flight, limit %d", r.N, r.InFlight, limit))
		}
	})
	logger, logs := testLogger()
	client := newClient(t, srv, func(c *agents.ClientConfig) { c.MaxConcurrent = maxConcurrent; c.Logger = logger })
	current.Store(client)

	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			_, err := client.Complete(context.Background(), userRequest("x"))
			errs <- err
		})
	}

	// Phase 1: the limit lets 8 requests in.
	var first []held
	for range maxConcurrent {
		first = append(first, receive(t, arrived))
	}
	if got := client.Limit(); got != maxConcurrent || srv.InFlight() != maxConcurrent {
		t.Fatalf("Limit() = %d with %d in flight, want %d and %d", got, srv.InFlight(), maxConcurrent, maxConcurrent)
	}
	// Phase 2: all 8 are rate limited at once: the limit halves once, not 8 times.
	for _, h := range first {
		h.answer <- openaitest.Response{Status: http.StatusTooManyRequests}
	}
	var next []held
	for range maxConcurrent / 2 {
		next = append(next, receive(t, arrived))
	}
	if got := client.Limit(); got != maxConcurrent/2 {
		t.Fatalf("Limit() = %d after a burst of 429s, want %d", got, maxConcurrent/2)
	}
	// Phase 3: everything succeeds (the 20 calls and the 8 retries, 28 requests).
	for _, h := range next {
		h.answer <- openaitest.Response{Text: "ok"}
	}
	for range callers - len(next) {
		receive(t, arrived).answer <- openaitest.Response{Text: "ok"}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := len(srv.Requests()); n != callers+maxConcurrent {
		t.Errorf("%d requests, want %d", n, callers+maxConcurrent)
	}
	// From 4: +1 after 4 successes, +1 after 5 more, +1 after 6 more; 20 make 7.
	if got := client.Limit(); got != 7 {
		t.Errorf("Limit() = %d after 20 successes, want 7", got)
	}
	if got := srv.MaxInFlight(); got != maxConcurrent {
		t.Errorf("MaxInFlight() = %d, want %d", got, maxConcurrent)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(overrun) > 0 {
		t.Errorf("requests found more in flight than the limit at %v", overrun)
	}
	if out := logs.String(); strings.Count(out, "rate limited") != 1 || !strings.Contains(out, "limit=4") {
		t.Errorf("want one warning with the new limit:\n%s", out)
	}
}

func TestCompleteLimitGrowsBackToMax(t *testing.T) {
	srv := MustServer(t)
	logger, logs := testLogger()
	client := newClient(t, srv, func(c *agents.ClientConfig) { c.MaxConcurrent = 4; c.Logger = logger })
	srv.Push(openaitest.Response{Status: http.StatusTooManyRequests})
	srv.Handle(func(openaitest.Request) openaitest.Response { return openaitest.Response{Text: "ok"} })

	var limits []int
	for range 6 {
		if _, err := client.Complete(context.Background(), userRequest("x")); err != nil {
			t.Fatal(err)
		}
		limits = append(limits, client.Limit())
	}
	// 2 after the 429; 3 after 2 successes; 4 after 3 more.
	if want := []int{2, 3, 3, 3, 4, 4}; !slices.Equal(limits, want) {
		t.Errorf("limits after each call %v, want %v", limits, want)
	}
	out := logs.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "limit=2") ||
		!strings.Contains(out, "level=INFO msg=\"model calls at once back to the maximum\" limit=4") {
		t.Errorf("want a warning with limit=2 and an info line at 4:\n%s", out)
	}
}

// After a 429 with Retry-After, no other call reaches the server before it passes.
func TestCompleteRetryAfterHoldsEveryCall(t *testing.T) {
	const retryAfter, others = 300 * time.Millisecond, 5
	srv := MustServer(t)
	client := newClient(t, srv)
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		if r.N == 1 {
			return openaitest.Response{Status: http.StatusTooManyRequests, RetryAfter: retryAfter}
		}
		return openaitest.Response{Text: "ok"}
	})
	var wg sync.WaitGroup
	call := func() {
		wg.Go(func() {
			if _, err := client.Complete(context.Background(), userRequest("x")); err != nil {
				t.Error(err)
			}
		})
	}
	call()
	waitUntil(t, "the 429 lowered the limit", func() bool { return client.Limit() < agents.DefaultMaxConcurrent })
	for range others {
		call()
	}
	wg.Wait()

	reqs := srv.Requests()
	if len(reqs) != others+2 {
		t.Fatalf("%d requests, want %d", len(reqs), others+2)
	}
	// The hold starts when the client reads the 429, after the server received it.
	const tolerance = 5 * time.Millisecond
	for _, r := range reqs[1:] {
		if gap := r.Time.Sub(reqs[0].Time); gap < retryAfter-tolerance {
			t.Errorf("request %d arrived %s after the rate-limited one, within its Retry-After of %s", r.N, gap, retryAfter)
		}
	}
}

func TestCompleteWaitingCallerLeavesOnCancel(t *testing.T) {
	t.Run("ForASlot", func(t *testing.T) {
		srv, arrived := gatedServer(t, nil)
		client := newClient(t, srv, func(c *agents.ClientConfig) { c.MaxConcurrent = 1 })
		first := make(chan error, 1)
		go func() {
			_, err := client.Complete(context.Background(), userRequest("first"))
			first <- err
		}()
		h := receive(t, arrived)

		ctx, cancel := context.WithCancel(context.Background())
		second := make(chan error, 1)
		go func() {
			_, err := client.Complete(ctx, userRequest("second"))
			second <- err
		}()
		waitUntil(t, "the second call waits", func() bool { return client.Waiting() == 1 })
		cancel()
		if err := receive(t, second); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		h.answer <- openaitest.Response{Text: "ok"}
		if err := receive(t, first); err != nil {
			t.Fatal(err)
		}
		// The slot the cancelled call never used is free: a third call goes through.
		third := make(chan error, 1)
		go func() {
			_, err := client.Complete(context.Background(), userRequest("third"))
			third <- err
		}()
		receive(t, arrived).answer <- openaitest.Response{Text: "ok"}
		if err := receive(t, third); err != nil {
			t.Fatal(err)
		}
		if n := len(srv.Requests()); n != 2 || client.Waiting() != 0 {
			t.Errorf("%d requests, %d waiting; want 2 and 0 (none from the cancelled call)", n, client.Waiting())
		}
	})

	t.Run("ForRetryAfter", func(t *testing.T) {
		srv := MustServer(t)
		client := newClient(t, srv)
		srv.Push(openaitest.Response{Status: http.StatusTooManyRequests, RetryAfter: 30 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		errs := make(chan error, 2)
		go func() {
			_, err := client.Complete(ctx, userRequest("limited"))
			errs <- err
		}()
		waitUntil(t, "the 429 lowered the limit", func() bool { return client.Limit() < agents.DefaultMaxConcurrent })
		go func() {
			_, err := client.Complete(ctx, userRequest("held"))
			errs <- err
		}()
		waitUntil(t, "the second call is held", func() bool { return client.Waiting() == 1 })
		cancel()
		for range 2 {
			if err := receive(t, errs); !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

// A retry that cannot get a slot within the retry budget ends the call with the last
// error.
func TestCompleteRetryWaitsWithinBudget(t *testing.T) {
	srv, arrived := gatedServer(t, nil)
	client := newClient(t, srv, func(c *agents.ClientConfig) {
		c.MaxConcurrent = 1
		c.MaxElapsed = 300 * time.Millisecond
		c.Logger = slog.New(slog.DiscardHandler)
	})
	budgeted := make(chan error, 1)
	go func() {
		_, err := client.Complete(context.Background(), userRequest("budgeted"))
		budgeted <- err
	}()
	h := receive(t, arrived)
	other := make(chan error, 1)
	go func() {
		_, err := client.Complete(context.Background(), userRequest("other"))
		other <- err
	}()
	waitUntil(t, "the other call waits", func() bool { return client.Waiting() == 1 })
	h.answer <- openaitest.Response{Status: http.StatusServiceUnavailable}
	if h = receive(t, arrived); h.LastUserMessage() != "other" { // first come, first served
		t.Fatalf("request %q took the slot, want the waiting call's", h.LastUserMessage())
	}

	err := receive(t, budgeted)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "no slot for a retry within 300ms") {
		t.Errorf("err = %v, want the 503 when the budget ran out", err)
	}
	h.answer <- openaitest.Response{Text: "ok"}
	if err := receive(t, other); err != nil {
		t.Error(err)
	}
}
