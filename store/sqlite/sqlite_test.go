package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/sqlite"
	"github.com/threadwright/threadwright/store/storetest"
)

// mustOpen opens a store in a new file, in a directory Open has to create, and closes
// it when the test ends.
func mustOpen(tb testing.TB) *sqlite.Store {
	tb.Helper()
	return mustOpenPath(tb, filepath.Join(tb.TempDir(), "data", "threadwright.db"))
}

// mustOpenPath opens a store on the file at path and closes it when the test ends.
func mustOpenPath(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), path)
	return storetest.Opened(tb, s, err)
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) conversation.Store { return mustOpen(t) })
}

func TestKnowledge(t *testing.T) {
	storetest.RunKnowledge(t, func(t *testing.T) conversation.Knowledge { return mustOpen(t) })
}

func BenchmarkKnowledgeSearch(b *testing.B) {
	storetest.BenchKnowledgeSearch(b, func(b *testing.B) conversation.Knowledge { return mustOpen(b) })
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
	path := filepath.Join(t.TempDir(), "threadwright.db")
	s := mustOpenPath(t, path)
	db, err := sql.Open("sqlite", path)
	storetest.DeleteIdleCascades(t, s, storetest.Opened(t, db, err))
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

func BenchmarkLeasedTurn(b *testing.B) {
	storetest.BenchLeasedTurn(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

func BenchmarkConcurrentTurns(b *testing.B) {
	storetest.BenchConcurrentTurns(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

// BenchmarkCountPending measures Submit's count of pending inputs (see
// storetest.BenchCountPending).
func BenchmarkCountPending(b *testing.B) {
	storetest.BenchCountPending(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

func BenchmarkComparison(b *testing.B) {
	storetest.BenchComparison(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

// TestReplicas runs the tests of several stores on one file, as processes sharing it
// would: each has a write connection of its own, and SQLite's file lock lets one
// write at a time through, so of concurrent Acquires of one thread exactly one wins,
// and a Release never strands an input enqueued by another process.
func TestReplicas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "threadwright.db")
	storetest.RunReplicas(t, func(t *testing.T) conversation.Store { return mustOpenPath(t, path) })
}

// TestKnowledgeIndexInSync checks in the file itself that chunks_fts, the external-content
// FTS5 index, follows chunks through replaces and deletes (ON DELETE CASCADE
// included): FTS5's integrity-check, with rank 1, compares the index with the content
// table.
func TestKnowledgeIndexInSync(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "threadwright.db")
	s := mustOpenPath(t, path)
	db, err := sql.Open("sqlite", path)
	storetest.Opened(t, db, err)
	check := func() error {
		_, err := db.ExecContext(ctx, `INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`)
		return err
	}

	chunks := []conversation.Chunk{{Heading: "A", Text: "alpha beta"}, {Heading: "B", Text: "gamma"}}
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"ingest", func() error { _, err := s.ReplaceSource(ctx, "a.md", "h1", conversation.Origin{}, chunks); return err }},
		{"ingest another", func() error { _, err := s.ReplaceSource(ctx, "b.md", "h1", conversation.Origin{}, chunks); return err }},
		{"replace", func() error {
			_, err := s.ReplaceSource(ctx, "a.md", "h2", conversation.Origin{}, chunks[1:])
			return err
		}},
		{"delete", func() error { return s.DeleteSource(ctx, "b.md") }},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if err := check(); err != nil {
			t.Errorf("after %s: integrity-check: %v", step.name, err)
		}
	}
	// The check does see an index out of step with its content.
	if _, err := db.ExecContext(ctx, `INSERT INTO chunks_fts (rowid, heading, text) VALUES (999, 'stray', 'row')`); err != nil {
		t.Fatal(err)
	}
	if err := check(); err == nil {
		t.Error("integrity-check passed with a row in the index that chunks does not have")
	}
}

func TestSecrets(t *testing.T) {
	storetest.RunSecrets(t, func(t *testing.T) (storetest.Secrets, storetest.Secrets) {
		path := filepath.Join(t.TempDir(), "threadwright.db")
		return mustOpenPath(t, path), mustOpenPath(t, path)
	})
}

func TestFeedback(t *testing.T) {
	storetest.RunFeedback(t, func(t *testing.T) storetest.FeedbackStore { return mustOpen(t) })
}

func TestUsage(t *testing.T) {
	storetest.RunUsage(t, func(t *testing.T) storetest.UsageStore { return mustOpen(t) })
}

func TestWebhooks(t *testing.T) {
	storetest.RunWebhooks(t, func(t *testing.T) storetest.WebhookStore { return mustOpen(t) })
}

// TestUndecodable: an input whose payload no longer decodes (here corrupt JSON) is
// begun and named, so that its holder fails it and goes on (storetest.Undecodable).
func TestUndecodable(t *testing.T) {
	storetest.Undecodable(t, func(t *testing.T) (conversation.Store, func(t *testing.T, id string)) {
		path := filepath.Join(t.TempDir(), "threadwright.db")
		s := mustOpenPath(t, path)
		db, err := sql.Open("sqlite", path)
		storetest.Opened(t, db, err)
		return s, func(t *testing.T, id string) {
			if _, err := db.Exec(`UPDATE inputs SET payload = '{"text": ' WHERE id = ?`, id); err != nil {
				t.Fatal(err)
			}
		}
	})
}
