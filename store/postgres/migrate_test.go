package postgres

import (
	"context"
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
	storetest.MigrationsDown(t, goose.DialectPostgres, db.DB, migrations, func(t *testing.T, table, column string) bool {
		var ok bool
		if err := db.GetContext(ctx, &ok, `
			SELECT EXISTS (SELECT FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2)`, table, column); err != nil {
			t.Fatal(err)
		}
		return ok
	})
}
