package turns

import (
	"context"
	"sync"
	"time"
)

// Intake first (docs/architecture.md, "Durable turns"): a turn starts only once the
// intake is quiet. During a burst, hundreds of turns would otherwise start the moment
// their inputs are stored, and their store writes, Slack calls and model calls would
// take the CPU from the goroutines that read the envelopes and store them: the acks
// grow late, and Slack delivers them again. Go has no goroutine priorities, so the
// turns step aside instead: a worker waits before it takes its thread's lease and
// before each later input it begins, while a Submit is in flight, or one returned
// less than intakeQuiet ago (0 in production), or burstSubmits began within burstWindow (a burst whose
// envelopes the reader is still parsing: a gap between two Submits is not the
// burst's end). It waits at most maxDeferral, so that steady traffic never holds a
// turn back for longer; a thread's inputs still run one at a time, in order.

const (
	// intakeQuiet is how long the intake must have been idle (no Submit in flight)
	// before turns start. It is 0: outside a burst a turn starts the moment no Submit
	// is in flight, so that steady traffic, however close its envelopes come, never
	// holds a turn back for longer than the Submit it waits for. A burst is held back
	// by its rate instead (burstSubmits), across the gaps between its envelopes.
	intakeQuiet = 0
	// burstSubmits Submits begun within burstWindow (320 a second) are a burst: the
	// turns wait until it has thinned out, even across a gap longer than intakeQuiet
	// (the reader descheduled mid-burst). Steady traffic stays well below it.
	burstSubmits = 64
	burstWindow  = 200 * time.Millisecond
	// maxDeferral bounds how long one worker waits for the intake to go quiet:
	// longer than most bursts take to be stored (1,000 mentions took 1 to 3 s on a
	// shared 2-core machine), short next to a model's answer.
	maxDeferral = 2 * time.Second
)

// clock is the admission's clock: the wall's (realClock), never Config.Now, which
// a test may stop; a test of the admission sets its own.
type clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d; stop cancels it.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// admission tracks whether the intake is busy, and holds the turns back meanwhile.
// The gate (open) opens once no Submit has been in flight for quiet, and fewer than
// len(recent) began within window; it closes when one begins. One timer watches it,
// so a waiting turn wakes only when it may start.
type admission struct {
	quiet, window, max time.Duration
	clock              clock

	mu       sync.Mutex
	inFlight int
	lastDone time.Time
	// recent holds when the last Submits (burst of them) began.
	recent recentTimes
	// armed: a timer will look at the intake again (check).
	armed bool
	// open is closed while the intake is quiet; replaced when a Submit begins.
	open   chan struct{}
	isOpen bool
}

// newAdmission returns an open admission on c that takes burst Submits begun within
// window for a burst, and holds a turn back for at most maxWait (0: never).
func newAdmission(c clock, quiet, window time.Duration, burst int, maxWait time.Duration) *admission {
	open := make(chan struct{})
	close(open)
	return &admission{quiet: quiet, window: window, max: maxWait, clock: c, recent: newRecentTimes(burst), open: open, isOpen: true}
}

// enter notes that a Submit began: turns wait from now on.
func (a *admission) enter() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight++
	a.recent.add(a.clock.Now())
	if a.isOpen {
		a.isOpen = false
		a.open = make(chan struct{})
	}
}

// leave notes that a Submit returned: the last one in flight opens the gate at once
// when quiet is 0 and no burst is under way, or arms the timer that looks again
// (check), unless another Submit begins meanwhile.
func (a *admission) leave() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight--
	a.lastDone = a.clock.Now()
	if a.inFlight > 0 || a.armed {
		return
	}
	if a.quiet <= 0 {
		a.checkLocked()
		return
	}
	a.armed = true
	a.clock.AfterFunc(a.quiet, a.check)
}

// check opens the gate when the intake has been idle for quiet and the burst, if
// any, has thinned out, or looks again when it will have.
func (a *admission) check() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.armed = false
	a.checkLocked()
}

// checkLocked is check, with a.mu held and no timer armed.
func (a *admission) checkLocked() {
	if a.inFlight > 0 || a.isOpen {
		return // the next leave looks again
	}
	until := a.lastDone.Add(a.quiet)
	if b := a.recent.oldest(); !b.IsZero() && b.Add(a.window).After(until) {
		until = b.Add(a.window)
	}
	if rest := until.Sub(a.clock.Now()); rest > 0 {
		a.armed = true
		a.clock.AfterFunc(rest, a.check)
		return
	}
	a.isOpen = true
	close(a.open)
}

// wait returns once the intake is quiet, max after it was called, or when ctx ends.
// It reports how long it waited (0: the intake was quiet) and whether it stopped
// waiting because max passed (bounded).
func (a *admission) wait(ctx context.Context) (waited time.Duration, bounded bool) {
	if a.max <= 0 {
		return 0, false
	}
	a.mu.Lock()
	open := a.open
	a.mu.Unlock()
	select {
	case <-open:
		return 0, false
	default:
	}
	start := a.clock.Now()
	expired := make(chan struct{})
	stop := a.clock.AfterFunc(a.max, func() { close(expired) })
	defer stop()
	select {
	case <-open:
	case <-expired:
		bounded = true
	case <-ctx.Done():
	}
	return a.clock.Now().Sub(start), bounded
}

// recentTimes holds when the last few events came: a ring of a fixed size n.
type recentTimes struct {
	at   []time.Time
	next int // the index of the oldest
}

// newRecentTimes returns recentTimes of the last n events (at least 1).
func newRecentTimes(n int) recentTimes { return recentTimes{at: make([]time.Time, max(n, 1))} }

// add records an event at t, forgetting the oldest.
func (r *recentTimes) add(t time.Time) {
	r.at[r.next] = t
	r.next = (r.next + 1) % len(r.at)
}

// oldest returns when the n-th newest event came (zero until n came).
func (r *recentTimes) oldest() time.Time { return r.at[r.next] }

// within reports whether the last n events all came less than d before now.
func (r *recentTimes) within(now time.Time, d time.Duration) bool {
	o := r.oldest()
	return !o.IsZero() && now.Sub(o) < d
}
