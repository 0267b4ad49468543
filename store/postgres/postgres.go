package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a conversation.Store and a conversation.Knowledge in a PostgreSQL
// database. Every method is safe for concurrent use. Its errors that may go away when
// retried satisfy errors.Is(err, conversation.ErrUnavailable) (see transient).
//
// It is made of one part per job, embedded, which share its connections: the
// conversation.Store is Checkpoints, Inputs and Leases (with Store's Ping and Close);
// Knowledge is the conversation.Knowledge, UsageLedger the conversation.UsageStore,
// Feedback the conversation.FeedbackStore, Outbox the webhook outbox (webhook.Outbox),
// APIQueries what the HTTP API reads besides Load (api.Store), and Secrets the
// installation's secrets.
type Store struct {
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

// newStore returns a Store whose parts share p.
func newStore(p *pool) *Store {
	return &Store{
		pool: p, Checkpoints: Checkpoints{p}, Inputs: Inputs{p}, Leases: Leases{p}, Knowledge: Knowledge{p},
		Outbox: Outbox{p}, UsageLedger: UsageLedger{p}, Feedback: Feedback{p}, APIQueries: APIQueries{p}, Secrets: Secrets{p},
	}
}

// DefaultMaxConns is the size of the connection pool when Open is given none.
const DefaultMaxConns = 20

// IntakeConns is the number of connections a Store keeps, besides maxConns, for the
// intake's statements (EnqueueBatch, Exists, CountPending, Enqueued): an input is
// stored before its envelope is acked, and the ack must not wait behind running turns.
const IntakeConns = 2

// RenewConns is the number of connections a Store keeps, besides maxConns and
// IntakeConns, for renewing leases (Renew): a renewal that waited behind running
// turns for a connection past the leases' ttl would let other replicas take this
// process's threads. Two: the heartbeat's, and the one a turn confirming its lease
// renews on (conversation/turns), so that a heartbeat stuck on a half-open
// connection does not hold every renewal. A Store opens at most maxConns +
// IntakeConns + RenewConns connections to the server.
const RenewConns = 2

// Open connects to the database that dsn names (a postgres:// URL or a lib/pq
// key=value string; a search_path parameter selects the schema) and applies pending
// migrations before it returns. The store opens at most maxConns connections
// (DefaultMaxConns when maxConns <= 0) for its statements, and keeps as many open when
// idle, plus IntakeConns for the intake and RenewConns for the lease heartbeat: each
// replica's share of the server's max_connections. A call that finds every
// connection busy waits for one (or for its context). Errors never quote dsn, which
// may hold a password; a server that cannot be reached yet gives an error that
// satisfies errors.Is(err, conversation.ErrUnavailable). Close the store when done.
func Open(ctx context.Context, dsn string, maxConns int) (*Store, error) {
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	db, err := connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if _, err := migrate(ctx, db.DB); err != nil {
		db.Close()
		return nil, classify(fmt.Errorf("migrate postgres: %w", err))
	}
	// Bounded after migrating: the migration lock holds a connection of its own while
	// goose migrates on another.
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	s := newStore(&pool{db: db})
	if s.intake, err = connectN(ctx, dsn, IntakeConns); err != nil {
		s.Close()
		return nil, err
	}
	if s.renew, err = connectN(ctx, dsn, RenewConns); err != nil {
		s.Close()
		return nil, err
	}
	for _, p := range []struct {
		on  *sqlx.DB
		st  **sql.Stmt
		sql string
	}{
		{db, &s.loadStmt, loadSQL}, {db, &s.createStmt, createSQL}, {db, &s.updateStmt, updateSQL},
		{db, &s.enqueueStmt, enqueueSQL}, {db, &s.acquireStmt, acquireSQL}, {db, &s.beginStmt, beginSQL},
		{db, &s.releaseStmt, releaseSQL}, {db, &s.nextStmt, nextSQL},
		{db, &s.acquireBeginStmt, acquireBeginSQL}, {db, &s.searchStmt, searchSQL},
		{s.intake, &s.intakeBatchStmt, enqueueBatchSQL}, {s.renew, &s.renewStmt, renewSQL},
	} {
		if *p.st, err = p.on.PrepareContext(ctx, p.sql); err != nil {
			s.Close()
			return nil, classify(fmt.Errorf("postgres: prepare statements: %w", err))
		}
	}
	return s, nil
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
		return 0, classify(fmt.Errorf("migrate postgres: %w", err))
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
		return 0, classify(fmt.Errorf("measure tables: %w", err))
	}
	return n, nil
}

// Ping checks the connection to the database.
func (s *Store) Ping(ctx context.Context) error {
	return classify(s.db.PingContext(ctx))
}

// Close closes the store's connections.
func (s *Store) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{
		s.loadStmt, s.createStmt, s.updateStmt, s.enqueueStmt, s.acquireStmt, s.beginStmt, s.releaseStmt, s.nextStmt, s.renewStmt,
		s.acquireBeginStmt, s.searchStmt, s.intakeBatchStmt,
	} {
		if st != nil {
			errs = append(errs, closeErr(st.Close()))
		}
	}
	for _, db := range []*sqlx.DB{s.intake, s.renew} {
		if db != nil {
			errs = append(errs, closeErr(db.Close()))
		}
	}
	return errors.Join(append(errs, closeErr(s.db.Close()))...)
}

// closeErr returns err, or nil when it says only that a connection was already lost
// (after a database outage, closing its statements writes to a broken socket): the
// server freed what that connection held when it went away.
func closeErr(err error) error {
	var pe *pq.Error
	if err == nil || errors.As(err, &pe) || !transient(err) && !errors.Is(err, syscall.EPIPE) {
		return err
	}
	return nil
}

// connect opens a pool on dsn. Unless dsn says otherwise, it turns on lib/pq's
// binary_parameters, which sends a query with parameters as one message train (Parse,
// Bind, Describe, Execute, Sync) and so in one round trip instead of two (Parse and
// Describe first, to learn the parameter types). The store binds no []byte (the one
// kind of parameter the option changes: it sends them in binary format); JSON goes as
// text (sqlstore.JSONText).
func connect(ctx context.Context, dsn string) (*sqlx.DB, error) {
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		// A *url.Error quotes the whole URL, password included: keep only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("postgres: bad connection string: %w", err)
	}
	if !strings.Contains(dsn, "binary_parameters") {
		cfg.BinaryParameters = true
	}
	c, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db := sqlx.NewDb(sql.OpenDB(c), "postgres")
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, classify(fmt.Errorf("postgres: connect: %w", err))
	}
	return db, nil
}

// connectN opens a pool on dsn as connect does, of n connections at most, kept open
// when idle: the intake's or the heartbeat's own.
func connectN(ctx context.Context, dsn string, n int) (*sqlx.DB, error) {
	db, err := connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
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
	p, err := sqlstore.Migrations(goose.DialectPostgres, db, migrations, goose.WithSessionLocker(locker))
	if err != nil {
		return 0, err
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, err
	}
	return p.GetDBVersion(ctx)
}
