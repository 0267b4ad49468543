package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/postgres"
	"github.com/threadwright/threadwright/store/storetest"
)

// mustOpen opens a store in a schema of its own and closes it when the test ends.
func mustOpen(tb testing.TB) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), storetest.PostgresDSN(tb))
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
	dsn := storetest.PostgresDSN(t)
	v, err := postgres.Migrate(ctx, dsn)
	if err != nil || v < 1 {
		t.Fatalf("Migrate = %d, %v; want a version, nil", v, err)
	}
	if v2, err := postgres.Migrate(ctx, dsn); v2 != v || err != nil {
		t.Errorf("second Migrate = %d, %v; want %d, nil", v2, err, v)
	}
}

// TestConcurrentOpen opens several stores on one new schema at once, as replicas
// starting together do: the migration lock lets one migrate and the others find the
// schema up to date.
func TestConcurrentOpen(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() {
			s, err := postgres.Open(context.Background(), dsn)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestDeleteIdleCascades checks in the database itself that DeleteIdle leaves no
// messages behind.
func TestDeleteIdleCascades(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	s, err := postgres.Open(ctx, dsn)
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
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM messages").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d messages left after DeleteIdle (%v); want 0", n, err)
	}
}

func BenchmarkSaveLoad(b *testing.B) {
	storetest.BenchSaveLoad(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

func BenchmarkComparison(b *testing.B) {
	storetest.BenchComparison(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}
