package sqlite

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// TestTransient checks the classification of SQLite's errors on real ones: a write
// that finds the file locked by another connection past the busy timeout (here none)
// fails with SQLITE_BUSY, which may go away when retried; a constraint violation does
// not.
func TestTransient(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "threadwright.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	holder, err := openDB(ctx, path, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM inputs`); err != nil { // takes the write lock
		t.Fatal(err)
	}

	impatient, err := openDB(ctx, path, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	impatient.SetMaxOpenConns(1) // the connection whose busy timeout is set
	if _, err := impatient.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
		t.Fatal(err)
	}
	_, busy := impatient.ExecContext(ctx, `DELETE FROM inputs`)
	if busy == nil || !transient(busy) {
		t.Fatalf("write to a locked file: %v; want SQLITE_BUSY, transient", busy)
	}
	if err := classify(fmt.Errorf("enqueue input x: %w", busy)); !errors.Is(err, conversation.ErrUnavailable) {
		t.Errorf("classify(%v): not ErrUnavailable", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	_, unique := impatient.ExecContext(ctx, `INSERT INTO sources (source, hash, chunks, ingested_at, created_at) VALUES ('a', 'h', 0, 0, 0), ('a', 'h', 0, 0, 0)`)
	if unique == nil || transient(unique) || errors.Is(classify(unique), conversation.ErrUnavailable) {
		t.Errorf("constraint violation: %v; want an error that is not transient", unique)
	}
	if transient(context.Canceled) || transient(errors.New("boom")) {
		t.Error("transient of an error that is not SQLite's = true")
	}
}
