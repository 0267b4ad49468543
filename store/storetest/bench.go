package storetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Sizer is implemented by stores that can tell how many bytes they occupy on disk;
// BenchComparison reports it.
type Sizer interface {
	Size(ctx context.Context) (int64, error)
}

// BenchSaveLoad measures one turn, Save of a user message and an assistant reply then
// Load of the newest 20 messages, in a conversation that already holds 10, 100, 1,000
// and 10,000 messages (sub-benchmarks "messages=N"). The time should not grow with N.
// open must return a new, empty store and close it in b.Cleanup.
func BenchSaveLoad(b *testing.B, open func(b *testing.B) conversation.Store) {
	for _, size := range []int{10, 100, 1_000, 10_000} {
		b.Run(fmt.Sprintf("messages=%d", size), func(b *testing.B) {
			s := open(b)
			ctx := b.Context()
			version := seed(b, s, size)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				saved, err := s.Save(ctx, exchange(version, i))
				if err != nil {
					b.Fatal(err)
				}
				version = saved.Version
				if _, err := s.Load(ctx, key, 20); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchLeasedTurn measures the store's part of one turn under a lease, in a thread that
// already holds 100 messages, as the scheduler makes it: Enqueue of a person's
// message, AcquireBegin of the thread (takes it and begins the input), Load of the
// newest 20 messages, and Save of the exchange with the lease, marking the input done,
// adding its token usage and, nothing more being pending, freeing the lease
// (Turn.Release). On PostgreSQL each is one statement, so a turn is four round trips.
// open must return a new, empty store and close it in b.Cleanup.
func BenchLeasedTurn(b *testing.B, open func(b *testing.B) conversation.Store) {
	s := open(b)
	ctx := b.Context()
	version := seed(b, s, 100)
	question := filler("Question: ", 200)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		in := conversation.Input{
			ID: fmt.Sprintf("msg:%s:%s:%d", key.TeamID, key.ChannelID, i), Key: key, Kind: conversation.KindUserMessage,
			Message: &conversation.UserMessage{UserID: "U0001", Text: question, TS: "1700000001.000100", ThreadTS: key.ThreadTS},
		}
		if ok, err := s.Enqueue(ctx, in); !ok || err != nil {
			b.Fatalf("Enqueue = %v, %v", ok, err)
		}
		l, _, got, ok, err := s.AcquireBegin(ctx, key, "bench/1", time.Minute)
		if !ok || err != nil || got == nil || got.ID != in.ID {
			b.Fatalf("AcquireBegin = %+v, %v, %v; want %s", got, ok, err, in.ID)
		}
		if _, err := s.Load(ctx, key, 20); err != nil {
			b.Fatal(err)
		}
		turn := exchange(version, i)
		turn.Lease, turn.InputID, turn.Release = l, in.ID, true
		turn.Usage = []conversation.UsageRecord{{UserID: "U0001", Model: "bench-model", Turns: 1, PromptTokens: 850, CompletionTokens: 200}}
		saved, err := s.Save(ctx, turn)
		if err != nil {
			b.Fatal(err)
		}
		if !saved.Released {
			b.Fatalf("Save with Release = %+v; want the lease freed", saved)
		}
		version = saved.Version
		i++
	}
}

// BenchConcurrentTurns measures the store's part of the turns of many threads at
// once, as a burst of mentions makes them: 64 workers, each in a thread of its own,
// run BenchLeasedTurn's turn (Enqueue, AcquireBegin, Load, Save with Release) one
// after another. It reports the time per turn across the workers (ns/op, the store's
// throughput) and this process's CPU time per turn (cpu-ms/turn, getrusage), the
// figure a group commit of several threads' writes lowers (store/sqlite's turnWrite).
// open must return a new, empty store and close it in b.Cleanup.
func BenchConcurrentTurns(b *testing.B, open func(b *testing.B) conversation.Store) {
	const workers = 64
	s := open(b)
	ctx := b.Context()
	question := filler("Question: ", 200)
	var next atomic.Int64 // the workers' numbers, and so their threads
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((workers + procs - 1) / procs) // at least workers goroutines
	b.ReportAllocs()
	cpu0 := SelfCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := next.Add(1)
		k := conversation.Key{TeamID: key.TeamID, ChannelID: key.ChannelID, ThreadTS: fmt.Sprintf("1700000000.%06d", w)}
		var version int64
		for i := 0; pb.Next(); i++ {
			in := conversation.Input{
				ID: fmt.Sprintf("msg:%s:%d:%d", k.ChannelID, w, i), Key: k, Kind: conversation.KindUserMessage,
				Message: &conversation.UserMessage{UserID: "U0001", Text: question, TS: fmt.Sprintf("1700000001.%06d", i), ThreadTS: k.ThreadTS},
			}
			if ok, err := s.Enqueue(ctx, in); !ok || err != nil {
				b.Errorf("Enqueue = %v, %v", ok, err)
				return
			}
			l, _, got, ok, err := s.AcquireBegin(ctx, k, fmt.Sprintf("bench/%d", w), time.Minute)
			if !ok || err != nil || got == nil || got.ID != in.ID {
				b.Errorf("AcquireBegin = %+v, %v, %v; want %s", got, ok, err, in.ID)
				return
			}
			if _, err := s.Load(ctx, k, 20); err != nil && !errors.Is(err, conversation.ErrNotFound) {
				b.Error(err)
				return
			}
			turn := exchange(version, i)
			turn.Key, turn.Lease, turn.InputID, turn.Release = k, l, in.ID, true
			saved, err := s.Save(ctx, turn)
			if err != nil || !saved.Released {
				b.Errorf("Save = %+v, %v; want the lease freed", saved, err)
				return
			}
			version = saved.Version
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((SelfCPU(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/turn")
}

// SelfCPU returns the CPU time, user and system, this process has used so far
// (getrusage RUSAGE_SELF); it fails tb when the call fails.
func SelfCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchComparison runs the comparison workload: one thread of 1,000 turns, each a
// 200-character user message and an 800-character assistant reply saved (Save) and
// then loaded back (Load of the newest 20 messages). It reports the mean time of a turn
// over the ten turns that end at turn 10, 100, 500 and 1,000 ("ms/turn@N") and, when
// the store implements Sizer, its size after the 1,000 turns ("MiB"). open must return
// a new, empty store and close it in b.Cleanup; each iteration opens one. floor, when
// given, is the database's floor for a turn (a durable commit of 1 KB and a read of 20
// rows, by the backend's own SQL): it runs after each turn, in the same run, and the
// mean of the last window is reported ("floor-ms@1000") with the turn's multiple of it
// ("x-floor@1000").
func BenchComparison(b *testing.B, open func(b *testing.B) conversation.Store, floor ...func(ctx context.Context) error) {
	const turns, window = 1_000, 10
	marks := []int{10, 100, 500, 1_000}
	sums := make([]time.Duration, len(marks))
	var floorSum time.Duration
	var (
		runs int
		size int64
	)
	for b.Loop() {
		b.StopTimer()
		s := open(b)
		ctx := b.Context()
		b.StartTimer()

		took := make([]time.Duration, turns+1) // took[n] is turn n's time
		var version int64
		for n := 1; n <= turns; n++ {
			start := time.Now()
			saved, err := s.Save(ctx, exchange(version, n))
			if err != nil {
				b.Fatalf("turn %d: %v", n, err)
			}
			if _, err := s.Load(ctx, key, 20); err != nil {
				b.Fatalf("turn %d: %v", n, err)
			}
			took[n] = time.Since(start)
			version = saved.Version
			if len(floor) > 0 && n > turns-window {
				start := time.Now()
				if err := floor[0](ctx); err != nil {
					b.Fatalf("floor: %v", err)
				}
				floorSum += time.Since(start)
			}
		}
		for i, m := range marks {
			for n := m - window + 1; n <= m; n++ {
				sums[i] += took[n]
			}
		}
		runs++

		b.StopTimer()
		if sz, ok := s.(Sizer); ok {
			var err error
			if size, err = sz.Size(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	for i, m := range marks {
		mean := sums[i] / time.Duration(runs*window)
		b.ReportMetric(float64(mean)/float64(time.Millisecond), fmt.Sprintf("ms/turn@%d", m))
	}
	if size > 0 {
		b.ReportMetric(float64(size)/(1<<20), "MiB")
	}
	if floorSum > 0 {
		mean := floorSum / time.Duration(runs*window)
		b.ReportMetric(float64(mean)/float64(time.Millisecond), "floor-ms@1000")
		b.ReportMetric(float64(sums[len(sums)-1])/float64(floorSum), "x-floor@1000")
	}
}

// seed creates the benchmark conversation with n messages, in batched Saves, and
// returns its version.
func seed(b *testing.B, s conversation.Store, n int) int64 {
	b.Helper()
	const batch = 1_000
	var version int64
	for done := 0; done < n; {
		msgs := make([]conversation.Message, min(batch, n-done))
		for i := range msgs {
			msgs[i] = message(done + i)
		}
		saved, err := s.Save(b.Context(), conversation.Turn{Key: key, Version: version, Append: msgs})
		if err != nil {
			b.Fatalf("seed %d messages: %v", n, err)
		}
		version, done = saved.Version, done+len(msgs)
	}
	return version
}

// exchange returns turn n of the benchmark thread, computed from version: a
// 200-character question and an 800-character answer.
func exchange(version int64, n int) conversation.Turn {
	return conversation.Turn{
		Key:     key,
		Version: version,
		State:   conversation.State{Mode: conversation.ModeAssistant, StartedBy: "U0001", Turns: n, PromptTokens: 850 * n, CompletionTokens: 200 * n},
		Append:  []conversation.Message{message(2 * n), message(2*n + 1)},
	}
}

// message returns message i of the benchmark thread: a 200-character question when i
// is even, an 800-character answer when it is odd.
func message(i int) conversation.Message {
	if i%2 == 0 {
		return user(filler(fmt.Sprintf("Question %d: ", i/2), 200))
	}
	m := assistant(filler(fmt.Sprintf("Answer %d: ", i/2), 800))
	m.PromptTokens, m.CompletionTokens = 850, 200
	return m
}

const lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. "

// filler returns prefix followed by prose, n bytes in all.
func filler(prefix string, n int) string {
	s := prefix + strings.Repeat(lorem, n/len(lorem)+1)
	return s[:n]
}
