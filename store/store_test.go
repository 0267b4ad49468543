package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store"
)

func TestOpenSQLite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var logs bytes.Buffer
	s, err := store.Open(context.Background(), store.Options{DataDir: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(filepath.Join(dir, store.FileName)); err != nil {
		t.Errorf("database file: %v", err)
	}
	if !strings.Contains(logs.String(), "backend=sqlite") {
		t.Errorf("log = %q; want the backend", logs.String())
	}
	if _, ok := s.(conversation.Knowledge); !ok {
		t.Errorf("the store, a %T, is not a conversation.Knowledge (threadwright ingest needs one)", s)
	}
	if v, err := store.Migrate(context.Background(), store.Options{DataDir: dir}); v < 1 || err != nil {
		t.Errorf("Migrate = %d, %v; want a version, nil", v, err)
	}
}

func TestOpenBadURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"mysql://root:hunter2@localhost/db", `got a mysql:// URL`},
		{"root:hunter2@localhost/db", "DATABASE_URL: want a postgres://"},
		{"postgres://u:hunter2@localhost:badport/db", "bad connection string"},
	} {
		_, err := store.Open(context.Background(), store.Options{DatabaseURL: tc.url, DataDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q): %v; want an error containing %q", tc.url, err, tc.want)
			continue
		}
		if strings.Contains(tc.url, ":hunter2@") && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q): error %q shows the password", tc.url, err)
		}
		if !strings.Contains(err.Error(), "DATABASE_URL") && !strings.HasPrefix(tc.url, "postgres") {
			t.Errorf("Open(%q): error %q does not name DATABASE_URL", tc.url, err)
		}
	}
}

func TestOpenPostgres(t *testing.T) {
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		t.Skip("TEST_DATABASE_URL is not set; set it to a postgres:// URL to open a Postgres store")
	}
	ctx := context.Background()
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := fmt.Sprintf("tw_test_%016x", rand.Uint64())
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	defer admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")

	// A password in the URL (trust authentication ignores it) must not reach the log.
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "hunter2")
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()

	var logs bytes.Buffer
	s, err := store.Open(ctx, store.Options{DatabaseURL: u.String(), DataDir: t.TempDir(), MaxConns: 4, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(logs.String(), "backend=postgres") || strings.Contains(logs.String(), "hunter2") {
		t.Errorf("log = %q; want the backend and no password", logs.String())
	}
	if _, ok := s.(conversation.Knowledge); !ok {
		t.Errorf("the store, a %T, is not a conversation.Knowledge (threadwright ingest needs one)", s)
	}
	if v, err := store.Migrate(ctx, store.Options{DatabaseURL: u.String()}); v < 1 || err != nil {
		t.Errorf("Migrate = %d, %v; want a version, nil", v, err)
	}
}
