package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/storetest"
)

// TestRenewOwnConnection holds every connection of the store's pool busy, as turns
// do in a burst or when the database is slow, and checks that Renew still answers:
// the heartbeat has a connection of its own (docs/architecture.md, "Durable turns").
func TestRenewOwnConnection(t *testing.T) {
	ctx := context.Background()
	const maxConns = 2
	s, err := Open(ctx, storetest.PostgresDSN(t), maxConns)
	storetest.Opened(t, s, err)
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	l, _, ok, err := s.Acquire(ctx, k, "holder", time.Minute)
	if err != nil || !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	for range maxConns {
		tx, err := s.db.BeginTx(ctx, nil) // holds a connection until it ends
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
	}
	// The pool is full: a turn's statement waits for a connection.
	busy, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := s.Ping(busy); err == nil {
		t.Fatal("Ping answered while every connection of the pool was held: the test holds none")
	}

	// Generous for a loaded machine; without a connection of its own, Renew waits
	// for one of the pool's until this ends.
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	states, err := s.Renew(rctx, "holder", time.Minute)
	if err != nil {
		t.Fatalf("Renew with every connection of the pool busy: %v", err)
	}
	if len(states) != 1 || states[0].Key != k || states[0].Token != l.Token {
		t.Errorf("Renew = %+v; want the lease of %s, token %d", states, k, l.Token)
	}
}
