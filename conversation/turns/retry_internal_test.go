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
// minCheck, or at the deadline; no later than its limit either way. Each time left
// lies 150 ms or more inside its reserve's band, so that a stall before the call on a
// loaded machine does not move it to the next.
func TestCheckTimeKeepsAReserveThatLeavesTime(t *testing.T) {
	for _, c := range []struct {
		left, limit, reserve time.Duration // reserve: the time the check leaves before the deadline
	}{
		{2500 * time.Millisecond, 0, checkReserve},
		{1050 * time.Millisecond, 0, spoolReserve}, // checkReserve would leave 50 ms
		{850 * time.Millisecond, 0, spoolReserve},
		{580 * time.Millisecond, 0, storeGrace}, // spoolReserve would leave 80 ms
		{300 * time.Millisecond, 0, 0},          // storeGrace would leave 50 ms: the deadline
		{2500 * time.Millisecond, countTimeout, -1},
		{0, countTimeout, -1}, // no deadline
	} {
		ctx := context.Background()
		if c.left > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.left)
			defer cancel()
		}
		before := time.Now()
		cctx, cancel := checkTime(ctx, c.limit, lateReserves...)
		after := time.Now()
		end, ok := cctx.Deadline()
		cancel()
		if !ok {
			t.Errorf("%v left, limit %v: the check has no deadline", c.left, c.limit)
			continue
		}
		if c.reserve >= 0 {
			dl, _ := ctx.Deadline()
			if got := dl.Sub(end); got != c.reserve {
				t.Errorf("%v left: the check ends %v before the deadline; want %v", c.left, got, c.reserve)
			}
			continue
		}
		// The limit, from the moment of the call.
		if end.Before(before.Add(c.limit)) || end.After(after.Add(c.limit)) {
			t.Errorf("%v left, limit %v: the check ends %v after the call; want the limit", c.left, c.limit, end.Sub(before))
		}
	}
}
