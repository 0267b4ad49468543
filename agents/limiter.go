package agents

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// outcome is what an attempt tells the limiter about the endpoint's load.
type outcome int

const (
	// neutral: the attempt failed for a reason that says nothing about the rate
	// limit (a 5xx, a timeout, a broken connection, a cancelled context).
	neutral outcome = iota
	// answered: the endpoint answered the call.
	answered
	// rateLimited: the endpoint answered HTTP 429.
	rateLimited
)

// limiter bounds the model calls in flight to one endpoint with an adaptive limit
// (additive increase, multiplicative decrease, as TCP's congestion control):
//
//   - an attempt takes a slot before its request is sent and gives it back when its
//     response has been read to the end; callers beyond the limit wait, first come
//     first served;
//   - an HTTP 429 halves the limit (not below 1), once per round: a 429 of an attempt
//     sent before the last decrease does not lower the limit again, so a burst of
//     simultaneous 429s halves it once;
//   - a Retry-After on a 429 holds every new attempt back until it has passed;
//   - each run of successes as long as the limit raises it by one, up to max.
//
// It is safe for concurrent use.
type limiter struct {
	max     int
	maxHold time.Duration
	logger  *slog.Logger

	mu        sync.Mutex
	limit     int
	inFlight  int
	streak    int             // answers since the limit last changed
	round     uint64          // decreases so far; an attempt is sent in a round
	notBefore time.Time       // no attempt is sent before it (Retry-After)
	waiters   []chan struct{} // callers waiting for a slot, oldest first
	holding   int             // callers with a slot waiting for notBefore
}

// newLimiter returns a limiter starting at, and never above, max calls in flight;
// a Retry-After holds calls back for maxHold at most.
func newLimiter(max int, maxHold time.Duration, logger *slog.Logger) *limiter {
	return &limiter{max: max, limit: max, maxHold: maxHold, logger: logger}
}

// acquire waits for a slot and for any Retry-After hold to pass, and returns the round
// the attempt is sent in (for release). It returns ctx's error, holding no slot, when
// ctx ends first.
func (l *limiter) acquire(ctx context.Context) (round uint64, err error) {
	l.mu.Lock()
	if l.inFlight < l.limit && len(l.waiters) == 0 {
		l.inFlight++
		l.mu.Unlock()
	} else {
		granted := make(chan struct{})
		l.waiters = append(l.waiters, granted)
		l.mu.Unlock()
		select {
		case <-granted: // grant counted the slot as ours
		case <-ctx.Done():
			l.mu.Lock()
			if i := slices.Index(l.waiters, granted); i >= 0 {
				l.waiters = slices.Delete(l.waiters, i, i+1)
			} else { // granted meanwhile: hand the slot on
				l.inFlight--
				l.grant()
			}
			l.mu.Unlock()
			return 0, ctx.Err()
		}
	}

	// Holding a slot, wait out the Retry-After hold, which a 429 may extend meanwhile.
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		wait := time.Until(l.notBefore)
		if wait <= 0 {
			return l.round, nil
		}
		l.holding++
		l.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		l.mu.Lock()
		l.holding--
		if err := ctx.Err(); err != nil {
			l.inFlight--
			l.grant()
			return 0, err
		}
	}
}

// release gives back the slot of an attempt sent in round, with its outcome. For a
// 429, retryAfter is the response's Retry-After (0 without one) and at is when the
// response arrived.
func (l *limiter) release(ctx context.Context, round uint64, o outcome, retryAfter time.Duration, at time.Time) {
	l.mu.Lock()
	l.inFlight--
	before, lowered := l.limit, false
	switch o {
	case answered:
		if l.limit < l.max {
			l.streak++
			if l.streak >= l.limit {
				l.limit++
				l.streak = 0
			}
		}
	case rateLimited:
		l.streak = 0
		if round == l.round {
			l.round++
			l.limit = max(1, l.limit/2)
			lowered = true
		}
		if retryAfter > 0 {
			if nb := at.Add(min(retryAfter, l.maxHold)); nb.After(l.notBefore) {
				l.notBefore = nb
			}
		}
	}
	after, hold := l.limit, time.Until(l.notBefore)
	l.grant()
	l.mu.Unlock()

	switch {
	case lowered && after < before:
		l.logger.WarnContext(ctx, "model endpoint rate limited (HTTP 429); fewer model calls at once",
			slog.Int("limit", after), slog.Int("max", l.max), slog.Duration("hold", max(hold, 0)))
	case after > before && after == l.max:
		l.logger.InfoContext(ctx, "model calls at once back to the maximum", slog.Int("limit", after))
	}
}

// grant hands free slots to the oldest waiters. l.mu is held.
func (l *limiter) grant() {
	for l.inFlight < l.limit && len(l.waiters) > 0 {
		close(l.waiters[0])
		l.waiters[0] = nil
		l.waiters = l.waiters[1:]
		l.inFlight++
	}
}

// hold returns how long the Retry-After hold still lasts (0 when none).
func (l *limiter) hold() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(time.Until(l.notBefore), 0)
}

// current returns the limit, the attempts in flight and the callers waiting.
func (l *limiter) current() (limit, inFlight, waiting int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit, l.inFlight - l.holding, len(l.waiters) + l.holding
}
