package bot_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// storingSubmitter records, per input, when its Submit returned (the input is
// "stored" then); hold, when set, makes Submit wait until it returns.
type storingSubmitter struct {
	mu      sync.Mutex
	stored  map[string]time.Time
	order   map[conversation.Key][]string
	changed chan struct{}
	hold    func(ctx context.Context, in conversation.Input)
}

func newStoringSubmitter() *storingSubmitter {
	return &storingSubmitter{stored: map[string]time.Time{}, order: map[conversation.Key][]string{}, changed: make(chan struct{})}
}

func (s *storingSubmitter) Submit(ctx context.Context, in conversation.Input) (bool, error) {
	if s.hold != nil {
		s.hold(ctx, in)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.stored[in.ID]; ok {
		return false, nil // the message twin of an app_mention, or a redelivery
	}
	s.stored[in.ID] = time.Now()
	s.order[in.Key] = append(s.order[in.Key], in.Message.TS)
	close(s.changed)
	s.changed = make(chan struct{})
	return true, nil
}

// waitStored waits until n inputs are stored.
func (s *storingSubmitter) waitStored(t *testing.T, n int) {
	t.Helper()
	ctx := testContext(t)
	for {
		s.mu.Lock()
		got, changed := len(s.stored), s.changed
		s.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("%d inputs stored; want %d", got, n)
		}
	}
}

// TestEnvelopesTakenConcurrently: while one thread's input is being stored (its
// Submit waits), the inputs of other threads are taken and stored; the waiting one
// is acked only once its Submit returned.
func TestEnvelopesTakenConcurrently(t *testing.T) {
	sub := newStoringSubmitter()
	others := make(chan struct{}, 100)
	var slowTS string
	var tsMu sync.Mutex
	var starved atomic.Bool // the slow Submit saw no other thread's input
	sub.hold = func(ctx context.Context, in conversation.Input) {
		tsMu.Lock()
		slow := in.Message.TS == slowTS
		tsMu.Unlock()
		if !slow {
			others <- struct{}{}
			return
		}
		// Wait for the inputs of the ten other threads: handled one at a time, or
		// on a lane shared with the slow one, they would not come.
		for range 10 {
			select {
			case <-others:
			case <-ctx.Done():
				starved.Store(true)
				return
			}
		}
	}
	h := startBotWith(t, emulator.Config{}, func(c *bot.Config) { c.Submitter = sub; c.AckBudget = 20 * time.Second })
	tsMu.Lock()
	ts, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> slow", "")
	slowTS = ts
	tsMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	// hold reads slowTS under tsMu, which was held from the post to here.
	for i := range 10 {
		if _, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", fmt.Sprintf("<@U0BOT> other %d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	sub.waitStored(t, 11)
	env, ok := h.emu.EventEnvelope("app_mention", ts)
	if !ok {
		t.Fatal("no app_mention envelope")
	}
	h.waitAcked(t, env.ID)
	checkAckedAfterStored(t, h.emu, sub)
	if starved.Load() {
		t.Error("while one input was being stored, the other threads' inputs were not all taken")
	}
}

// TestBurstKeepsThreadOrder: a burst of messages in several threads, posted as fast as
// the emulator takes them, is stored with each thread's inputs in the order they were
// posted, every input once, every envelope acked once its input was stored.
func TestBurstKeepsThreadOrder(t *testing.T) {
	sub := newStoringSubmitter()
	h := startBotWith(t, emulator.Config{}, func(c *bot.Config) { c.Submitter = sub })
	const threads, replies = 6, 10
	roots := make([]string, threads)
	want := map[string][]string{}
	for i := range roots {
		ts, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", fmt.Sprintf("<@U0BOT> thread %d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		roots[i] = ts
		want[ts] = []string{ts}
	}
	for r := range replies {
		for i, root := range roots {
			ts, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", fmt.Sprintf("<@U0BOT> thread %d reply %d", i, r), root)
			if err != nil {
				t.Fatal(err)
			}
			want[root] = append(want[root], ts)
		}
	}
	sub.waitStored(t, threads*(replies+1))
	sub.mu.Lock()
	for key, got := range sub.order {
		if !slices.Equal(got, want[key.ThreadTS]) {
			t.Errorf("thread %s: inputs stored in the order %v; want %v", key.ThreadTS, got, want[key.ThreadTS])
		}
	}
	sub.mu.Unlock()
	if err := h.emu.WaitFor(testContext(t), func() bool {
		for _, e := range h.emu.Envelopes() {
			if !e.Acked {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatal("not every envelope acked")
	}
	checkAckedAfterStored(t, h.emu, sub)
}

// checkAckedAfterStored checks that no app_mention envelope was acked before its
// input was stored (the message twin of a mention is dropped, and acked at once).
func checkAckedAfterStored(t *testing.T, emu *emulator.Server, sub *storingSubmitter) {
	t.Helper()
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for _, a := range emu.Acks() {
		env, _ := emu.Envelope(a.EnvelopeID)
		if env.EventType != "app_mention" {
			continue
		}
		id := conversation.MessageInputID("T0TEAM", env.Channel, env.TS)
		stored, ok := sub.stored[id]
		if !ok || a.Time.Before(stored) {
			t.Errorf("envelope %s (%s) acked at %v; its input stored at %v (%v)", a.EnvelopeID, env.EventType, a.Time, stored, ok)
		}
	}
}

// TestLanesKeepEachKeysOrder: work given for a key runs in the order it was given,
// one at a time, while the keys' lanes run concurrently.
func TestLanesKeepEachKeysOrder(t *testing.T) {
	l := bot.StartLanes(64)
	const keys, each = 20, 50
	var mu sync.Mutex
	got := map[string][]int{}
	running := map[string]bool{}
	for i := range each {
		for k := range keys {
			key := fmt.Sprintf("k%d", k)
			l.Do(key, func() {
				mu.Lock()
				if running[key] {
					t.Errorf("two pieces of work of %s ran at once", key)
				}
				running[key] = true
				mu.Unlock()
				mu.Lock()
				got[key] = append(got[key], i)
				running[key] = false
				mu.Unlock()
			})
		}
	}
	l.Stop()
	for k := range keys {
		key := fmt.Sprintf("k%d", k)
		if len(got[key]) != each || !slices.IsSorted(got[key]) {
			t.Errorf("%s ran %v; want 0 to %d in order", key, got[key], each-1)
		}
	}
}

// TestLanesNeverWaitForAnotherKey: while one key's work waits, the work of 2,000
// other keys runs to its end (with the lanes hashed onto 512 goroutines, some of them
// shared the waiting key's and waited behind it).
func TestLanesNeverWaitForAnotherKey(t *testing.T) {
	l := bot.StartLanes(4096)
	release := make(chan struct{})
	l.Do("slow", func() { <-release })
	var others sync.WaitGroup
	for i := range 2000 {
		others.Add(1)
		l.Do(fmt.Sprintf("other%d", i), others.Done)
	}
	done := make(chan struct{})
	go func() { others.Wait(); close(done) }()
	select {
	case <-done:
	case <-testContext(t).Done():
		t.Error("the other keys' work waited behind the slow key's")
	}
	close(release)
	l.Stop()
}

// TestLanesBounded: with their maximum held, do waits until a piece of work ends.
func TestLanesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := bot.StartLanes(2)
		release := make(chan struct{})
		l.Do("a", func() { <-release })
		l.Do("b", func() {})
		l.Do("a", func() {}) // queued behind the first: the lanes hold 2 once b ends
		var given atomic.Bool
		go func() {
			l.Do("c", func() {})
			given.Store(true)
		}()
		synctest.Wait()
		if given.Load() {
			t.Fatal("do returned with the lanes full")
		}
		close(release)
		synctest.Wait()
		if !given.Load() {
			t.Fatal("do still waits after the work ended")
		}
		l.Stop()
	})
}

// TestLanesFreeWorkDone: the work a lane has run is freed while the lane goes on with
// the rest of its queue (a thread's flood would otherwise stay in memory, beyond the
// lanes' maximum, until its lane ends).
func TestLanesFreeWorkDone(t *testing.T) {
	l := bot.StartLanes(64)
	release, last := make(chan struct{}), make(chan struct{})
	l.Do("hot", func() { <-release })
	const n = 32
	var freed, ran atomic.Int32
	for range n {
		payload := new([16 << 10]byte)
		runtime.AddCleanup(payload, func(*atomic.Int32) { freed.Add(1) }, &freed)
		l.Do("hot", func() { payload[0]++; ran.Add(1) })
	}
	l.Do("hot", func() { <-last }) // the lane goes on: its queue is not empty
	close(release)
	ctx := testContext(t)
	for freed.Load() < n {
		runtime.GC()
		select {
		case <-ctx.Done():
			t.Fatalf("%d of the %d pieces of work run were freed while their lane went on", freed.Load(), ran.Load())
		default:
			runtime.Gosched()
		}
	}
	close(last)
	l.Stop()
}
