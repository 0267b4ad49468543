package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/threadwright/threadwright/store/storetest"
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
	storetest.MigrationsDown(t, goose.DialectSQLite3, db.DB, migrations, func(t *testing.T, table, column string) bool {
		var n int
		if err := db.GetContext(ctx, &n, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, column); err != nil {
			t.Fatal(err)
		}
		return n == 1
	})
}
