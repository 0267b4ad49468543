package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// BenchmarkTurnTracing measures what tracing adds to a turn: the same turn (a tool
// call, then the answer; embedded store) with the no-op provider ("off", as without
// OTEL_EXPORTER_OTLP_ENDPOINT) and with the SDK's provider batching every span to an
// exporter that drops them ("on": the work of making and batching spans, without the
// network). Compare ns/op and allocs/op; the allocations count the whole process
// (bot, emulator and fake model included), so only the difference means anything.
func BenchmarkTurnTracing(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		otel.SetTracerProvider(noop.NewTracerProvider())
		benchTracedTurn(b)
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		otel.SetTracerProvider(tp)
		defer func() {
			otel.SetTracerProvider(noop.NewTracerProvider())
			_ = tp.Shutdown(context.Background())
		}()
		benchTracedTurn(b)
	})
}

func benchTracedTurn(b *testing.B) {
	h := newHarness(b, emulator.Config{})
	h.env["LOG_LEVEL"] = "warn"
	h.tools = func(r *agents.Registry) error {
		return r.Register(agents.ToolSpec{Name: "weather", Description: "Reports the weather", Category: "Test",
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) { return "sunny", nil }))
	}
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if len(r.ToolResults()) > 0 {
			return openaitest.Response{Text: "It is sunny."}
		}
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "weather", Arguments: `{}`}}}
	})
	h.start()
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		ts := h.post(general, alice, fmt.Sprintf("<@U0BOT> weather %d", i), "")
		h.replies(general, ts, 2) // the progress message, then the answer
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(lat, 50)), "p50-ms")
}
