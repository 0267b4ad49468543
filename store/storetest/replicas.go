package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// RunReplicas runs the tests of several stores on one database, as replicas of the
// bot (or processes sharing one SQLite file) use it, one subtest per case
// (t.Run("Acquire", …)). The subtests run one after the other; each calls open several
// times and must get each time a new store, with connections of its own, on one
// database that all the calls in t share (the cases keep to threads and inputs of
// their own) and that open closes in t.Cleanup.
func RunReplicas(t *testing.T, open func(t *testing.T) conversation.Store) {
	t.Run("Acquire", func(t *testing.T) { testReplicasAcquire(t, open) })
	t.Run("EnqueueRelease", func(t *testing.T) {
		testReplicasEnqueueFree(t, open, "4", func(s conversation.Store, l conversation.Lease) (*conversation.Input, bool, error) {
			released, err := s.Release(context.Background(), l)
			return nil, released, err
		})
	})
	t.Run("EnqueueNext", func(t *testing.T) {
		testReplicasEnqueueFree(t, open, "5", func(s conversation.Store, l conversation.Lease) (*conversation.Input, bool, error) {
			return s.Next(context.Background(), l, 0)
		})
	})
	t.Run("EnqueueSaveRelease", func(t *testing.T) {
		testReplicasEnqueueFree(t, open, "6", func(s conversation.Store, l conversation.Lease) (*conversation.Input, bool, error) {
			saved, err := s.Save(context.Background(), conversation.Turn{Key: l.Key, Lease: l, Release: true})
			return nil, saved.Released, err
		})
	})
}

// testReplicasAcquire races Acquires of one thread from several stores on one
// database, two workers a store, each of which begins the thread's input if it takes
// the thread: exactly one wins each round, with token 1, and begins the input, which
// another store enqueued, with one attempt.
func testReplicasAcquire(t *testing.T, open func(t *testing.T) conversation.Store) {
	ctx := context.Background()
	const replicas, rounds = 4, 5
	stores := make([]conversation.Store, replicas)
	for i := range stores {
		stores[i] = open(t)
	}
	for round := range rounds {
		k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: fmt.Sprintf("3.%d", round)}
		in := conversation.Input{ID: fmt.Sprintf("in:%d", round), Key: k, Kind: conversation.KindUserMessage}
		mustEnqueue(t, stores[round%replicas], in)
		var (
			mu     sync.Mutex
			tokens []int64
			begun  []*conversation.Input
		)
		wins, errs := race(replicas*2, func(i int) error {
			s := stores[i/2]
			l, _, ok, err := s.Acquire(ctx, k, fmt.Sprintf("replica-%d/%d", i/2, i%2), time.Minute)
			if err != nil {
				return err
			}
			if !ok {
				return errNotAcquired
			}
			next, err := s.Begin(ctx, l)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			tokens = append(tokens, l.Token)
			begun = append(begun, next)
			return nil
		})
		if wins != 1 {
			t.Fatalf("round %d: %d of %d concurrent Acquires won; want exactly 1 (others: %v)", round, wins, replicas*2, errs)
		}
		for _, err := range errs {
			if !errors.Is(err, errNotAcquired) {
				t.Errorf("round %d: a losing Acquire failed with %v; want ok false", round, err)
			}
		}
		if tokens[0] != 1 {
			t.Errorf("round %d: the winner's token = %d; want 1", round, tokens[0])
		}
		if b := begun[0]; b == nil || b.ID != in.ID || b.Attempts != 1 {
			t.Errorf("round %d: the winner began %+v; want input %s with 1 attempt", round, b, in.ID)
		}
	}
}

// testReplicasEnqueueFree races, round after round, free (Release, Next, or a Save
// with Turn.Release) of a
// thread's lease by its holder, whose queue is empty, against an Enqueue for the
// thread on another store followed by that store's Acquire, as a replica that receives
// an input does: the input must never be left pending with nobody to run it. Either
// free keeps the lease (it saw the input, or an Enqueue under way) and the holder runs
// the input (Next may have begun it), or free frees it and the enqueuer's Acquire takes
// it. The threads' ts are ts.0, ts.1, ….
func testReplicasEnqueueFree(t *testing.T, open func(t *testing.T) conversation.Store, ts string,
	free func(s conversation.Store, l conversation.Lease) (*conversation.Input, bool, error)) {
	ctx := context.Background()
	holder, enqueuer := open(t), open(t)
	const rounds = 100
	var kept, taken int
	for round := range rounds {
		k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: fmt.Sprintf("%s.%d", ts, round)}
		l := mustAcquire(t, holder, k, "holder/1", time.Minute)
		if in := mustBegin(t, holder, l); in != nil {
			t.Fatalf("round %d: Begin of an empty thread = %+v", round, in)
		}
		in := conversation.Input{ID: fmt.Sprintf("race:%s:%d", ts, round), Key: k, Kind: conversation.KindUserMessage}
		var (
			released, acquired bool
			rerr, eerr         error
			el                 conversation.Lease
		)
		var begun *conversation.Input
		release := func() { begun, released, rerr = free(holder, l) }
		enqueue := func() {
			var ok bool
			if ok, eerr = enqueuer.Enqueue(ctx, in); eerr == nil && !ok {
				eerr = errors.New("not enqueued")
			}
			if eerr == nil {
				el, _, acquired, eerr = enqueuer.Acquire(ctx, k, "enqueuer/1", time.Minute)
			}
		}
		// One side runs on a new goroutine, the other on this one, in turns, so that
		// each gets ahead in some rounds.
		first, second := release, enqueue
		if round%2 == 1 {
			first, second = enqueue, release
		}
		var wg sync.WaitGroup
		wg.Go(first)
		second()
		wg.Wait()
		if err := errors.Join(rerr, eerr); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		switch {
		case begun != nil && (begun.ID != in.ID || begun.Attempts != 1 || released || acquired):
			t.Fatalf("round %d: free began %+v (released %v, the enqueuer's Acquire %v); want input %s, kept", round, begun, released, acquired, in.ID)
		case begun != nil:
			kept++
		case !released && !acquired:
			kept++
			mustBeginID(t, holder, l, in.ID, 1)
		case released && acquired:
			taken++
			mustBeginID(t, enqueuer, el, in.ID, 1)
		case released:
			t.Fatalf("round %d: free freed the lease and the enqueuer's Acquire failed: input %s is stranded", round, in.ID)
		default:
			t.Fatalf("round %d: free kept the lease and the enqueuer's Acquire took it too", round)
		}
	}
	t.Logf("%d rounds: the holder kept the lease %d times, the enqueuer took it %d times", rounds, kept, taken)
}
