package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents/openaitest"
	"github.com/threadwright/threadwright/bot/emulator"
	"github.com/threadwright/threadwright/store/storetest"
)

// percentile returns the p-th percentile (0 < p <= 100) of ds, nearest-rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkAckLatency measures how long envelopes wait for their ack (from the
// emulator writing the frame to reading the ack: an upper bound of the bot's own
// frame-received-to-ack-written time) while 50 turns are in flight against a model
// that takes 30 s to answer. Each iteration is one user message in a thread the bot is
// not part of (acked, then dropped by the dispatcher), posted once the previous one is
// acked, so the numbers are per-envelope latency rather than queueing behind a burst.
func BenchmarkAckLatency(b *testing.B) {
	h := newHarness(b, emulator.Config{})
	h.env["MAX_CONCURRENT_TURNS"] = "64"
	h.env["LOG_LEVEL"] = "warn"
	h.env["SHUTDOWN_TIMEOUT"] = "1s"
	h.ai.Handle(func(openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: "slow", Delay: 30 * time.Second}
	})
	h.start()
	const inFlight = 50
	for i := range inFlight {
		h.post(general, alice, fmt.Sprintf("<@U0BOT> slow question %d", i), "")
	}
	h.waitFor("50 turns in flight", func() bool { return len(h.ai.Requests()) >= inFlight })
	root := h.post("C0RANDOM", "U0BOB", "a thread the bot is not part of", "")
	h.waitFor("the root message's ack", func() bool { env, ok := h.emu.EventEnvelope("message", root); return ok && env.Acked })
	updates, unsubscribe := h.emu.Subscribe()
	defer unsubscribe()
	before := len(h.emu.Acks())

	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		h.post("C0RANDOM", "U0BOB", fmt.Sprintf("chatter %d", i), root)
		for u := range updates {
			if u.Kind == emulator.UpdateAck {
				break
			}
		}
	}
	b.StopTimer()
	var lat []time.Duration
	for _, a := range h.emu.Acks()[before:] {
		lat = append(lat, a.Latency)
	}
	b.ReportMetric(ms(percentile(lat, 50)), "p50-ack-ms")
	b.ReportMetric(ms(percentile(lat, 99)), "p99-ack-ms")
	b.ReportMetric(float64(len(h.ai.Requests())), "model-calls-in-flight")
	h.ai.Close() // ends the 30 s waits so shutdown is quick
}

// BenchmarkTurn measures the framework overhead of one whole turn: a mention posted to
// the emulator, acked, deduplicated and persisted, run through the pipeline against a
// zero-latency fake model, answered in the thread and checkpointed in the embedded
// store (SQLite, and Postgres when TEST_DATABASE_URL is set). Each iteration is a new
// thread; ns/op is the mean, p50/p99 are reported.
func BenchmarkTurn(b *testing.B) {
	b.Run("SQLite", func(b *testing.B) { benchTurn(b, "") })
	b.Run("Postgres", func(b *testing.B) { benchTurn(b, storetest.PostgresDSN(b)) })
}

func benchTurn(b *testing.B, databaseURL string) {
	h := newHarness(b, emulator.Config{})
	h.env["LOG_LEVEL"] = "warn"
	h.env["DATABASE_URL"] = databaseURL
	h.ai.Handle(func(openaitest.Request) openaitest.Response { return openaitest.Response{Text: "instant answer"} })
	h.start()
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		ts := h.post(general, alice, fmt.Sprintf("<@U0BOT> question %d", i), "")
		h.replies(general, ts, 1)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(lat, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 99)), "p99-ms")
}
