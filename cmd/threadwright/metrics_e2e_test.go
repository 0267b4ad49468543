package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// scrape reads GET /metrics of the running program, as Prometheus would.
func (h *harness) scrape() metricFamilies {
	h.t.Helper()
	resp, err := http.Get("http://" + h.main.Addr() + "/metrics")
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("GET /metrics: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		h.t.Errorf("GET /metrics: Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		h.t.Fatalf("GET /metrics: not the exposition format: %v", err)
	}
	return fams
}

type metricFamilies map[string]*dto.MetricFamily

// value returns the value of the series of name with labels (a counter's or gauge's
// value, a histogram's sample count), and whether it exists.
func (f metricFamilies) value(name string, labels ...string) (float64, bool) {
	fam := f[name]
	if fam == nil {
		return 0, false
	}
next:
	for _, m := range fam.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestE2EMetrics runs a turn with a tool call, a model call that fails once and is
// retried, and a rate-limited chat.postMessage, then scrapes GET /metrics over HTTP
// and checks what each part of the program counted.
func TestE2EMetrics(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.tools = func(r *agents.Registry) error {
		return r.Register(agents.ToolSpec{Name: "weather", Description: "Reports the weather", Category: "Test"},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) { return "sunny", nil }))
	}
	h.start()

	before := h.scrape()
	if v, ok := before.value("threadwright_build_info", "version", version); !ok || v != 1 {
		t.Errorf("threadwright_build_info{version=%q} = %v, %v", version, v, ok)
	}
	if _, ok := before.value("go_goroutines"); !ok {
		t.Error("the Go runtime's metrics are missing")
	}

	h.ai.Push(
		openaitest.Response{Status: http.StatusInternalServerError, ErrorMessage: "overloaded"},
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_w", Name: "weather", Arguments: `{}`}},
			Usage: openaitest.Usage{PromptTokens: 100, CompletionTokens: 10}},
		openaitest.Response{Text: "It is sunny.", Usage: openaitest.Usage{PromptTokens: 150, CompletionTokens: 5}},
	)
	h.emu.RateLimitNext("chat.postMessage", time.Second)
	ts := h.post(general, alice, "<@U0BOT> what's the weather?", "")
	if got := h.replies(general, ts, 2); got[1].Text != "It is sunny." {
		t.Fatalf("reply %q", got[1].Text)
	}
	h.idle()
	f := h.scrape()

	type want struct {
		name   string
		labels []string
		min    float64 // at least
		exact  bool    // and exactly
	}
	for _, w := range []want{
		{"threadwright_slack_envelopes_received_total", []string{"type", "events_api"}, 1, false},
		{"threadwright_slack_envelopes_acked_total", []string{"type", "events_api"}, 1, false},
		{"threadwright_slack_ack_duration_seconds", []string{"type", "events_api"}, 1, false},
		{"threadwright_turns_total", []string{"kind", "user_message", "outcome", "answered"}, 1, true},
		{"threadwright_turn_duration_seconds", []string{"kind", "user_message", "outcome", "answered"}, 1, true},
		{"threadwright_turn_queue_wait_seconds", []string{"kind", "user_message"}, 1, true},
		{"threadwright_turns_running", nil, 0, true},
		{"threadwright_turns_queued", nil, 0, true},
		{"threadwright_model_calls_total", []string{"model", "gpt-test", "outcome", "ok"}, 2, true},
		{"threadwright_model_call_duration_seconds", []string{"model", "gpt-test"}, 2, true},
		{"threadwright_model_retries_total", []string{"model", "gpt-test"}, 1, true},
		{"threadwright_model_tokens_total", []string{"model", "gpt-test", "type", "prompt"}, 250, true},
		{"threadwright_model_tokens_total", []string{"model", "gpt-test", "type", "completion"}, 15, true},
		{"threadwright_tool_calls_total", []string{"tool", "weather", "outcome", "ok"}, 1, true},
		{"threadwright_tool_call_duration_seconds", []string{"tool", "weather"}, 1, true},
		{"threadwright_slack_api_requests_total", []string{"method", "auth.test", "outcome", "ok"}, 1, false},
		{"threadwright_slack_api_requests_total", []string{"method", "apps.connections.open", "outcome", "ok"}, 1, false},
		{"threadwright_slack_api_requests_total", []string{"method", "chat.postMessage", "outcome", "rate_limited"}, 1, true},
		{"threadwright_slack_api_requests_total", []string{"method", "chat.postMessage", "outcome", "ok"}, 2, false},
		{"threadwright_slack_api_request_duration_seconds", []string{"method", "chat.postMessage"}, 3, false},
		{"threadwright_store_operations_total", []string{"op", "enqueue_batch", "outcome", "ok"}, 1, false}, // the intake stores by group commit
		{"threadwright_store_operations_total", []string{"op", "save", "outcome", "ok"}, 1, false},
		{"threadwright_store_operations_total", []string{"op", "acquire_begin", "outcome", "ok"}, 1, false}, // Acquire with the first Begin
		{"threadwright_store_operation_duration_seconds", []string{"op", "save"}, 1, false},
	} {
		v, ok := f.value(w.name, w.labels...)
		switch {
		case !ok && !(w.exact && w.min == 0):
			t.Errorf("%s%v: no such series", w.name, w.labels)
		case w.exact && v != w.min:
			t.Errorf("%s%v = %v, want %v", w.name, w.labels, v, w.min)
		case v < w.min:
			t.Errorf("%s%v = %v, want at least %v", w.name, w.labels, v, w.min)
		}
	}
	// No label carries a thread, a user or a channel.
	for name, fam := range f {
		for _, m := range fam.Metric {
			for _, l := range m.Label {
				if v := l.GetValue(); strings.Contains(v, general) || strings.Contains(v, alice) || strings.Contains(v, ts) {
					t.Errorf("%s: label %s=%q names a channel, user or thread", name, l.GetName(), v)
				}
			}
		}
	}
}

// TestE2EMetricsOfAFailedTurn checks the outcome of a turn whose model call fails
// for good (HTTP 400 is not retried): the person gets an error reply.
func TestE2EMetricsOfAFailedTurn(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	h.ai.Push(openaitest.Response{Status: http.StatusBadRequest, ErrorMessage: "bad request"})
	ts := h.post(general, alice, "<@U0BOT> first", "")
	h.replies(general, ts, 1)
	h.idle()
	f := h.scrape()
	if v, _ := f.value("threadwright_turns_total", "kind", "user_message", "outcome", "failed"); v != 1 {
		t.Errorf("failed turns = %v, want 1", v)
	}
	if v, _ := f.value("threadwright_model_calls_total", "model", "gpt-test", "outcome", "error"); v != 1 {
		t.Errorf("failed model calls = %v, want 1", v)
	}
	if _, ok := f.value("threadwright_turns_total", "outcome", "answered"); ok {
		t.Error("a failed turn counted as answered")
	}
}

// TestE2EMetricsOfAStoppedTurn stops a turn with its Stop button: it is counted as
// stopped, and its slow tool's call as canceled.
func TestE2EMetricsOfAStoppedTurn(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.tools = registerSlowReport
	h.start()
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if len(r.ToolResults()) == 0 {
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "slow_report", Arguments: "{}"}}}
		}
		return openaitest.Response{Text: "done"}
	})
	ts := h.post(general, alice, "<@U0BOT> build the quarterly report", "")
	progress := h.replies(general, ts, 1)[0]
	if _, err := h.emu.ClickButtonByLabel(general, progress.TS, alice, "Stop"); err != nil {
		t.Fatal(err)
	}
	h.replies(general, ts, 2)
	h.idle()
	f := h.scrape()
	if v, _ := f.value("threadwright_turns_total", "kind", "user_message", "outcome", "stopped"); v != 1 {
		t.Errorf("stopped turns = %v, want 1", v)
	}
	if v, _ := f.value("threadwright_slack_envelopes_acked_total", "type", "interactive"); v != 1 {
		t.Errorf("acked interactive envelopes = %v, want 1 (the Stop click)", v)
	}
	if v, _ := f.value("threadwright_tool_calls_total", "tool", "slow_report", "outcome", "canceled"); v != 1 {
		t.Errorf("canceled slow_report calls = %v, want 1", v)
	}
}

// TestE2EMetricsOfAPipeline runs the blog workflow's pipeline, one of whose research
// items fails twice before it succeeds and another every time, and approves the
// article: the items and the workflow's transitions are counted.
func TestE2EMetricsOfAPipeline(t *testing.T) {
	h := newBlogHarness(t)
	h.blog.fail["Section 2"] = 2
	h.blog.fail["Section 3"] = 9
	h.start()
	thread := h.toPipeline()
	h.waitFor("the article for review", func() bool {
		return strings.Contains(h.transcript(thread), "Meta description: How small teams")
	})
	h.click(thread, alice, "Approve", "")
	h.file("blog.md")
	h.idle()
	f := h.scrape()
	for _, w := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"workflow", "blog", "outcome", "failed"}, 1},  // Section 3's research
		{[]string{"workflow", "blog", "outcome", "retried"}, 4}, // Section 2's and 3's, twice each
		{[]string{"workflow", "blog", "outcome", "done"}, 12},   // 3 research items, 4 sources, the brief, 4 sections
	} {
		if v, _ := f.value("threadwright_pipeline_items_total", w.labels...); v != w.want {
			t.Errorf("threadwright_pipeline_items_total%v = %v, want %v", w.labels, v, w.want)
		}
	}
	for event, want := range map[string]float64{"started": 1, "completed": 1} {
		if v, _ := f.value("threadwright_workflow_transitions_total", "workflow", "blog", "event", event); v != want {
			t.Errorf("workflow transitions %s = %v, want %v", event, v, want)
		}
	}
	if v, _ := f.value("threadwright_workflow_transitions_total", "workflow", "blog", "event", "approved"); v < 1 {
		t.Errorf("no artifact approved: %v", v)
	}
	if v, _ := f.value("threadwright_turns_total", "kind", "pipeline", "outcome", "answered"); v < 1 {
		t.Errorf("pipeline turns answered = %v", v)
	}
}

// TestE2EMetricsOfAReconnect has Slack ask for new Socket Mode connections: each
// connection's reconnect is counted once the bot is connected on it again.
func TestE2EMetricsOfAReconnect(t *testing.T) {
	for _, conns := range []int{1, 2} {
		t.Run(fmt.Sprintf("Connections=%d", conns), func(t *testing.T) {
			h := newHarness(t, emulator.Config{})
			h.env["SOCKET_CONNECTIONS"] = strconv.Itoa(conns)
			h.start()
			h.waitFor("every connection", func() bool { return h.emu.NumConnections() == conns })
			if v, ok := h.scrape().value("threadwright_slack_socket_reconnects_total"); !ok || v != 0 {
				t.Fatalf("reconnects before any = %v, %v", v, ok)
			}
			h.emu.Disconnect("")
			h.waitFor("the reconnects to be counted", func() bool {
				v, _ := h.scrape().value("threadwright_slack_socket_reconnects_total")
				return v == float64(conns)
			})
			h.waitFor("the bot to be ready again", func() bool { return h.main.Ready(context.Background()) })
			if v, _ := h.scrape().value("threadwright_slack_api_requests_total", "method", "apps.connections.open", "outcome", "ok"); v < float64(2*conns) {
				t.Errorf("apps.connections.open calls = %v, want %d", v, 2*conns)
			}
		})
	}
}

// TestE2EMetricsOfATimedOutTurn: a turn past TURN_TIMEOUT (the model does not answer
// in time) tells the thread it took too long, and is counted as timed_out, with its
// model call as a timeout.
func TestE2EMetricsOfATimedOutTurn(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["TURN_TIMEOUT"] = "2s"
	h.start()
	h.ai.Handle(func(openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: "too late", Delay: time.Minute}
	})
	ts := h.post(general, alice, "<@U0BOT> a very slow question", "")
	h.replies(general, ts, 1)
	h.waitFor("the reply that it took too long", func() bool {
		msgs := h.emu.Thread(general, ts)
		return strings.HasPrefix(msgs[len(msgs)-1].Text, "Sorry, that took too long")
	})
	h.idle()
	f := h.scrape()
	if v, _ := f.value("threadwright_turns_total", "kind", "user_message", "outcome", "timed_out"); v != 1 {
		for _, o := range []string{"answered", "failed", "abandoned"} {
			if n, ok := f.value("threadwright_turns_total", "kind", "user_message", "outcome", o); ok {
				t.Logf("outcome %s: %v", o, n)
			}
		}
		t.Errorf("timed-out turns = %v, want 1", v)
	}
	if v, _ := f.value("threadwright_model_calls_total", "model", "gpt-test", "outcome", "timeout"); v != 1 {
		t.Errorf("model calls that timed out = %v, want 1", v)
	}
}

// TestE2EMetricsToken (issue 25, item 8): with METRICS_TOKEN set, GET /metrics
// answers 401 without the bearer token or with another, and the metrics with it;
// /healthz stays open.
func TestE2EMetricsToken(t *testing.T) {
	const token = "metrics-token-0123456789"
	h := newHarness(t, emulator.Config{})
	h.env["METRICS_TOKEN"] = token
	h.start()
	get := func(path, auth string) (int, string) {
		req, err := http.NewRequest("GET", "http://"+h.main.Addr()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, auth := range []string{"", "Bearer wrong-token-0123456789", token} {
		if code, body := get("/metrics", auth); code != http.StatusUnauthorized || strings.Contains(body, "threadwright_") {
			t.Errorf("GET /metrics with %q: %d", auth, code)
		}
	}
	if code, body := get("/metrics", "Bearer "+token); code != http.StatusOK || !strings.Contains(body, "threadwright_") {
		t.Errorf("GET /metrics with the token: %d", code)
	}
	if code, _ := get("/healthz", ""); code != http.StatusOK {
		t.Errorf("GET /healthz: %d", code)
	}
}
