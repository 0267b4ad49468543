package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// busyTimeout is how long a connection waits for a lock that another process holds on
// the file (PRAGMA busy_timeout) before it fails with SQLITE_BUSY.
const busyTimeout = 5 * time.Second

// Store is a conversation.Store and a conversation.Knowledge in one SQLite database
// file. Every method is safe for concurrent use. Its errors that may go away when
// retried (SQLITE_BUSY, SQLITE_LOCKED: another process held the file longer than the
// busy timeout) satisfy errors.Is(err, conversation.ErrUnavailable).
//
// It is made of one part per job, embedded, which share its connections: the
// conversation.Store is Checkpoints, Inputs and Leases (with Store's Ping and Close);
// Knowledge is the conversation.Knowledge, UsageLedger the conversation.UsageStore,
// Feedback the conversation.FeedbackStore, Outbox the webhook outbox (webhook.Outbox),
// APIQueries what the HTTP API reads besides Load (api.Store), and Secrets the
// installation's secrets.
type Store struct {
	path string
	*pool
	Checkpoints
	Inputs
	Leases
	Knowledge
	Outbox
	UsageLedger
	Feedback
	APIQueries
	Secrets
}

var _ conversation.Store = (*Store)(nil)

// newStore returns a Store of the database file at path whose parts share p.
func newStore(path string, p *pool) *Store {
	return &Store{
		path: path, pool: p, Checkpoints: Checkpoints{p}, Inputs: Inputs{p}, Leases: Leases{p}, Knowledge: Knowledge{p},
		Outbox: Outbox{p}, UsageLedger: UsageLedger{p}, Feedback: Feedback{p}, APIQueries: APIQueries{p}, Secrets: Secrets{p},
	}
}

// prepare prepares every statement of st, or closes those it prepared and fails.
func (st *statements) prepare(ctx context.Context, read, write *sqlx.DB) error {
	for _, p := range []struct {
		db  *sqlx.DB
		st  **sql.Stmt
		sql string
	}{
		{read, &st.loadConversation, loadConversationSQL}, {read, &st.loadMessages, loadMessagesSQL},
		{write, &st.create, createSQL}, {write, &st.update, updateSQL}, {write, &st.insertMessage, insertMessageSQL},
		{write, &st.markDone, markDoneSQL}, {write, &st.leaseHeld, leaseHeldSQL}, {write, &st.insertUsage, insertUsageSQL},
		{write, &st.enqueueInput, enqueueInputSQL}, {write, &st.enqueueLease, enqueueLeaseSQL},
		{write, &st.acquire, acquireSQL}, {write, &st.begin, beginSQL}, {write, &st.release, releaseSQL},
		{write, &st.renew, renewSQL},
		{write, &st.savepoint, savepointSQL}, {write, &st.rollbackTo, rollbackToSQL}, {write, &st.releaseSavepoint, releaseSavepointSQL},
	} {
		var err error
		if *p.st, err = p.db.PrepareContext(ctx, p.sql); err != nil {
			return errors.Join(fmt.Errorf("prepare statements: %w", err), st.close())
		}
	}
	return nil
}

// close closes the statements of st that were prepared.
func (st *statements) close() error {
	var errs []error
	for _, s := range []*sql.Stmt{
		st.loadConversation, st.loadMessages,
		st.create, st.update, st.insertMessage, st.markDone, st.leaseHeld, st.insertUsage,
		st.enqueueInput, st.enqueueLease,
		st.acquire, st.begin, st.release, st.renew,
		st.savepoint, st.rollbackTo, st.releaseSavepoint,
	} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}

// Open opens the SQLite database at path, creating the file and its parent directory
// when missing, and applies pending migrations before it returns. Close the store when
// done.
func Open(ctx context.Context, path string) (*Store, error) {
	path, err := preparePath(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	write, err := openWriter(ctx, path)
	if err != nil {
		return nil, classify(err)
	}
	if _, err := migrate(ctx, write.DB); err != nil {
		write.Close()
		return nil, classify(fmt.Errorf("migrate sqlite %s: %w", path, err))
	}
	read, err := openDB(ctx, path, url.Values{"_query_only": {"1"}})
	if err != nil {
		write.Close()
		return nil, classify(err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	s := newStore(path, newPool(write, read))
	if err := s.st.prepare(ctx, read, write); err != nil {
		return nil, classify(errors.Join(fmt.Errorf("open sqlite %s: %w", path, err), read.Close(), write.Close()))
	}
	return s, nil
}

// Migrate applies pending migrations to the SQLite database at path (creating the file
// and its parent directory when missing) and returns the schema version it is then at.
// It is for `threadwright migrate`; Open migrates too.
func Migrate(ctx context.Context, path string) (version int64, err error) {
	path, err = preparePath(path)
	if err != nil {
		return 0, fmt.Errorf("migrate sqlite: %w", err)
	}
	db, err := openWriter(ctx, path)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	version, err = migrate(ctx, db.DB)
	if err != nil {
		return 0, classify(fmt.Errorf("migrate sqlite %s: %w", path, err))
	}
	return version, nil
}

// Size checkpoints the write-ahead log into the database file
// (PRAGMA wal_checkpoint(TRUNCATE)) and returns the file's size in bytes.
func (s *Store) Size(ctx context.Context) (int64, error) {
	if _, err := s.write.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return 0, classify(fmt.Errorf("checkpoint %s: %w", s.path, err))
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Ping checks that the database file can be read.
func (s *Store) Ping(ctx context.Context) error {
	return classify(s.read.PingContext(ctx))
}

// Close closes the store's statements and connections.
func (s *Store) Close() error {
	return errors.Join(s.st.close(), s.read.Close(), s.write.Close())
}

// preparePath returns path made absolute, after creating its parent directory.
func preparePath(path string) (string, error) {
	if path == "" {
		return "", errors.New("empty database path")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", err
	}
	return path, nil
}

// openWriter opens the single connection that writes. Its transactions begin
// IMMEDIATE, taking the write lock up front, so a transaction never has to upgrade a
// read lock and fail with SQLITE_BUSY halfway.
func openWriter(ctx context.Context, path string) (*sqlx.DB, error) {
	db, err := openDB(ctx, path, url.Values{
		"_txlock":       {"immediate"},
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"},
		"_foreign_keys": {"1"},
	})
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// openDB opens path as a file: URI (so no character of the path is taken for a
// parameter) with the driver's parameters in params.
func openDB(ctx context.Context, path string, params url.Values) (*sqlx.DB, error) {
	params.Set("_busy_timeout", strconv.FormatInt(busyTimeout.Milliseconds(), 10))
	dsn := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: params.Encode()}
	db, err := sqlx.Open("sqlite", dsn.String())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return db, nil
}

// migrate applies the embedded migrations with a goose Provider of its own (no global
// goose state) and returns the schema version.
func migrate(ctx context.Context, db *sql.DB) (int64, error) {
	p, err := sqlstore.Migrations(goose.DialectSQLite3, db, migrations)
	if err != nil {
		return 0, err
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, err
	}
	return p.GetDBVersion(ctx)
}
