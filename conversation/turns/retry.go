package turns

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/deadline"
)

// storeBackoff is the backoff of store retries: from 100 ms, doubling to 5 s, with
// jitter, for at most maxElapsed (0: 30 s; negative: no bound but the caller's
// context).
func storeBackoff(maxElapsed time.Duration) backoff.BackOff {
	switch {
	case maxElapsed == 0:
		maxElapsed = 30 * time.Second
	case maxElapsed < 0:
		maxElapsed = 0
	}
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(100*time.Millisecond), backoff.WithMaxInterval(5*time.Second),
		backoff.WithMaxElapsedTime(maxElapsed))
}

// sleepCtx waits for d or until ctx ends, and reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d == backoff.Stop {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// storeDown reports whether err says the store is unavailable or did not answer in
// time (a hung connection ends with the deadline of the store call's context).
func storeDown(err error) bool {
	return errors.Is(err, conversation.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// answerBy runs op and returns its outcome, or errNoAnswer once ctx has ended and
// storeGrace passed with op still running: a store call on a connection that hangs
// (lib/pq does not interrupt one; docs/architecture.md, "Accepted means stored").
// op then goes on in the background, on ctx, and its outcome is dropped. An error op
// returns once ctx ended is wrapped with ctx's, so that storeDown accepts it
// (deadline.Answer).
func answerBy[T any](ctx context.Context, op func(context.Context) (T, error)) (T, error) {
	v, err := deadline.Answer(ctx, storeGrace, op)
	if errors.Is(err, deadline.ErrNoAnswer) {
		return v, errNoAnswer
	}
	return v, err
}

// within is answerBy on ctx bounded by d: the store call is given up d (and
// storeGrace) after it began.
func within[T any](ctx context.Context, d time.Duration, op func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return answerBy(ctx, op)
}
