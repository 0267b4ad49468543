package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/postgres"
	"github.com/threadwright/threadwright/store/sqlite"
)

// FileName is the name of the SQLite database file in the data directory.
const FileName = "threadwright.db"

// Options says which store Open opens, and how.
type Options struct {
	// DatabaseURL is DATABASE_URL: a postgres:// or postgresql:// URL opens
	// PostgreSQL (store/postgres); "" opens the SQLite file FileName in DataDir
	// (store/sqlite). Any other value is an error that names DATABASE_URL.
	DatabaseURL string
	// DataDir is the directory of the SQLite file, created when missing ("" is the
	// working directory).
	DataDir string
	// MaxConns bounds PostgreSQL's connection pool (postgres.DefaultMaxConns when <= 0);
	// the SQLite store ignores it.
	MaxConns int
	// Logger receives the line Open writes; nil is slog.Default().
	Logger *slog.Logger
}

// Open opens the store that o names, applying pending migrations. Errors and the log
// line Open writes never show the URL's password; a PostgreSQL server that cannot be
// reached yet gives an error that satisfies errors.Is(err,
// conversation.ErrUnavailable).
func Open(ctx context.Context, o Options) (conversation.Store, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if o.DatabaseURL == "" {
		path := filepath.Join(o.DataDir, FileName)
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, err
		}
		logger.Info("store opened", "backend", "sqlite", "path", path)
		return s, nil
	}
	if err := checkURL(o.DatabaseURL); err != nil {
		return nil, err
	}
	s, err := postgres.Open(ctx, o.DatabaseURL, o.MaxConns)
	if err != nil {
		return nil, err
	}
	maxConns := o.MaxConns
	if maxConns <= 0 {
		maxConns = postgres.DefaultMaxConns
	}
	logger.Info("store opened", "backend", "postgres", "database", redact(o.DatabaseURL), "max_conns", maxConns)
	return s, nil
}

// SpoolFileName is the name of the spool's SQLite file in the data directory.
const SpoolFileName = "spool.db"

// OpenSpool opens the spool that keeps inputs on local disk while the store o names
// is unreachable (docs/architecture.md, "Accepted means stored"): the SQLite file
// SpoolFileName in o.DataDir, for PostgreSQL. The embedded SQLite store is local disk
// itself and needs none: OpenSpool returns nil then.
func OpenSpool(ctx context.Context, o Options) (conversation.Spool, error) {
	if o.DatabaseURL == "" {
		return nil, nil
	}
	path := filepath.Join(o.DataDir, SpoolFileName)
	sp, err := sqlite.OpenSpool(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("DATA_DIR: %w", err)
	}
	if o.Logger != nil {
		o.Logger.Info("spool opened", "path", path)
	}
	return sp, nil
}

// Migrate applies pending migrations to the store that o names (o.MaxConns and
// o.Logger unused), as Open would open it, and returns the schema version it is then
// at.
func Migrate(ctx context.Context, o Options) (int64, error) {
	if o.DatabaseURL == "" {
		return sqlite.Migrate(ctx, filepath.Join(o.DataDir, FileName))
	}
	if err := checkURL(o.DatabaseURL); err != nil {
		return 0, err
	}
	return postgres.Migrate(ctx, o.DatabaseURL)
}

// checkURL accepts a postgres:// or postgresql:// URL. Its error quotes no more than a
// well-formed scheme: the rest may hold a password.
func checkURL(databaseURL string) error {
	const want = "DATABASE_URL: want a postgres:// or postgresql:// URL " +
		"(postgres://user:password@host:5432/dbname), or unset for the embedded SQLite file"
	scheme, _, ok := strings.Cut(databaseURL, "://")
	switch {
	case ok && (scheme == "postgres" || scheme == "postgresql"):
		return nil
	case ok && schemeRE.MatchString(scheme):
		return fmt.Errorf("%s; got a %s:// URL", want, scheme)
	default:
		return errors.New(want)
	}
}

// schemeRE matches a URL scheme (RFC 3986, section 3.1).
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// redact returns u with its password, if any, replaced by "xxxxx".
func redact(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return parsed.Redacted()
}
