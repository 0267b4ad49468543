package sqlite

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"
)

// TestMigrationsDown applies every migration, rolls them all back and applies them
// again, so that each Down is known to run, and to undo its Up.
func TestMigrationsDown(t *testing.T) {
	ctx := context.Background()
	db, err := openWriter(ctx, filepath.Join(t.TempDir(), "threadwright.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db.DB, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	claimedUntil := func() bool {
		var n int
		if err := db.GetContext(ctx, &n, `SELECT count(*) FROM pragma_table_info('inputs') WHERE name = 'claimed_until'`); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	if !claimedUntil() {
		t.Error("no inputs.claimed_until after Up")
	}
	if _, err := p.DownTo(ctx, 1); err != nil {
		t.Fatalf("down to 1: %v", err)
	}
	if claimedUntil() {
		t.Error("inputs.claimed_until left after down to 1")
	}
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("down to 0: %v", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("Up again: %v", err)
	}
	if !claimedUntil() {
		t.Error("no inputs.claimed_until after Up again")
	}
}
