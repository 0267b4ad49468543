package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/openaitest"
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

// BenchmarkAckLatency measures how long envelopes wait for their ack, now that an
// envelope is acked only once its input is stored (from the emulator writing the
// frame to reading the ack: an upper bound of the bot's receive-to-ack time), while 50
// turns are in flight against a model that takes 30 s to answer. Each iteration is a
// mention in a new thread (stored, then answered at once), posted once the previous
// one is acked, so the numbers are per-envelope latency rather than queueing behind a
// burst. It runs on SQLite, and on Postgres when TEST_DATABASE_URL is set.
func BenchmarkAckLatency(b *testing.B) {
	b.Run("SQLite", func(b *testing.B) { benchAckLatency(b, "") })
	b.Run("Postgres", func(b *testing.B) { benchAckLatency(b, storetest.PostgresDSN(b)) })
}

func benchAckLatency(b *testing.B, databaseURL string) {
	h := newHarness(b, emulator.Config{})
	h.env["DATABASE_URL"] = databaseURL
	h.env["LOG_LEVEL"] = "warn"
	h.env["SHUTDOWN_TIMEOUT"] = "1s"
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if strings.HasPrefix(r.LastUserMessage(), "slow") {
			return openaitest.Response{Text: "slow", Delay: 30 * time.Second}
		}
		return openaitest.Response{Text: "quick"}
	})
	h.start()
	const inFlight = 50
	for i := range inFlight {
		h.post(general, alice, fmt.Sprintf("<@U0BOT> slow question %d", i), "")
	}
	h.waitFor("50 turns in flight", func() bool { return len(h.ai.Requests()) >= inFlight })
	updates, unsubscribe := h.emu.Subscribe()
	defer unsubscribe()
	var mentions []string

	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ts := h.post("C0RANDOM", "U0BOB", fmt.Sprintf("<@U0BOT> quick %d", i), "")
		mentions = append(mentions, ts)
		for {
			env, ok := h.emu.EventEnvelope("app_mention", ts)
			if ok && env.Acked {
				break
			}
			<-updates
		}
	}
	b.StopTimer()
	acked := map[string]time.Duration{}
	for _, a := range h.emu.Acks() {
		acked[a.EnvelopeID] = a.Latency
	}
	var lat []time.Duration
	for _, ts := range mentions {
		if env, ok := h.emu.EventEnvelope("app_mention", ts); ok {
			lat = append(lat, acked[env.ID])
		}
	}
	b.ReportMetric(ms(percentile(lat, 50)), "p50-ack-ms")
	b.ReportMetric(ms(percentile(lat, 99)), "p99-ack-ms")
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

// fanoutYAML is the workflow BenchmarkPipelinePhase runs: a reviewed plan, then one
// auto artifact written per section of it.
const fanoutYAML = `
name: fanout
title: Fan-out
artifacts:
  - id: plan
    title: Plan
  - id: sections
    title: Section drafts
    mode: auto
    depends_on: [plan]
    foreach: plan
`

// BenchmarkPipelinePhase measures one foreach phase through the whole bot: 8 sections,
// a model that takes 1 s per call for them, at PIPELINE_CONCURRENCY 1, 2, 4 and 8. Each
// iteration starts the workflow in a new thread, approves the plan and times from the
// click to the sections' card ("s/phase"); "rounds" is that time in model-call times,
// expected ceil(8 / limit).
func BenchmarkPipelinePhase(b *testing.B) {
	for _, limit := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			dir := b.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "fanout.yaml"), []byte(fanoutYAML), 0o644); err != nil {
				b.Fatal(err)
			}
			h := newBlogHarness(b)
			h.blog.sections, h.blog.delay, h.blog.slow = 8, time.Second, "sections"
			h.env["WORKFLOWS_DIR"] = dir
			h.env["PIPELINE_CONCURRENCY"] = strconv.Itoa(limit)
			h.env["LOG_LEVEL"] = "warn"
			h.start()
			var total time.Duration
			n := 0
			for b.Loop() {
				thread := h.startWorkflow(alice, "fanout")
				ts := h.latest(thread, "Approve", "")
				btn := h.find(ts, "Approve", "")
				start := time.Now()
				if _, err := h.emu.ClickButton(general, ts, alice, btn.ActionID); err != nil {
					b.Fatal(err)
				}
				h.waitFor("the sections' card", func() bool { return strings.Contains(h.transcript(thread), "8 of 8 items written") })
				total += time.Since(start)
				n++
			}
			phase := total / time.Duration(n)
			b.ReportMetric(phase.Seconds(), "s/phase")
			b.ReportMetric(phase.Seconds()/time.Second.Seconds(), "rounds")
		})
	}
}
