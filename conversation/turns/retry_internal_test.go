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
