package bot_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// BenchmarkAckLatency measures how long envelopes wait for their ack now that the ack
// waits for Submit: from the emulator writing the frame to reading the ack, with a
// Submitter that takes about 1 ms (a database insert). Each iteration is one reply in
// a thread, posted once the previous one is acked, so the numbers are per-envelope
// latency rather than queueing behind a burst. cmd/threadwright has a
// whole-program BenchmarkAckLatency (the real Service and store, turns in flight).
func BenchmarkAckLatency(b *testing.B) {
	submit := submitterFunc(func(ctx context.Context, in conversation.Input) (bool, error) {
		select {
		case <-time.After(time.Millisecond): // stands for the insert
			return true, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	})
	h := startBotWith(b, emulator.Config{}, func(c *bot.Config) { c.Submitter = submit })
	parent, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> a thread", "")
	if err != nil {
		b.Fatal(err)
	}
	if err := h.emu.WaitForAcks(testContext(b)); err != nil {
		b.Fatal(err)
	}
	updates, unsubscribe := h.emu.Subscribe()
	defer unsubscribe()
	before := len(h.emu.Acks())

	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := h.emu.PostUserMessage("C0GENERAL", "U0BOB", fmt.Sprintf("reply %d", i), parent); err != nil {
			b.Fatal(err)
		}
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
}

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
