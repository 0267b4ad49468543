package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/sqlite"
	"github.com/threadwright/threadwright/store/storetest"
)

// mustOpen opens a store in a new file, in a directory Open has to create, and closes
// it when the test ends.
func mustOpen(tb testing.TB) *sqlite.Store {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "data", "threadwright.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) conversation.Store { return mustOpen(t) })
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "threadwright.db")
	v, err := sqlite.Migrate(ctx, path)
	if err != nil || v < 1 {
		t.Fatalf("Migrate = %d, %v; want a version, nil", v, err)
	}
	// Migrating again, or opening, finds nothing to do.
	if v2, err := sqlite.Migrate(ctx, path); v2 != v || err != nil {
		t.Errorf("second Migrate = %d, %v; want %d, nil", v2, err, v)
	}
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx); err != nil {
		t.Error(err)
	}
}

// TestDeleteIdleCascades checks in the file itself that DeleteIdle leaves no messages
// behind (foreign keys are off in SQLite unless each connection turns them on).
func TestDeleteIdleCascades(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "threadwright.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	msgs := []conversation.Message{{Role: conversation.RoleUser, Text: "a"}, {Role: conversation.RoleAssistant, Text: "b"}}
	if _, err := s.Save(ctx, conversation.Turn{Key: key, Append: msgs}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteIdle(ctx, time.Now().Add(time.Hour)); n != 1 || err != nil {
		t.Fatalf("DeleteIdle = %d, %v; want 1, nil", n, err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM messages").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d messages left after DeleteIdle (%v); want 0", n, err)
	}
}

// TestConcurrentWriters checks that many writers on different conversations all
// succeed: the single write connection makes them queue, never fail with SQLITE_BUSY.
func TestConcurrentWriters(t *testing.T) {
	s := mustOpen(t)
	ctx := context.Background()
	const writers, turns = 16, 20
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: fmt.Sprintf("1.%d", w)}
			var version int64
			for i := range turns {
				in := conversation.Input{ID: fmt.Sprintf("%d/%d", w, i), Key: key, Kind: conversation.KindUserMessage}
				if _, err := s.Enqueue(ctx, in); err != nil {
					errs <- err
					return
				}
				saved, err := s.Save(ctx, conversation.Turn{Key: key, Version: version, InputID: in.ID,
					Append: []conversation.Message{{Role: conversation.RoleUser, Text: "hi"}}})
				if err != nil {
					errs <- err
					return
				}
				version = saved.Version
			}
			errs <- nil
		}()
	}
	var all error
	for range writers {
		all = errors.Join(all, <-errs)
	}
	if all != nil {
		t.Fatal(all)
	}
}

func BenchmarkSaveLoad(b *testing.B) {
	storetest.BenchSaveLoad(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

func BenchmarkComparison(b *testing.B) {
	storetest.BenchComparison(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

// TestClaimAcrossStores races claims on one input from several stores on one file, as
// processes sharing it would: each has a write connection of its own, and SQLite's
// file lock lets one UPDATE at a time through, so exactly one claim wins.
func TestClaimAcrossStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "threadwright.db")
	const processes, rounds = 4, 5
	stores := make([]*sqlite.Store, processes)
	for i := range stores {
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
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
		results := make(chan result, processes*2)
		for _, s := range stores {
			for range 2 { // two workers a process
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
