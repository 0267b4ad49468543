package deadline

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestAnswer: an answer in time is returned as it is; a call that ignores its
// context is given up with ErrNoAnswer once the context ended and the grace passed;
// an error returned after the deadline reads as the deadline.
func TestAnswer(t *testing.T) {
	v, err := Answer(context.Background(), time.Millisecond, func(context.Context) (int, error) { return 7, nil })
	if v != 7 || err != nil {
		t.Fatalf("Answer = %d, %v; want 7, nil", v, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	release := make(chan struct{})
	defer close(release)
	_, err = Answer(ctx, 10*time.Millisecond, func(context.Context) (int, error) {
		<-release // a connection that hangs, whatever the context says
		return 0, nil
	})
	if !errors.Is(err, ErrNoAnswer) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Answer of a hung call = %v; want ErrNoAnswer, a context.DeadlineExceeded", err)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	cancelled := errors.New("pq: canceling statement due to user request")
	_, err = Answer(ctx2, time.Minute, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, cancelled
	})
	if !errors.Is(err, cancelled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Answer = %v; want the call's error wrapped with the deadline", err)
	}
}
