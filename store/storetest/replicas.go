package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// RunReplicas runs the tests of several stores on one database, as replicas of the
// bot (or processes sharing one SQLite file) use it, one subtest per case
// (t.Run("Claim", …)). The subtests run one after the other; each calls open several
// times and must get each time a new store, with connections of its own, on one
// database that all the calls in t share (the cases keep to inputs of their own) and
// that open closes in t.Cleanup.
func RunReplicas(t *testing.T, open func(t *testing.T) conversation.Store) {
	t.Run("Claim", func(t *testing.T) { testReplicasClaim(t, open) })
}

// testReplicasClaim races claims on one input from several stores on one database,
// two workers a store: exactly one claim wins each round, and every claim returns the
// winner's attempt count.
func testReplicasClaim(t *testing.T, open func(t *testing.T) conversation.Store) {
	ctx := context.Background()
	const replicas, rounds = 4, 5
	stores := make([]conversation.Store, replicas)
	for i := range stores {
		stores[i] = open(t)
	}
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	for round := range rounds {
		id := fmt.Sprintf("in%d", round)
		if ok, err := stores[0].Enqueue(ctx, conversation.Input{ID: id, Key: key, Kind: conversation.KindUserMessage}); !ok || err != nil {
			t.Fatalf("Enqueue = %v, %v", ok, err)
		}
		type result struct {
			attempts int
			ok       bool
			err      error
		}
		start := make(chan struct{})
		results := make(chan result, replicas*2)
		for _, s := range stores {
			for range 2 { // two workers a replica
				go func() {
					<-start
					attempts, ok, err := s.Claim(ctx, id, time.Now().Add(time.Hour))
					results <- result{attempts, ok, err}
				}()
			}
		}
		close(start)
		wins := 0
		for range cap(results) {
			r := <-results
			switch {
			case r.err != nil:
				t.Errorf("round %d: Claim: %v", round, r.err)
			case r.attempts != 1:
				t.Errorf("round %d: Claim = %d attempts; want 1", round, r.attempts)
			case r.ok:
				wins++
			}
		}
		if wins != 1 {
			t.Errorf("round %d: %d of %d claims won; want exactly 1", round, wins, cap(results))
		}
	}
}
