package main

import (
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// BenchmarkTakeover measures how long a thread waits after the replica running its
// turn is killed -9 in the model call: a second replica, running all along, takes it
// over once the dead one's lease expires (default LEASE_TTL) and answers. Postgres
// only (TEST_DATABASE_URL). Each iteration takes about LEASE_TTL; run it with
// -benchtime=3x.
func BenchmarkTakeover(b *testing.B) {
	dsn := storetest.PostgresDSN(b)
	var takeovers []time.Duration
	for i := range b.N {
		b.StopTimer()
		c := newCluster(b, dsn)
		c.logs = io.Discard
		c.env["LEASE_TTL"] = "10s"
		c.env["LOG_LEVEL"] = "warn"
		g := c.gatedModel(func(n int32, _ openaitest.Request) bool { return n == 1 })
		a := c.startProcess("a")
		root := c.post(general, alice, fmt.Sprintf("<@U0BOT> question %d", i), "")
		c.waitFor("a's turn to call the model", func() bool { return g.calls.Load() == 1 })
		c.startMain("b")
		b.StartTimer()
		killed := time.Now()
		a.kill()
		c.waitAnswers(general, root, 1)
		takeovers = append(takeovers, time.Since(killed))
		b.StopTimer()
		c.settle()
	}
	b.ReportMetric(percentile(takeovers, 50).Seconds(), "p50-takeover-s")
	b.ReportMetric(percentile(takeovers, 100).Seconds(), "max-takeover-s")
}

// BenchmarkBurst1000 sends 1,000 mentions, each in a thread of its own, as fast as the
// emulator takes them, to one replica with default settings against a model that
// takes 2 s to answer. It reports the time from the first mention to the last answer,
// the replica's peak RSS and its CPU time per turn (from the process's rusage: the
// replica runs as a process of its own, apart from the emulator and the fake model).
// It runs on SQLite, and on Postgres when TEST_DATABASE_URL is set.
func BenchmarkBurst1000(b *testing.B) {
	b.Run("SQLite", func(b *testing.B) { benchBurst(b, "") })
	b.Run("Postgres", func(b *testing.B) { benchBurst(b, storetest.PostgresDSN(b)) })
}

func benchBurst(b *testing.B, dsn string) {
	const threads = 1000
	for range b.N {
		b.StopTimer()
		c := newCluster(b, dsn)
		c.logs = io.Discard
		c.env["LOG_LEVEL"] = "info"
		c.env["STREAM_ANSWERS"] = "true" // the default
		c.echoModel(2 * time.Second)
		r := c.startProcess("a")
		b.StartTimer()
		start := time.Now()
		roots := make([]string, threads)
		for i := range threads {
			roots[i] = c.post(general, alice, fmt.Sprintf("<@U0BOT> burst question %d", i), "")
		}
		c.waitFor("every thread's answer", func() bool {
			for _, root := range roots {
				if len(c.emu.BotMessages(general, root)) == 0 {
					return false
				}
			}
			return true
		})
		last := time.Since(start)
		b.StopTimer()
		r.stop()
		ru, _ := r.cmd.ProcessState.SysUsage().(*syscall.Rusage)
		b.ReportMetric(last.Seconds(), "last-answer-s")
		if ru != nil {
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MiB")
			b.ReportMetric(float64(cpu.Microseconds())/1000/threads, "cpu-ms/turn")
		}
		for _, root := range roots {
			if n := len(c.emu.BotMessages(general, root)); n != 1 {
				b.Fatalf("thread %s shows %d answers; want 1", root, n)
			}
		}
	}
}
