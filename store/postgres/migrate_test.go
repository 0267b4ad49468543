package postgres

import (
	"context"
	"io/fs"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/threadwright/threadwright/store/storetest"
)

// TestMigrationsDown applies every migration, rolls them all back and applies them
// again, so that each Down is known to run, and to undo its Up.
func TestMigrationsDown(t *testing.T) {
	ctx := context.Background()
	db, err := connect(ctx, storetest.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db.DB, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	claimedUntil := func() bool {
		var ok bool
		if err := db.GetContext(ctx, &ok, `
			SELECT EXISTS (SELECT FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = 'inputs' AND column_name = 'claimed_until')`); err != nil {
			t.Fatal(err)
		}
		return ok
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
