package tracing_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/threadwright/threadwright/internal/redact"
	"github.com/threadwright/threadwright/internal/tracing"
)

// env returns a Getenv of vars.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// useSpans makes a provider that keeps spans in memory the global one for the test.
func useSpans(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
	return exp
}

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		want bool
	}{
		{"Unset", nil, false},
		{"Endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{"TracesEndpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{"SDKDisabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{"ExporterNone", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (tracing.Config{Getenv: env(tc.vars)}).Enabled(); got != tc.want {
				t.Errorf("Enabled = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSetupWithoutEndpointIsANoOp: no endpoint, no provider: spans record nothing.
func TestSetupWithoutEndpointIsANoOp(t *testing.T) {
	otel.SetTracerProvider(noop.NewTracerProvider())
	before := otel.GetTracerProvider()
	shutdown, err := tracing.Setup(context.Background(), tracing.Config{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	if otel.GetTracerProvider() != before {
		t.Fatal("Setup installed a provider without an endpoint")
	}
	_, span := tracing.Start(context.Background(), "turn")
	defer span.End()
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Error("a span records with tracing off")
	}
	if _, ok := tracing.Content(); ok {
		t.Error("content recorded without the opt-in")
	}
}

// TestSetupExportsOverOTLPHTTP runs the real OTLP/HTTP exporter against a collector
// stand-in: shutdown flushes the span, which arrives as an OTLP protobuf request to
// /v1/traces with the service's resource.
func TestSetupExportsOverOTLPHTTP(t *testing.T) {
	var (
		mu   sync.Mutex
		reqs []*coltrace.ExportTraceServiceRequest
		path string
	)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		reqs, path = append(reqs, &req), r.URL.Path
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(b)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL) // the exporter reads it itself
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")

	shutdown, err := tracing.Setup(context.Background(), tracing.Config{ServiceVersion: "v9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tracing.Start(context.Background(), "turn user_message")
	if !span.IsRecording() {
		t.Fatal("span not recording with an endpoint set")
	}
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reqs) == 0 {
		t.Fatal("nothing exported")
	}
	if path != "/v1/traces" {
		t.Errorf("exported to %s", path)
	}
	rs := reqs[0].GetResourceSpans()[0]
	attrs := map[string]string{}
	for _, kv := range rs.GetResource().GetAttributes() {
		attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	if attrs["service.name"] != "threadwright" || attrs["service.version"] != "v9.9.9" {
		t.Errorf("resource %v", attrs)
	}
	if name := rs.GetScopeSpans()[0].GetSpans()[0].GetName(); name != "turn user_message" {
		t.Errorf("span %q", name)
	}
}

func TestLogHandler(t *testing.T) {
	exp := useSpans(t)
	var buf bytes.Buffer
	log := slog.New(tracing.NewLogHandler(redact.NewHandler(slog.NewTextHandler(&buf, nil), redact.New("xoxb-secret-token"))))
	ctx, span := tracing.Start(context.Background(), "turn")
	log.InfoContext(ctx, "in a span", "token", "xoxb-secret-token")
	log.Info("no context")
	tracing.Logger(ctx, log).InfoContext(ctx, "fixed")
	span.End()
	tid, sid := exp.GetSpans()[0].SpanContext.TraceID().String(), exp.GetSpans()[0].SpanContext.SpanID().String()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines %q", lines)
	}
	if want := fmt.Sprintf("trace_id=%s span_id=%s", tid, sid); !strings.Contains(lines[0], want) {
		t.Errorf("line %q lacks %q", lines[0], want)
	}
	if strings.Contains(lines[0], "xoxb-secret-token") {
		t.Errorf("the scrubber was skipped: %q", lines[0])
	}
	if strings.Contains(lines[1], "trace_id") {
		t.Errorf("a line without a span has a trace id: %q", lines[1])
	}
	if n := strings.Count(lines[2], "trace_id="); n != 1 {
		t.Errorf("Logger's line has %d trace ids: %q", n, lines[2])
	}
}

func TestSlackClient(t *testing.T) {
	exp := useSpans(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "chat.update") {
			_, _ = io.WriteString(w, `{"ok":false,"error":"message_not_found"}`)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	c := tracing.SlackClient(srv.Client())
	call := func(ctx context.Context, method string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/"+method, strings.NewReader("channel=C1"))
		req.Header.Set("Authorization", "Bearer xoxb-secret-token")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	call(context.Background(), "apps.connections.open") // outside a trace: untraced
	ctx, turn := tracing.Start(context.Background(), "turn")
	call(ctx, "chat.postMessage")
	call(ctx, "chat.update")
	turn.End()

	spans := exp.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want the turn and two Slack calls", len(spans))
	}
	if s := spans[1]; s.Name != "slack chat.update" || s.Status.Code != codes.Error || s.Status.Description != "message_not_found" {
		t.Errorf("span %q status %v, want an error message_not_found", s.Name, s.Status)
	}
	if s := spans[0]; s.Status.Code == codes.Error {
		t.Errorf("span %q failed: %v", s.Name, s.Status)
	}
	s := spans[0]
	if s.Name != "slack chat.postMessage" || s.Parent.SpanID() != spans[2].SpanContext.SpanID() {
		t.Errorf("span %q, parent %v", s.Name, s.Parent.SpanID())
	}
	var method bool
	for _, a := range s.Attributes {
		method = method || (a.Key == tracing.SlackMethodKey && a.Value.AsString() == "chat.postMessage")
		if strings.Contains(a.Value.String(), "xoxb-") {
			t.Errorf("attribute %s carries the token", a.Key)
		}
	}
	if !method {
		t.Errorf("no slack.method: %v", s.Attributes)
	}
}

type apiError struct{}

func (apiError) Error() string { return "api" }

func TestErrorType(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("call: %w", context.Canceled), "context_canceled"},
		{fmt.Errorf("call: %w", context.DeadlineExceeded), "timeout"},
		{fmt.Errorf("call: %w", apiError{}), "tracing_test.apiError"},
		{errors.New("what the person wrote"), "_OTHER"},
	} {
		if got := tracing.ErrorType(tc.err); got != tc.want {
			t.Errorf("ErrorType(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestEndRecordsErrorTextOnlyWithContent: an error's text may quote a person, so
// End records only its class unless content recording is on, and then scrubbed.
func TestEndRecordsErrorTextOnlyWithContent(t *testing.T) {
	exp := useSpans(t)
	err := errors.New("tool failed on 'my secret plan' with sk-key-1234567")
	_, span := tracing.Start(context.Background(), "off")
	tracing.End(span, err)
	restore := tracing.SetContent(redact.New("sk-key-1234567").String)
	_, span = tracing.Start(context.Background(), "on")
	tracing.End(span, err)
	restore()
	off, on := exp.GetSpans()[0], exp.GetSpans()[1]
	if off.Status.Description != "" || len(off.Events) != 0 {
		t.Errorf("error text recorded without the opt-in: %q %v", off.Status.Description, off.Events)
	}
	if !strings.Contains(on.Status.Description, "my secret plan") || strings.Contains(on.Status.Description, "sk-key-1234567") {
		t.Errorf("status with the opt-in %q", on.Status.Description)
	}
}

// TestSlackClientUploadURL: the URL files.getUploadURLExternal hands out carries a
// ticket in its path (https://files.slack.com/upload/v1/<ticket>); the span of the
// upload is named "slack upload" and no attribute keeps the ticket.
func TestSlackClientUploadURL(t *testing.T) {
	exp := useSpans(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "OK - 42")
	}))
	defer srv.Close()
	const ticket = "CwABAAAAXAoAAZnWHticket0123456789"
	ctx, turn := tracing.Start(context.Background(), "turn")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/upload/v1/"+ticket, strings.NewReader("content"))
	resp, err := tracing.SlackClient(srv.Client()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	turn.End()

	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the turn and the upload", len(spans))
	}
	s := spans[0]
	if s.Name != "slack upload" {
		t.Errorf("span name %q, want %q", s.Name, "slack upload")
	}
	for _, a := range s.Attributes {
		if strings.Contains(a.Value.String(), ticket) {
			t.Errorf("attribute %s = %q carries the upload ticket", a.Key, a.Value.String())
		}
	}
}
