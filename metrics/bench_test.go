package metrics_test

import (
	"testing"
	"time"

	"github.com/threadwright/threadwright/metrics"
)

// BenchmarkTurnInstruments measures the instruments one assistant turn with a tool
// call touches, without the I/O they observe: an envelope received and acked, a turn
// started and ended, two model calls, a tool call (the hooks' part), ten store
// operations and six Slack requests (their counters and histograms). Nil is a nil
// *Metrics: what a program without metrics pays.
func BenchmarkTurnInstruments(b *testing.B) {
	for _, tc := range []struct {
		name string
		m    *metrics.Metrics
	}{{"Nil", nil}, {"Real", metrics.New(metrics.Options{Models: []string{"gpt"}})}} {
		b.Run(tc.name, func(b *testing.B) {
			m := tc.m
			b.ReportAllocs()
			for b.Loop() {
				m.EnvelopeReceived("events_api")
				m.EnvelopeAcked("events_api", time.Millisecond)
				m.TurnStarted("user_message", time.Millisecond)
				m.ModelCall("gpt", "ok", time.Second, 0, 100, 10)
				m.ModelCall("gpt", "ok", time.Second, 0, 150, 5)
				for range 10 {
					metrics.ObserveStore(m, "save", nil, time.Millisecond)
				}
				for range 6 {
					metrics.ObserveSlack(m, "chat.postMessage", "ok", time.Millisecond)
				}
				m.ToolCall("weather", "ok", time.Millisecond)
				m.TurnEnded("user_message", "answered", time.Second)
			}
		})
	}
}
