package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// BenchmarkTurnMetrics measures what the metrics cost a whole turn: a mention
// answered after one tool call (two model calls), as BenchmarkTurn does on SQLite,
// run without the instruments (Off: a nil *metrics.Metrics, /metrics not served) and
// with them (On). Compare ns/op, B/op and allocs/op of the two; allocations count
// those of the whole process during the turn (the bot, the emulator, the fake model).
func BenchmarkTurnMetrics(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "Off", true: "On"}[on]
		b.Run(name, func(b *testing.B) {
			h := newHarness(b, emulator.Config{})
			h.env["LOG_LEVEL"] = "warn"
			h.noMetrics = !on
			h.tools = func(r *agents.Registry) error {
				return r.Register(agents.ToolSpec{Name: "weather", Description: "Reports the weather", Category: "Test"},
					agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) { return "sunny", nil }))
			}
			h.ai.Handle(func(r openaitest.Request) openaitest.Response {
				if len(r.ToolResults()) == 0 {
					return openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_w", Name: "weather", Arguments: `{}`}}}
				}
				return openaitest.Response{Text: "sunny"}
			})
			h.start()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				ts := h.post(general, alice, fmt.Sprintf("<@U0BOT> weather %d", i), "")
				h.replies(general, ts, 2) // the progress message, then the answer
			}
			b.StopTimer()
		})
	}
}
