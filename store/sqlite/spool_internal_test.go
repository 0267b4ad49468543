package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

// TestSpoolSynchronous checks that the spool's connection syncs every commit (PRAGMA
// synchronous FULL, 2) in write-ahead-log mode.
func TestSpoolSynchronous(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSpool(ctx, filepath.Join(t.TempDir(), "spool.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var sync int
	var mode string
	if err := s.db.QueryRowContext(ctx, `SELECT synchronous, journal_mode FROM pragma_synchronous, pragma_journal_mode`).Scan(&sync, &mode); err != nil {
		t.Fatal(err)
	}
	if sync != 2 || mode != "wal" {
		t.Errorf("synchronous = %d, journal_mode = %q; want 2 (FULL), wal", sync, mode)
	}
}
