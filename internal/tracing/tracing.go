package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName is the service.name of threadwright's spans (OTEL_SERVICE_NAME overrides it).
const ServiceName = "threadwright"

// ScopeName is the instrumentation scope of threadwright's spans.
const ScopeName = "github.com/threadwright/threadwright"

// Config configures Setup.
type Config struct {
	// ServiceVersion is the resource's service.version (the binary's version).
	ServiceVersion string
	// RecordContent records prompts, completions, tool arguments and results, and
	// error texts on spans (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT); off,
	// spans carry names, sizes, models, token counts and outcomes only.
	RecordContent bool
	// Redact scrubs recorded content first (the Redactor of the configured secrets,
	// package internal/redact); nil records it as it is.
	Redact func(string) string
	// Getenv reads the environment; default os.Getenv.
	Getenv func(string) string
	// OnError receives the errors of the export (a collector that does not answer);
	// default: they are dropped.
	OnError func(error)
}

// Enabled reports whether the environment asks for spans to be exported:
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, and
// neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says otherwise.
func (c Config) Enabled() bool {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if disabled, _ := strconv.ParseBool(getenv("OTEL_SDK_DISABLED")); disabled {
		return false
	}
	if strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")) == "none" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup starts tracing as cfg and the environment say. When cfg.Enabled, it makes a
// TracerProvider that batches spans to an OTLP/HTTP exporter (protobuf; the
// exporter reads the standard OTEL_EXPORTER_OTLP_* variables: endpoint, headers,
// timeout, compression, certificates) and sets it as the global provider; the
// resource has service.name threadwright, service.version, the SDK's attributes and
// OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME; sampling follows OTEL_TRACES_SAMPLER
// (default: every trace). Otherwise the global no-op provider stays. cfg.RecordContent
// takes effect either way.
//
// shutdown flushes the spans still buffered and stops the exporter within its
// context's deadline, then puts back the provider and content setting found before;
// call it once, on the way out, with a bounded context. Errors: a malformed
// OTEL_EXPORTER_OTLP_* setting.
func Setup(ctx context.Context, cfg Config) (shutdown func(context.Context) error, err error) {
	prevContent := content.Load()
	if cfg.RecordContent {
		redact := cfg.Redact
		if redact == nil {
			redact = func(s string) string { return s }
		}
		content.Store(&redact)
	}
	restoreContent := func() {
		if cfg.RecordContent {
			content.Store(prevContent)
		}
	}
	if !cfg.Enabled() {
		return func(context.Context) error { restoreContent(); return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		restoreContent()
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(ServiceName), semconv.ServiceVersion(cfg.ServiceVersion)),
		resource.WithFromEnv(), // last: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil && res == nil {
		restoreContent()
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	if cfg.OnError != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(cfg.OnError))
	}
	return func(ctx context.Context) error {
		defer restoreContent()
		err := tp.Shutdown(ctx)
		if otel.GetTracerProvider() == tp {
			otel.SetTracerProvider(prev)
		}
		return err
	}, nil
}

// content holds the scrubber of recorded content while RecordContent is on.
var content atomic.Pointer[func(string) string]

// Content reports whether prompts, completions, tool arguments and results, and error
// texts may be recorded on spans, and returns the function that scrubs them first.
func Content() (redact func(string) string, ok bool) {
	if p := content.Load(); p != nil {
		return *p, true
	}
	return nil, false
}

// SetContent sets what Content reports (nil: off) and returns a function that puts
// back the setting found before. Setup does it from Config; tests and benchmarks that
// install their own provider use it directly.
func SetContent(redact func(string) string) (restore func()) {
	prev := content.Load()
	if redact == nil {
		content.Store(nil)
	} else {
		content.Store(&redact)
	}
	return func() { content.Store(prev) }
}

// cachedTracer is the tracer of the global provider it was taken from.
type cachedTracer struct {
	tp trace.TracerProvider
	t  trace.Tracer
}

var tracer atomic.Pointer[cachedTracer]

// Tracer returns threadwright's tracer of the current global TracerProvider (taken
// anew when the provider changes, so that a provider set later is used).
func Tracer() trace.Tracer {
	tp := otel.GetTracerProvider()
	if c := tracer.Load(); c != nil && c.tp == tp {
		return c.t
	}
	c := &cachedTracer{tp: tp, t: tp.Tracer(ScopeName)}
	tracer.Store(c)
	return c.t
}

// Start starts a span named name as a child of ctx's span (a root span when ctx has
// none) on Tracer.
func Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return Tracer().Start(ctx, name, opts...)
}

// Child starts a span like Start, but only inside a trace: when ctx carries no span
// it returns ctx and a span that records nothing, so that background work (lease
// renewals, sweeps) does not make traces of its own.
func Child(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return Tracer().Start(ctx, name, opts...)
}

// ErrorTypeKey is error.type: the class of an error that ended a span.
var ErrorTypeKey = semconv.ErrorTypeKey

// End ends span, marking it failed when err is not nil: status Error, error.type the
// error's class (ErrorType), and, when Content allows, the error's text, scrubbed, as
// the status description and an exception event.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		Fail(span, err)
	}
	span.End()
}

// Fail marks span failed with err, as End does, without ending it.
func Fail(span trace.Span, err error) {
	span.SetAttributes(ErrorTypeKey.String(ErrorType(err)))
	desc := ""
	if redact, ok := Content(); ok {
		desc = redact(err.Error())
		span.AddEvent("exception", trace.WithAttributes(
			semconv.ExceptionType(ErrorType(err)), semconv.ExceptionMessage(desc)))
	}
	span.SetStatus(codes.Error, desc)
}

// ErrorType returns the class of err for error.type, never its text (which may quote
// what a person wrote): "context_canceled", "timeout" for a deadline, or the Go type of
// the innermost error of its chain ("*openai.APIError").
func ErrorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "context_canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	if t := reflect.TypeOf(err); t != nil && t.String() != "*errors.errorString" && t.String() != "*fmt.wrapError" {
		return t.String()
	}
	return semconv.ErrorTypeOther.Value.AsString()
}
