package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/logtest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// recordSpans makes an SDK TracerProvider that keeps every span in memory the global
// one until the test ends (the e2e tests do not run in parallel: they set the
// environment).
func recordSpans(tb testing.TB) *tracetest.InMemoryExporter {
	tb.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)
	tb.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		_ = tp.Shutdown(context.Background())
	})
	return exp
}

// spanTree is the spans of one trace, with their lookups.
type spanTree struct {
	t     *testing.T
	root  tracetest.SpanStub
	spans []tracetest.SpanStub
}

// turnTrace returns the trace of the one turn whose root span is named name.
func turnTrace(t *testing.T, exp *tracetest.InMemoryExporter, name string) spanTree {
	t.Helper()
	all := exp.GetSpans()
	var roots []tracetest.SpanStub
	for _, s := range all {
		if s.Name == name && !s.Parent.IsValid() {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("%d root spans %q, want 1 (of %d spans)", len(roots), name, len(all))
	}
	tr := spanTree{t: t, root: roots[0]}
	for _, s := range all {
		if s.SpanContext.TraceID() == tr.root.SpanContext.TraceID() {
			tr.spans = append(tr.spans, s)
		}
	}
	return tr
}

// named returns the spans named name.
func (tr spanTree) named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range tr.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// prefixed returns the spans whose name starts with prefix.
func (tr spanTree) prefixed(prefix string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range tr.spans {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// under reports whether s descends from the span anc.
func (tr spanTree) under(s tracetest.SpanStub, anc trace.SpanID) bool {
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, x := range tr.spans {
		byID[x.SpanContext.SpanID()] = x
	}
	for p := s.Parent; p.IsValid(); p = byID[p.SpanID()].Parent {
		if p.SpanID() == anc {
			return true
		}
		if _, ok := byID[p.SpanID()]; !ok {
			return false
		}
	}
	return false
}

// String draws the tree, one span a line, children indented under their parent.
func (tr spanTree) String() string {
	var b strings.Builder
	var walk func(id trace.SpanID, depth int)
	walk = func(id trace.SpanID, depth int) {
		for _, s := range tr.spans {
			if s.Parent.SpanID() == id && s.SpanContext.SpanID() != id {
				b.WriteString(strings.Repeat("  ", depth) + s.Name + "\n")
				walk(s.SpanContext.SpanID(), depth+1)
			}
		}
	}
	b.WriteString(tr.root.Name + "\n")
	walk(tr.root.SpanContext.SpanID(), 1)
	return b.String()
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

func (tr spanTree) wantAttr(s tracetest.SpanStub, key string, want any) {
	tr.t.Helper()
	v, ok := attr(s, key)
	if !ok {
		tr.t.Errorf("span %q has no %s (%v)", s.Name, key, s.Attributes)
		return
	}
	if got := v.AsInterface(); !equalAttr(got, want) {
		tr.t.Errorf("span %q: %s = %#v, want %#v", s.Name, key, got, want)
	}
}

func equalAttr(got, want any) bool {
	switch w := want.(type) {
	case int:
		g, ok := got.(int64)
		return ok && g == int64(w)
	case []string:
		g, ok := got.([]string)
		return ok && slices.Equal(g, w)
	}
	return got == want
}

// texts returns every string an attribute or event of the trace carries.
func (tr spanTree) texts() []string {
	var out []string
	add := func(kvs []attribute.KeyValue) {
		for _, a := range kvs {
			out = append(out, a.Value.String())
		}
	}
	for _, s := range tr.spans {
		out = append(out, s.Name, s.Status.Description)
		add(s.Attributes)
		for _, e := range s.Events {
			add(e.Attributes)
		}
	}
	return out
}

func (tr spanTree) carries(text string) bool {
	for _, s := range tr.texts() {
		if strings.Contains(s, text) {
			return true
		}
	}
	return false
}

// tracedTurn runs one turn with a scope check and a tool call, with the spans
// recorded, and returns its trace and the program's log.
func tracedTurn(t *testing.T, env map[string]string) (spanTree, string) {
	exp := recordSpans(t)
	h := newHarness(t, emulator.Config{})
	h.env["SCOPE_DESCRIPTION"] = "questions about the weather"
	// The check of unlabelled tool results, on by default with a scope, is its own
	// model call with its own tests (scope_e2e_test.go); this trace leaves it out.
	h.env["SCOPE_CLASSIFY_RESULTS"] = "false"
	for k, v := range env {
		h.env[k] = v
	}
	logs := &logtest.Buffer{}
	h.logs = logs
	h.tools = func(r *agents.Registry) error {
		return r.Register(agents.ToolSpec{Name: "weather", Description: "Reports the weather", Category: "Test",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) { return "Sunny over the orchard", nil }))
	}
	h.start()
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "classify_scope", Arguments: `{"in_scope":true,"reason":"weather"}`}},
			Usage: openaitest.Usage{PromptTokens: 50, CompletionTokens: 5}},
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_w", Name: "weather", Arguments: `{"city":"Marrakesh"}`}},
			Usage: openaitest.Usage{PromptTokens: 120, CompletionTokens: 12}},
		openaitest.Response{Text: "The orchard is sunny today.", Usage: openaitest.Usage{PromptTokens: 160, CompletionTokens: 7}},
	)
	ts := h.post(general, alice, "<@U0BOT> will my secret picnic in Marrakesh stay dry? my key is sk-test-secret", "")
	got := h.replies(general, ts, 2)
	if !strings.Contains(got[len(got)-1].Text, "The orchard is sunny today.") {
		t.Fatalf("reply %q", got[len(got)-1].Text)
	}
	h.idle()
	return turnTrace(t, exp, "turn user_message"), logs.String()
}

// TestE2ETraceOfATurn checks the span tree of a turn with a scope check and a tool
// call (docs/operations.md, "Traces"): one root span for the turn, the scope check with its model
// call, the executor's chat completions and the tool call below it, with the GenAI
// attributes, the Slack Web API calls and the store writes; no text a person wrote.
func TestE2ETraceOfATurn(t *testing.T) {
	tr, logs := tracedTurn(t, nil)
	defer func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("the turn's trace:\n%s", tr)
		}
	}()

	root := tr.root
	tr.wantAttr(root, "threadwright.input.kind", "user_message")
	tr.wantAttr(root, "threadwright.turn.outcome", "answered")
	tr.wantAttr(root, "threadwright.input.attempt", 1)
	if _, ok := attr(root, "threadwright.thread.hash"); !ok {
		t.Error("the turn span does not name its thread")
	}

	scope := tr.named("scope_check")
	if len(scope) != 1 || scope[0].Parent.SpanID() != root.SpanContext.SpanID() {
		t.Fatalf("scope_check spans %d, or not a child of the turn", len(scope))
	}
	tr.wantAttr(scope[0], "threadwright.scope.in_scope", true)

	chats := tr.named("chat gpt-test")
	if len(chats) != 3 {
		t.Fatalf("%d chat spans, want 3 (scope check, tool call, answer)", len(chats))
	}
	slices.SortFunc(chats, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	if chats[0].Parent.SpanID() != scope[0].SpanContext.SpanID() {
		t.Error("the scope check's model call is not a child of scope_check")
	}
	wantUsage := [][2]int{{50, 5}, {120, 12}, {160, 7}}
	wantFinish := []string{"tool_calls", "tool_calls", "stop"}
	for i, c := range chats {
		if c.SpanKind != trace.SpanKindClient {
			t.Errorf("chat span %d kind %v, want client", i, c.SpanKind)
		}
		if i > 0 && c.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("chat span %d is not a child of the turn", i)
		}
		tr.wantAttr(c, "gen_ai.operation.name", "chat")
		tr.wantAttr(c, "gen_ai.provider.name", "openai")
		tr.wantAttr(c, "gen_ai.system", "openai")
		tr.wantAttr(c, "gen_ai.request.model", "gpt-test")
		tr.wantAttr(c, "gen_ai.response.model", "gpt-test")
		tr.wantAttr(c, "gen_ai.usage.input_tokens", wantUsage[i][0])
		tr.wantAttr(c, "gen_ai.usage.output_tokens", wantUsage[i][1])
		tr.wantAttr(c, "gen_ai.response.finish_reasons", []string{wantFinish[i]})
		for _, key := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"} {
			if _, ok := attr(c, key); ok {
				t.Errorf("chat span %d records %s without the opt-in", i, key)
			}
		}
	}

	tools := tr.named("execute_tool weather")
	if len(tools) != 1 || tools[0].Parent.SpanID() != root.SpanContext.SpanID() {
		t.Fatalf("execute_tool spans %d, or not a child of the turn", len(tools))
	}
	tr.wantAttr(tools[0], "gen_ai.operation.name", "execute_tool")
	tr.wantAttr(tools[0], "gen_ai.tool.name", "weather")
	tr.wantAttr(tools[0], "gen_ai.tool.call.id", "call_w")
	tr.wantAttr(tools[0], "threadwright.tool.outcome", "ok")
	if !chats[1].EndTime.Before(tools[0].StartTime) || !tools[0].EndTime.Before(chats[2].StartTime) {
		t.Error("the tool call does not run between the model call that asked for it and the answer")
	}

	posts := tr.named("slack chat.postMessage")
	if len(posts) == 0 {
		t.Fatalf("no Slack chat.postMessage span in %d spans", len(tr.spans))
	}
	for _, s := range tr.prefixed("slack ") {
		if !tr.under(s, root.SpanContext.SpanID()) {
			t.Errorf("Slack span %q is outside the turn", s.Name)
		}
		if _, ok := attr(s, "http.response.status_code"); !ok {
			t.Errorf("Slack span %q has no HTTP status", s.Name)
		}
	}
	tr.wantAttr(posts[0], "slack.method", "chat.postMessage")

	for _, op := range []string{"store.Load", "store.Save"} {
		s := tr.named(op)
		if len(s) == 0 {
			t.Errorf("no %s span", op)
			continue
		}
		if !tr.under(s[0], root.SpanContext.SpanID()) {
			t.Errorf("%s is outside the turn", op)
		}
		tr.wantAttr(s[0], "db.operation.name", strings.TrimPrefix(op, "store."))
	}

	for _, text := range []string{"secret picnic", "Marrakesh", "sunny", "Sunny", "sk-test-secret", "xoxb-emulator"} {
		if tr.carries(text) {
			t.Errorf("the trace carries %q without the opt-in", text)
		}
	}

	// The turn's log lines carry its trace id.
	traceID := root.SpanContext.TraceID().String()
	var finished bool
	for line := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(line, "turn finished") {
			finished = true
			if !strings.Contains(line, "trace_id="+traceID) {
				t.Errorf("the turn's log line has not its trace id %s: %s", traceID, line)
			}
		}
	}
	if !finished {
		t.Error(`no "turn finished" line in the log`)
	}
}

// TestE2ETraceRecordsContentWhenAskedTo: with
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, the model and tool spans
// carry the prompts, completions, arguments and results, scrubbed of the configured
// secrets.
func TestE2ETraceRecordsContentWhenAskedTo(t *testing.T) {
	tr, _ := tracedTurn(t, map[string]string{"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
	chats := tr.named("chat gpt-test")
	slices.SortFunc(chats, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	if len(chats) != 3 {
		t.Fatalf("%d chat spans", len(chats))
	}
	in, _ := attr(chats[1], "gen_ai.input.messages")
	var msgs []struct {
		Role  string `json:"role"`
		Parts []struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		} `json:"parts"`
	}
	if err := json.Unmarshal([]byte(in.AsString()), &msgs); err != nil {
		t.Fatalf("gen_ai.input.messages %q: %v", in.AsString(), err)
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "user" || !strings.Contains(in.AsString(), "secret picnic") {
		t.Errorf("gen_ai.input.messages does not end with the person's message: %s", in.AsString())
	}
	if sys, ok := attr(chats[1], "gen_ai.system_instructions"); !ok || sys.AsString() == "" {
		t.Error("no gen_ai.system_instructions")
	}
	if out, _ := attr(chats[2], "gen_ai.output.messages"); !strings.Contains(out.AsString(), "The orchard is sunny today.") {
		t.Errorf("gen_ai.output.messages %q", out.AsString())
	}
	tool := tr.named("execute_tool weather")[0]
	tr.wantAttr(tool, "gen_ai.tool.call.arguments", `{"city":"Marrakesh"}`)
	tr.wantAttr(tool, "gen_ai.tool.call.result", "Sunny over the orchard")
	if tr.carries("sk-test-secret") {
		t.Error("a configured secret reached the trace unscrubbed")
	}
}

// TestE2ETraceOffWithoutEndpoint: with no OTLP endpoint the program installs no
// tracer provider, its spans record nothing and its log lines carry no trace id.
func TestE2ETraceOffWithoutEndpoint(t *testing.T) {
	before := otel.GetTracerProvider()
	h := newHarness(t, emulator.Config{})
	h.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = ""
	h.env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = ""
	logs := &logtest.Buffer{}
	h.logs = logs
	h.start()
	if otel.GetTracerProvider() != before {
		t.Fatal("a tracer provider was installed without an endpoint")
	}
	h.ai.Push(openaitest.Response{Text: "untraced"})
	ts := h.post(general, alice, "<@U0BOT> hello", "")
	h.replies(general, ts, 1)
	h.idle()
	if strings.Contains(logs.String(), "trace_id=") {
		t.Error("log lines carry a trace id with tracing off")
	}
}

// TestE2ETraceOfAStreamedTurn: with STREAM_ANSWERS on, the answer streams into Slack
// as the model writes it; the trace has the same chat completion and tool spans, and
// the Slack streaming calls (chat.startStream, chat.appendStream, chat.stopStream)
// inside the turn.
func TestE2ETraceOfAStreamedTurn(t *testing.T) {
	exp := recordSpans(t)
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.tools = func(r *agents.Registry) error {
		return r.Register(agents.ToolSpec{Name: "weather", Description: "Reports the weather", Category: "Test",
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) { return "sunny", nil }))
	}
	h.start()
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "weather", Arguments: `{}`}}},
		openaitest.Response{Text: "It is sunny all afternoon, with a light breeze."},
	)
	ts := h.post(general, alice, "<@U0BOT> weather this afternoon?", "")
	h.streamedTurn(t, ts, "It is sunny all afternoon")
	tr := turnTrace(t, exp, "turn user_message")
	defer func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("the turn's trace:\n%s", tr)
		}
	}()
	chats := tr.named("chat gpt-test")
	if len(chats) != 2 {
		t.Fatalf("%d chat spans, want 2", len(chats))
	}
	slices.SortFunc(chats, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	tr.wantAttr(chats[1], "gen_ai.response.finish_reasons", []string{"stop"})
	if len(tr.named("execute_tool weather")) != 1 {
		t.Error("no execute_tool span")
	}
	for _, method := range []string{"chat.startStream", "chat.appendStream", "chat.stopStream"} {
		spans := tr.named("slack " + method)
		if len(spans) == 0 {
			t.Errorf("no %s span", method)
			continue
		}
		if !tr.under(spans[0], tr.root.SpanContext.SpanID()) {
			t.Errorf("%s is outside the turn", method)
		}
	}
	tr.wantAttr(tr.root, "threadwright.turn.outcome", "answered")
}
