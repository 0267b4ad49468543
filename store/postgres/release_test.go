package postgres

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
	"github.com/threadwright/threadwright/store/storetest"
)

// TestReleaseWaitsForEnqueue checks the guard of releaseSQL, and of nextSQL and
// Save's released (Turn.Release), which have it too: a Release (or Next) that started before an Enqueue of its thread
// committed, and so cannot see the input, but finds the lease row written by that
// Enqueue, keeps the lease (the holder goes on and begins the input) rather than
// freeing it behind the input's back.
func TestReleaseWaitsForEnqueue(t *testing.T) {
	t.Run("Release", func(t *testing.T) {
		testReleaseWaitsForEnqueue(t, func(s *Store, l conversation.Lease) (bool, error) {
			return s.Release(context.Background(), l)
		})
	})
	t.Run("Next", func(t *testing.T) {
		testReleaseWaitsForEnqueue(t, func(s *Store, l conversation.Lease) (bool, error) {
			in, released, err := s.Next(context.Background(), l, 0)
			if in != nil {
				t.Errorf("Next began %s, which it cannot see", in.ID)
			}
			return released, err
		})
	})
	t.Run("SaveRelease", func(t *testing.T) {
		testReleaseWaitsForEnqueue(t, func(s *Store, l conversation.Lease) (bool, error) {
			saved, err := s.Save(context.Background(), conversation.Turn{Key: l.Key, Lease: l, Release: true})
			return saved.Released, err
		})
	})
}

func testReleaseWaitsForEnqueue(t *testing.T, release func(s *Store, l conversation.Lease) (bool, error)) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	s, err := Open(ctx, dsn, 4)
	storetest.Opened(t, s, err)
	db, err := sql.Open("postgres", dsn)
	storetest.Opened(t, db, err)
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	l, _, ok, err := s.Acquire(ctx, k, "holder", time.Minute)
	if err != nil || !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}

	// An Enqueue that has written the input and the lease row, and not committed.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var seq int64
	now := sqlstore.Now()
	if err := tx.QueryRowContext(ctx, enqueueSQL, "in", "", k.TeamID, k.ChannelID, k.ThreadTS, "user_message", nil,
		now, now, true, "U1", "U1").Scan(&seq); err != nil {
		t.Fatal(err)
	}

	type result struct {
		released bool
		err      error
	}
	done := make(chan result, 1)
	go func() {
		released, err := release(s, l)
		done <- result{released, err}
	}()
	// Release's snapshot does not see the input; it waits for the lease row's lock.
	// It is the only statement that can wait for a lock here (Save's text is longer
	// than pg_stat_activity keeps of a query, track_activity_query_size).
	deadline := time.Now().Add(10 * time.Second)
	for waiting := false; !waiting; {
		if err := db.QueryRowContext(ctx, `
			SELECT EXISTS (SELECT FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock')`,
		).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			t.Fatalf("release returned (%v, %v) while the Enqueue held the lease row; want it to wait", r.released, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("Release is not waiting for the lease row after 10s")
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.released || r.err != nil {
		t.Fatalf("Release after a concurrent Enqueue = %v, %v; want false (kept), nil", r.released, r.err)
	}
	in, err := s.Begin(ctx, l)
	if err != nil || in == nil || in.ID != "in" || in.Seq != seq {
		t.Fatalf("Begin = %+v, %v; want input in (seq %d)", in, err, seq)
	}
}

// TestAcquireBeginSkipsALockedInput checks that AcquireBegin, which locks the lease row
// before an input row (Save takes them in the other order), does not wait for an
// input row another writer holds: it takes the lease and begins nothing, and the
// holder's Next begins the input once the writer is done.
func TestAcquireBeginSkipsALockedInput(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	s, err := Open(ctx, dsn, 4)
	storetest.Opened(t, s, err)
	db, err := sql.Open("postgres", dsn)
	storetest.Opened(t, db, err)
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2"}
	if ok, err := s.Enqueue(ctx, conversation.Input{ID: "locked", Key: k, Kind: conversation.KindUserMessage}); err != nil || !ok {
		t.Fatalf("Enqueue = %v, %v", ok, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT FROM inputs WHERE id = 'locked' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l, _, in, ok, err := s.AcquireBegin(actx, k, "holder", time.Minute)
	if err != nil || !ok || in != nil {
		t.Fatalf("AcquireBegin with the input's row locked = %+v, %v, %v; want the lease, no input", in, ok, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if in, released, err := s.Next(ctx, l, 0); err != nil || released || in == nil || in.ID != "locked" || in.Attempts != 1 {
		t.Fatalf("Next = %+v, %v, %v; want input locked with 1 attempt", in, released, err)
	}
}
