package sqlstore

import (
	"database/sql"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// Migrations returns a goose Provider of its own (no global goose state), with opts,
// that applies to db, in dialect, the migrations in the directory migrations/ of fsys
// (where a backend embeds its schema).
func Migrations(dialect goose.Dialect, db *sql.DB, fsys fs.FS, opts ...goose.ProviderOption) (*goose.Provider, error) {
	sub, err := fs.Sub(fsys, "migrations")
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(dialect, db, sub, append(opts, goose.WithDisableGlobalRegistry(true))...)
}
