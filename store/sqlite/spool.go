package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

//go:embed spool/*.sql
var spoolMigrations embed.FS

// Spool is a conversation.Spool in an SQLite file of its own: the inputs accepted
// while the store is unavailable, in the order they were put, until they are moved
// into the store (docs/architecture.md, "Accepted means stored"). The file runs with
// synchronous FULL, so an input is on disk (the write-ahead log synced) when Put
// returns, and a power failure cannot lose it. Every method is safe for concurrent
// use; they run one at a time, on one connection: a spool is small and used only
// while the store does not answer. Its schema is a goose migration set of its own
// (the directory spool/), applied by OpenSpool.
type Spool struct {
	path string
	db   *sqlx.DB
}

var _ conversation.Spool = (*Spool)(nil)

// OpenSpool opens the spool file at path, creating it and its parent directory when
// missing, and applies its pending migrations. Close it when done.
func OpenSpool(ctx context.Context, path string) (*Spool, error) {
	path, err := preparePath(path)
	if err != nil {
		return nil, fmt.Errorf("open spool: %w", err)
	}
	db, err := openDB(ctx, path, url.Values{
		"_txlock":       {"immediate"},
		"_journal_mode": {"WAL"},
		"_synchronous":  {"FULL"},
	})
	if err != nil {
		return nil, classify(fmt.Errorf("open spool: %w", err))
	}
	db.SetMaxOpenConns(1)
	if err := migrateSpool(ctx, db.DB); err != nil {
		db.Close()
		return nil, classify(fmt.Errorf("migrate spool %s: %w", path, err))
	}
	return &Spool{path: path, db: db}, nil
}

// migrateSpool applies the spool's migrations to db.
func migrateSpool(ctx context.Context, db *sql.DB) error {
	sub, err := fs.Sub(spoolMigrations, "spool")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return err
	}
	_, err = p.Up(ctx)
	return err
}

// Put stores in, as JSON, after the inputs spooled before it, and returns once it is
// synced to disk. It returns false, changing nothing, when an input with the same ID
// is spooled already. Errors: an input without an ID.
func (s *Spool) Put(ctx context.Context, in conversation.Input) (bool, error) {
	if in.ID == "" {
		return false, errors.New("spool input: empty id")
	}
	j, err := json.Marshal(in)
	if err != nil {
		return false, fmt.Errorf("spool input %s: %w", in.ID, err)
	}
	n, err := sqlstore.RowsAffected(s.db.ExecContext(ctx, `
		INSERT INTO spooled (id, input, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		in.ID, string(j), timestamp(sqlstore.Now())))
	if err != nil {
		return false, classify(fmt.Errorf("spool input %s: %w", in.ID, err))
	}
	return n == 1, nil
}

// Peek returns up to limit spooled inputs, oldest first (none when limit <= 0),
// leaving them spooled.
func (s *Spool) Peek(ctx context.Context, limit int) ([]conversation.Input, error) {
	if limit <= 0 {
		return nil, nil
	}
	var rows []string
	if err := s.db.SelectContext(ctx, &rows, `SELECT input FROM spooled ORDER BY n LIMIT ?`, limit); err != nil {
		return nil, classify(fmt.Errorf("peek at spool %s: %w", s.path, err))
	}
	ins := make([]conversation.Input, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal([]byte(r), &ins[i]); err != nil {
			return nil, fmt.Errorf("peek at spool %s: decode input: %w", s.path, err)
		}
	}
	return ins, nil
}

// Get returns spooled input id, and false when it is not spooled.
func (s *Spool) Get(ctx context.Context, id string) (conversation.Input, bool, error) {
	var row string
	err := s.db.GetContext(ctx, &row, `SELECT input FROM spooled WHERE id = ?`, id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return conversation.Input{}, false, nil
	case err != nil:
		return conversation.Input{}, false, classify(fmt.Errorf("read input %s from spool %s: %w", id, s.path, err))
	}
	var in conversation.Input
	if err := json.Unmarshal([]byte(row), &in); err != nil {
		return conversation.Input{}, false, fmt.Errorf("read input %s from spool %s: decode: %w", id, s.path, err)
	}
	return in, true, nil
}

// Remove deletes spooled input id; there is no error when there is none.
func (s *Spool) Remove(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM spooled WHERE id = ?`, id); err != nil {
		return classify(fmt.Errorf("remove input %s from spool: %w", id, err))
	}
	return nil
}

// Len returns how many inputs are spooled.
func (s *Spool) Len(ctx context.Context) (int, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM spooled`); err != nil {
		return 0, classify(fmt.Errorf("count spool %s: %w", s.path, err))
	}
	return n, nil
}

// Close closes the spool's file.
func (s *Spool) Close() error {
	return s.db.Close()
}
