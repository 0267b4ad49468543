package deadline

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoAnswer is Answer's error for a call still running grace after its context
// ended. It wraps context.DeadlineExceeded, whether the context ended by its
// deadline or was cancelled.
var ErrNoAnswer = fmt.Errorf("no answer by the deadline: %w", context.DeadlineExceeded)

// Answer runs op on ctx and returns its outcome, or ErrNoAnswer once ctx has ended
// and grace passed with op still running: op then goes on in the background, on ctx,
// and its outcome is dropped. An error op returns once ctx ended is wrapped with
// ctx's (a store's own error for a call cut short, such as PostgreSQL's 57014, query
// cancelled, then reads as context.DeadlineExceeded or context.Canceled). A ctx that
// never ends waits for op.
func Answer[T any](ctx context.Context, grace time.Duration, op func(context.Context) (T, error)) (T, error) {
	type outcome struct {
		v   T
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := op(ctx)
		if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		done <- outcome{v, err}
	}()
	select {
	case o := <-done:
		return o.v, o.err
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case o := <-done:
		return o.v, o.err
	case <-t.C:
		var zero T
		return zero, ErrNoAnswer
	}
}
