package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/metrics"
)

func TestBound(t *testing.T) {
	t.Run("Allowed", func(t *testing.T) {
		b := metrics.NewBound(0, "a", "b")
		for in, want := range map[string]string{"a": "a", "b": "b", "c": metrics.Other, "": metrics.Other} {
			if got := b.Value(in); got != want {
				t.Errorf("Value(%q) = %q, want %q", in, got, want)
			}
		}
		b.Allow("c")
		if got := b.Value("c"); got != "c" {
			t.Errorf("after Allow: Value(c) = %q", got)
		}
	})
	t.Run("Learns", func(t *testing.T) {
		b := metrics.NewBound(2, "a")
		got := []string{b.Value("x"), b.Value("y"), b.Value("z"), b.Value("x"), b.Value("a")}
		want := []string{"x", "y", metrics.Other, "x", "a"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		b := metrics.NewBound(10)
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() { b.Value(fmt.Sprint(i)) })
		}
		wg.Wait()
		learned := 0
		for i := range 100 {
			if b.Value(fmt.Sprint(i)) != metrics.Other {
				learned++
			}
		}
		if learned != 10 {
			t.Errorf("learned %d values, want 10", learned)
		}
	})
}

// series counts the series of the metric called name in m's registry.
func series(t *testing.T, m *metrics.Metrics, name string) int {
	t.Helper()
	n, err := testutil.GatherAndCount(m.Registry(), name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLabelsAreBounded feeds every hook values from outside its label set: they are
// counted under "other", so a label never takes an id or a free text.
func TestLabelsAreBounded(t *testing.T) {
	m := metrics.New(metrics.Options{Version: "test", Models: []string{"gpt-main"}, Workflows: []string{"proposal"}})
	for i := range 50 {
		m.EnvelopeReceived(fmt.Sprintf("hello_%d", i))
		m.TurnEnded("user_message", fmt.Sprintf("outcome %d", i), time.Second)
		m.TurnStarted(fmt.Sprintf("kind-%d", i), time.Second)
		m.ModelCall(fmt.Sprintf("model-%d", i), "ok", time.Second, 0, 1, 1)
		m.WorkflowTransition(fmt.Sprintf("wf-%d", i), "approved")
		m.WorkflowTransition("proposal", fmt.Sprintf("event %d", i))
		m.PipelineItem("proposal", fmt.Sprintf("U%d", i))
		m.ToolCall(fmt.Sprintf("tool-%d", i), "ok", time.Second)
	}
	for name, want := range map[string]int{
		"threadwright_slack_envelopes_received_total": 1, // other
		"threadwright_turns_total":                    1, // user_message, other
		"threadwright_turn_queue_wait_seconds":        1, // other
		"threadwright_model_calls_total":              9, // 8 learned, then other
		"threadwright_workflow_transitions_total":     2, // {other, approved}, {proposal, other}
		"threadwright_pipeline_items_total":           1, // {proposal, other}
		"threadwright_tool_calls_total":               1, // {other, ok}
	} {
		if got := series(t, m, name); got != want {
			t.Errorf("%s: %d series, want %d", name, got, want)
		}
	}
}

func TestSlackClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/chat.postMessage":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			fmt.Fprint(w, `{"ok":true,"ts":"1.2","message":{"text":"`+strings.Repeat("x", 200)+`"}}`)
		case "/api/chat.update":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "{\n  \"ok\": false,\n  \"error\": \"message_not_found\"\n}")
		case "/api/reactions.add":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/api/users.info":
			w.WriteHeader(http.StatusBadGateway)
		case "/upload/v1/abc":
			fmt.Fprint(w, "OK - 12")
		default: // a method threadwright does not call
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok":true}`)
		}
	}))
	defer srv.Close()
	m := metrics.New(metrics.Options{})
	c := m.SlackClient(srv.Client())
	bodies := map[string]string{}
	for _, path := range []string{"/api/chat.postMessage", "/api/chat.update", "/api/reactions.add", "/api/users.info", "/upload/v1/abc", "/api/U0ALICE.secret"} {
		resp, err := c.Post(srv.URL+path, "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		bodies[path] = string(b)
	}
	if b := bodies["/api/chat.postMessage"]; !strings.HasSuffix(b, strings.Repeat("x", 200)+`"}}`) {
		t.Errorf("the answer read ahead is not whole: %q", b)
	}
	unreachable := m.SlackClient(&http.Client{})
	if _, err := unreachable.Get("http://127.0.0.1:1/api/auth.test"); err == nil {
		t.Fatal("no error from a closed port")
	}
	want := `
# HELP threadwright_slack_api_requests_total Slack Web API HTTP requests, retries included, by method and outcome (ok, error, rate_limited, http_error, network_error).
# TYPE threadwright_slack_api_requests_total counter
threadwright_slack_api_requests_total{method="auth.test",outcome="network_error"} 1
threadwright_slack_api_requests_total{method="chat.postMessage",outcome="ok"} 1
threadwright_slack_api_requests_total{method="chat.update",outcome="error"} 1
threadwright_slack_api_requests_total{method="other",outcome="ok"} 1
threadwright_slack_api_requests_total{method="reactions.add",outcome="rate_limited"} 1
threadwright_slack_api_requests_total{method="upload",outcome="ok"} 1
threadwright_slack_api_requests_total{method="users.info",outcome="http_error"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "threadwright_slack_api_requests_total"); err != nil {
		t.Error(err)
	}
}

// emptyStore is a conversation.Store with no conversation: Load finds none, Ping
// answers while its context lasts. Its other methods are not called.
type emptyStore struct{ conversation.Store }

func (emptyStore) Load(context.Context, conversation.Key, int) (*conversation.Checkpoint, error) {
	return nil, conversation.ErrNotFound
}

func (emptyStore) Ping(ctx context.Context) error { return ctx.Err() }

func TestStore(t *testing.T) {
	ctx := context.Background()
	m := metrics.New(metrics.Options{})
	st := m.Store(emptyStore{})
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	if _, err := st.Load(ctx, key, 10); !errors.Is(err, conversation.ErrNotFound) {
		t.Fatalf("Load: %v", err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_ = st.Ping(cctx)
	want := `
# HELP threadwright_store_operations_total Store operations, by operation and outcome (ok, not_found, conflict, lease_lost, unavailable, canceled, error).
# TYPE threadwright_store_operations_total counter
threadwright_store_operations_total{op="load",outcome="not_found"} 1
threadwright_store_operations_total{op="ping",outcome="ok"} 1
threadwright_store_operations_total{op="ping",outcome="canceled"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "threadwright_store_operations_total"); err != nil {
		t.Error(err)
	}
	if n := series(t, m, "threadwright_store_operation_duration_seconds"); n != 2 {
		t.Errorf("%d duration series, want 2 (load, ping)", n)
	}
}

// TestNil checks that a nil Metrics records nothing and changes nothing.
func TestNil(t *testing.T) {
	var m *metrics.Metrics
	m.EnvelopeReceived("events_api")
	m.TurnEnded("user_message", "answered", time.Second)
	m.ModelCall("x", "ok", time.Second, 1, 1, 1)
	c := &http.Client{}
	if m.SlackClient(c) != c {
		t.Error("SlackClient of a nil Metrics wraps the client")
	}
	if m.Store(nil) != nil || m.Registry() != nil {
		t.Error("a nil Metrics made something")
	}
}
