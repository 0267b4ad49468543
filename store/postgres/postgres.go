package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/url"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/threadwright/threadwright/conversation"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a conversation.Store in a PostgreSQL database. Every method is safe for
// concurrent use.
type Store struct {
	db *sqlx.DB
}

var _ conversation.Store = (*Store)(nil)

// Open connects to the database that dsn names (a postgres:// URL or a lib/pq
// key=value string; a search_path parameter selects the schema) and applies pending
// migrations before it returns. Errors never quote dsn, which may hold a password.
// Close the store when done.
func Open(ctx context.Context, dsn string) (*Store, error) {
	db, err := connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if _, err := migrate(ctx, db.DB); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate postgres: %w", err)
	}
	return &Store{db: db}, nil
}

// Migrate applies pending migrations to the database that dsn names and returns the
// schema version it is then at. It is for `threadwright migrate`; Open migrates too.
func Migrate(ctx context.Context, dsn string) (version int64, err error) {
	db, err := connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	if version, err = migrate(ctx, db.DB); err != nil {
		return 0, fmt.Errorf("migrate postgres: %w", err)
	}
	return version, nil
}

// Size returns the bytes on disk of the tables in the store's schema, with their
// indexes and TOAST data (the sum of pg_total_relation_size).
func (s *Store) Size(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.GetContext(ctx, &n, `
		SELECT coalesce(sum(pg_total_relation_size(oid)), 0)::bigint FROM pg_class
		WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'`)
	if err != nil {
		return 0, fmt.Errorf("measure tables: %w", err)
	}
	return n, nil
}

// Ping checks the connection to the database.
func (s *Store) Ping(ctx context.Context) error {
	return s.db.PingContext(ctx)
}

// Close closes the store's connections.
func (s *Store) Close() error {
	return s.db.Close()
}

func connect(ctx context.Context, dsn string) (*sqlx.DB, error) {
	c, err := pq.NewConnector(dsn)
	if err != nil {
		// A *url.Error quotes the whole URL, password included: keep only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("postgres: bad connection string: %w", err)
	}
	db := sqlx.NewDb(sql.OpenDB(c), "postgres")
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	return db, nil
}

// migrate applies the embedded migrations with a goose Provider of its own (no global
// goose state) and returns the schema version. Processes migrating the same schema at
// once take turns through a session advisory lock whose id is derived from the schema's
// name, so migrations of different schemas do not wait for each other.
func migrate(ctx context.Context, db *sql.DB) (int64, error) {
	var schema sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return 0, err
	}
	if !schema.Valid {
		return 0, errors.New("no current schema: no schema of the search_path exists")
	}
	h := fnv.New64a()
	h.Write([]byte("threadwright/" + schema.String))
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(int64(h.Sum64())),
		lock.WithLockTimeout(1, 300), // retry every second, for 5 minutes
	)
	if err != nil {
		return 0, err
	}
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return 0, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return 0, err
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, err
	}
	return p.GetDBVersion(ctx)
}
