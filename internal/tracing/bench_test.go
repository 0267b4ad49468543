package tracing_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/threadwright/threadwright/internal/tracing"
)

// BenchmarkSpansOfATurn measures the tracing work of one typical turn in isolation:
// the turn's root span, 4 store calls, a scope check, 3 chat completions with their
// GenAI attributes, a tool call, 3 Slack calls' spans and 2 log lines with the trace
// id; "off" with the no-op provider (no OTLP endpoint), "on" with the SDK batching
// the spans to an exporter that drops them. BenchmarkTurnTracing in cmd/threadwright
// measures the same through the whole program.
func BenchmarkSpansOfATurn(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		otel.SetTracerProvider(noop.NewTracerProvider())
		benchSpans(b)
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		otel.SetTracerProvider(tp)
		defer func() {
			otel.SetTracerProvider(noop.NewTracerProvider())
			_ = tp.Shutdown(context.Background())
		}()
		benchSpans(b)
	})
}

func benchSpans(b *testing.B) {
	log := slog.New(tracing.NewLogHandler(slog.NewTextHandler(io.Discard, nil)))
	chat := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.system", "openai"), attribute.String("gen_ai.request.model", "gpt-4o-mini"),
	}
	done := []attribute.KeyValue{
		attribute.String("gen_ai.response.model", "gpt-4o-mini"), attribute.Int("gen_ai.usage.input_tokens", 1200),
		attribute.Int("gen_ai.usage.output_tokens", 80), attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop"}),
	}
	b.ReportAllocs()
	for b.Loop() {
		ctx, turn := tracing.Start(context.Background(), "turn user_message", trace.WithNewRoot(),
			trace.WithAttributes(attribute.String("threadwright.input.kind", "user_message")))
		l := tracing.Logger(ctx, log)
		for _, op := range []string{"store.Load", "store.Save", "store.Finish", "store.Enqueue"} {
			_, s := tracing.Child(ctx, op)
			s.SetAttributes(attribute.String("db.operation.name", op))
			tracing.End(s, nil)
		}
		sctx, scope := tracing.Child(ctx, "scope_check")
		for i := range 3 {
			cctx := ctx
			if i == 0 {
				cctx = sctx
			}
			_, c := tracing.Start(cctx, "chat gpt-4o-mini", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(chat...))
			c.SetAttributes(done...)
			tracing.End(c, nil)
			if i == 0 {
				tracing.End(scope, nil)
			}
		}
		_, tool := tracing.Start(ctx, "execute_tool weather")
		tool.SetAttributes(attribute.String("gen_ai.tool.name", "weather"))
		tracing.End(tool, errors.New("backend down"))
		for range 3 {
			_, s := tracing.Start(ctx, "slack chat.postMessage", trace.WithSpanKind(trace.SpanKindClient))
			s.SetAttributes(tracing.SlackMethodKey.String("chat.postMessage"), attribute.Int("http.response.status_code", 200))
			s.End()
		}
		l.Info("turn finished")
		log.InfoContext(ctx, "tool call failed")
		turn.End()
	}
}
