package turns

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestAnswerByCallCutShortIsStoreDown: a store call that ends with an error of its
// own once its context ended (PostgreSQL's 57014, the statement cancelled) did not
// answer in time, as storeDown reads it: the drain tries it again later rather than
// count a failure that would drop the input (spool.go, maxUnspoolFailures).
func TestAnswerByCallCutShortIsStoreDown(t *testing.T) {
	cancelled := errors.New(`pq: canceling statement due to user request (57014)`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := answerBy(ctx, func(ctx context.Context) (bool, error) {
		<-ctx.Done()
		return false, cancelled
	})
	if !errors.Is(err, cancelled) || !storeDown(err) {
		t.Fatalf("answerBy = %v; want the store's error, read as the store down", err)
	}
	// An error that comes in time is the store's answer.
	_, err = answerBy(context.Background(), func(context.Context) (bool, error) { return false, cancelled })
	if err != cancelled {
		t.Fatalf("answerBy = %v; want %v as it is", err, cancelled)
	}
}

// TestCheckTimeKeepsAReserveThatLeavesTime: a check ends checkReserve before the
// deadline, or, for a late Submit, by the first smaller reserve that leaves it
// minCheck, or at the deadline; no later than its limit either way.
func TestCheckTimeKeepsAReserveThatLeavesTime(t *testing.T) {
	for _, c := range []struct {
		left, limit, want time.Duration // want: the check's time from now
	}{
		{2500 * time.Millisecond, 0, 1500 * time.Millisecond},
		{1050 * time.Millisecond, 0, 550 * time.Millisecond}, // checkReserve would leave 50 ms
		{650 * time.Millisecond, 0, 150 * time.Millisecond},
		{580 * time.Millisecond, 0, 330 * time.Millisecond}, // spoolReserve would leave 80 ms
		{300 * time.Millisecond, 0, 300 * time.Millisecond}, // storeGrace would leave 50 ms: the deadline
		{2500 * time.Millisecond, countTimeout, countTimeout},
		{0, countTimeout, countTimeout}, // no deadline
	} {
		ctx := context.Background()
		if c.left > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.left)
			defer cancel()
		}
		cctx, cancel := checkTime(ctx, c.limit, lateReserves...)
		end, ok := cctx.Deadline()
		cancel()
		if got := time.Until(end); !ok || got > c.want || got < c.want-100*time.Millisecond {
			t.Errorf("%v left, limit %v: the check has %v (deadline %v); want %v", c.left, c.limit, got, ok, c.want)
		}
	}
}
