package turns

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/sqlite"
)

// fakeClock is a clock that moves only when advance is called; its timers fire then,
// in advance's goroutine.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	// added is closed, and replaced, when a timer is set.
	added chan struct{}
}

type fakeTimer struct {
	d    time.Duration
	at   time.Time
	f    func()
	done bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), added: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{d: d, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	close(c.added)
	c.added = make(chan struct{})
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

// advance moves the clock by d and runs the timers due by then.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for _, t := range c.timers {
		if !t.done && !t.at.After(c.now) {
			t.done = true
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// waitTimers waits until n timers of duration d are pending.
func (c *fakeClock) waitTimers(d time.Duration, n int) {
	for {
		c.mu.Lock()
		got := 0
		for _, t := range c.timers {
			if !t.done && t.d == d {
				got++
			}
		}
		added := c.added
		c.mu.Unlock()
		if got >= n {
			return
		}
		<-added
	}
}

const (
	testQuiet = 25 * time.Millisecond
	testMax   = time.Second
	// A burst is testBurst Submits begun within testWindow.
	testWindow = 200 * time.Millisecond
	testBurst  = 4
)

type waitResult struct {
	waited  time.Duration
	bounded bool
}

func startWait(a *admission) <-chan waitResult {
	res := make(chan waitResult, 1)
	go func() {
		w, b := a.wait(context.Background())
		res <- waitResult{w, b}
	}()
	return res
}

func notYet(t *testing.T, res <-chan waitResult, when string) {
	t.Helper()
	select {
	case r := <-res:
		t.Fatalf("turn started %s (waited %s, bounded %v); want it to wait", when, r.waited, r.bounded)
	default:
	}
}

// TestAdmissionWaitsForQuietIntake: a turn waits while a Submit is in flight, and
// while another began within the quiet window after one returned; it starts once the
// intake has been idle for the quiet window. An idle intake lets a turn start at once.
func TestAdmissionWaitsForQuietIntake(t *testing.T) {
	c := newFakeClock()
	a := newAdmission(c, testQuiet, testWindow, testBurst, testMax)
	if w, b := a.wait(context.Background()); w != 0 || b {
		t.Fatalf("idle intake: waited %s, bounded %v; want a start at once", w, b)
	}

	a.enter()
	res := startWait(a)
	c.waitTimers(testMax, 1) // the turn waits
	c.advance(testQuiet)
	notYet(t, res, "while a Submit was in flight")

	a.leave()
	c.advance(testQuiet / 2)
	a.enter() // another envelope within the quiet window
	c.advance(testQuiet / 2)
	notYet(t, res, "while a second Submit was in flight")
	a.leave()
	c.advance(testQuiet - time.Millisecond)
	notYet(t, res, "before the intake was quiet for the window")
	c.advance(time.Millisecond)
	r := <-res
	if r.bounded || r.waited != 2*testQuiet+testQuiet {
		t.Fatalf("waited %s, bounded %v; want %s, not bounded", r.waited, r.bounded, 3*testQuiet)
	}
	if w, b := a.wait(context.Background()); w != 0 || b {
		t.Fatalf("quiet intake: waited %s, bounded %v; want a start at once", w, b)
	}
}

// TestAdmissionWaitsOutABurst: after testBurst Submits within testWindow, a gap in
// the intake longer than the quiet window does not start the turns: they start once
// the burst has thinned out (fewer than testBurst Submits in the last testWindow).
func TestAdmissionWaitsOutABurst(t *testing.T) {
	c := newFakeClock()
	a := newAdmission(c, testQuiet, testWindow, testBurst, testMax)
	for range testBurst {
		a.enter()
		a.leave()
		c.advance(time.Millisecond)
	}
	res := startWait(a)
	c.waitTimers(testMax, 1)
	c.advance(testQuiet)
	notYet(t, res, "after a quiet window within a burst")
	// The first Submit of the burst began testBurst ms before the wait.
	c.advance(testWindow - testQuiet - testBurst*time.Millisecond - time.Millisecond)
	notYet(t, res, "before the burst thinned out")
	c.advance(time.Millisecond)
	if r := <-res; r.bounded || r.waited != testWindow-testBurst*time.Millisecond {
		t.Fatalf("waited %s, bounded %v; want %s, not bounded", r.waited, r.bounded, testWindow-testBurst*time.Millisecond)
	}
}

// TestAdmissionDeferralIsBounded: a turn waits at most maxDeferral, however busy the
// intake stays.
func TestAdmissionDeferralIsBounded(t *testing.T) {
	c := newFakeClock()
	a := newAdmission(c, testQuiet, testWindow, testBurst, testMax)
	a.enter() // never returns
	res := startWait(a)
	c.waitTimers(testMax, 1)
	c.advance(testMax - time.Millisecond)
	notYet(t, res, "before maxDeferral")
	c.advance(time.Millisecond)
	if r := <-res; !r.bounded || r.waited != testMax {
		t.Fatalf("waited %s, bounded %v; want %s, bounded", r.waited, r.bounded, testMax)
	}
}

// holdStore holds the EnqueueBatch of the inputs in hold until release is closed.
// A batch held past its deadline is tried again (commit.go, maxBatchRetry).
type holdStore struct {
	conversation.Store
	hold     map[string]bool
	held     chan struct{} // closed when a held input is first in EnqueueBatch
	heldOnce sync.Once
	release  chan struct{}
}

func (s *holdStore) EnqueueBatch(ctx context.Context, ins []conversation.Input) ([]bool, error) {
	for _, in := range ins {
		if s.hold[in.ID] {
			s.heldOnce.Do(func() { close(s.held) })
			<-s.release
		}
	}
	return s.Store.EnqueueBatch(ctx, ins)
}

// startHandler records the inputs whose turn started, and finishes them.
type startHandler struct{ started chan string }

func (h startHandler) Handle(ctx context.Context, r *Run) error {
	h.started <- r.In.ID
	return r.Drop(ctx, conversation.InputDone)
}

// newGatedRuntime returns a started Runtime on SQLite whose admission runs on c, and
// whose store holds the EnqueueBatch of input "held".
func newGatedRuntime(t *testing.T, c clock) (*Runtime, *holdStore, startHandler) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	st := &holdStore{Store: db, hold: map[string]bool{"held": true}, held: make(chan struct{}), release: make(chan struct{})}
	h := startHandler{started: make(chan string, 4)}
	rt := New(Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, h)
	gate := newAdmission(c, testQuiet, testWindow, testBurst, testMax)
	rt.intake.gate, rt.sched.gate = gate, gate
	startRuntime(t, ctx, rt)
	return rt, st, h
}

func mention(id string, thread int) conversation.Input {
	ts := fmt.Sprintf("%d.0", thread)
	return conversation.Input{ID: id, Key: conversation.Key{TeamID: "T", ChannelID: "C", ThreadTS: ts}, Kind: conversation.KindUserMessage,
		Message: &conversation.UserMessage{UserID: fmt.Sprintf("U%d", thread), TS: ts, Text: "hi", Mentioned: true}}
}

// submitHeld submits input "held" in the background and returns once its Submit is
// in flight (in EnqueueBatch); the result comes on the channel returned.
func submitHeld(t *testing.T, rt *Runtime, st *holdStore) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := rt.Submit(context.Background(), mention("held", 2))
		done <- err
	}()
	<-st.held
	return done
}

// TestTurnWaitsForTheIntake: a stored input's turn does not start while a Submit is
// in flight, nor until the intake has been quiet for the window; then it starts, and
// so does the held input's.
func TestTurnWaitsForTheIntake(t *testing.T) {
	c := newFakeClock()
	rt, st, h := newGatedRuntime(t, c)
	if _, err := rt.Submit(context.Background(), mention("first", 1)); err != nil {
		t.Fatal(err)
	}
	done := submitHeld(t, rt, st)
	c.waitTimers(testMax, 1) // first's worker waits at the gate
	c.advance(testQuiet)
	select {
	case id := <-h.started:
		t.Fatalf("turn of %s started while a Submit was in flight", id)
	default:
	}
	close(st.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c.waitTimers(testMax, 2) // held's worker waits too
	select {
	case id := <-h.started:
		t.Fatalf("turn of %s started before the intake was quiet", id)
	default:
	}
	c.advance(testQuiet)
	got := map[string]bool{<-h.started: true, <-h.started: true}
	if !got["first"] || !got["held"] {
		t.Fatalf("turns started %v; want first and held", got)
	}
}

// TestTurnDeferralIsBounded: a turn starts maxDeferral after it began waiting even
// while a Submit is still in flight.
func TestTurnDeferralIsBounded(t *testing.T) {
	c := newFakeClock()
	rt, st, h := newGatedRuntime(t, c)
	if _, err := rt.Submit(context.Background(), mention("first", 1)); err != nil {
		t.Fatal(err)
	}
	done := submitHeld(t, rt, st)
	c.waitTimers(testMax, 1)
	c.advance(testMax)
	if id := <-h.started; id != "first" {
		t.Fatalf("turn of %s started; want first's", id)
	}
	close(st.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c.advance(testQuiet)
	if id := <-h.started; id != "held" {
		t.Fatalf("turn of %s started; want held's", id)
	}
}

// TestAdmissionSteadyTrafficIsNotABurst: with the production settings, steady
// traffic of 60 envelopes a second whose Submits take 8 ms each (no 10 ms gap between
// them) lets a waiting turn start the moment the Submit in flight returns: it never
// waits for maxDeferral.
func TestAdmissionSteadyTrafficIsNotABurst(t *testing.T) {
	c := newFakeClock()
	a := newAdmission(c, intakeQuiet, burstWindow, burstSubmits, maxDeferral)
	const (
		every = 16 * time.Millisecond
		takes = 8 * time.Millisecond
	)
	// Two seconds of traffic before the turn: more Submits than a burst counts.
	for range 120 {
		a.enter()
		c.advance(takes)
		a.leave()
		c.advance(every - takes)
	}
	a.enter()
	res := startWait(a)
	c.waitTimers(maxDeferral, 1)
	notYet(t, res, "while a Submit was in flight")
	c.advance(takes)
	a.leave()
	r := <-res
	if r.bounded || r.waited != takes {
		t.Fatalf("turn waited %s (bounded %v); want %s: the Submit in flight only", r.waited, r.bounded, takes)
	}
}

// TestAdmissionBurstHoldsAcrossAGap: with the production settings, a burst (Submits
// back to back, a thousand a second) holds a turn back across a gap longer than
// intakeQuiet, until the burst window has thinned out.
func TestAdmissionBurstHoldsAcrossAGap(t *testing.T) {
	c := newFakeClock()
	a := newAdmission(c, intakeQuiet, burstWindow, burstSubmits, maxDeferral)
	for range 100 {
		a.enter()
		c.advance(time.Millisecond / 2)
		a.leave()
		c.advance(time.Millisecond / 2)
	}
	res := startWait(a)
	c.waitTimers(maxDeferral, 1)
	c.advance(20 * time.Millisecond) // a gap: the reader descheduled
	notYet(t, res, "in a gap of a burst")
	c.advance(burstWindow)
	if r := <-res; r.bounded {
		t.Fatalf("turn waited %s for the bound; want it to start once the burst thinned out", r.waited)
	}
}

// startRuntime starts rt on ctx, and shuts it down (10 s at most) when the test ends.
func startRuntime(t *testing.T, ctx context.Context, rt *Runtime) {
	t.Helper()
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(sctx)
	})
}
