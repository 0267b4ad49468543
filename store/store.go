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

// Open opens the store that databaseURL names, applying pending migrations: a
// postgres:// or postgresql:// URL opens PostgreSQL (store/postgres); an empty one opens
// the SQLite file FileName in dataDir (store/sqlite), creating the directory when
// missing ("" is the working directory). Any other value is an error that names
// DATABASE_URL. Errors and the log line Open writes (to logger, or slog.Default() when
// nil) never show the URL's password.
func Open(ctx context.Context, databaseURL, dataDir string, logger *slog.Logger) (conversation.Store, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if databaseURL == "" {
		path := filepath.Join(dataDir, FileName)
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, err
		}
		logger.Info("store opened", "backend", "sqlite", "path", path)
		return s, nil
	}
	if err := checkURL(databaseURL); err != nil {
		return nil, err
	}
	s, err := postgres.Open(ctx, databaseURL)
	if err != nil {
		return nil, err
	}
	logger.Info("store opened", "backend", "postgres", "database", redact(databaseURL))
	return s, nil
}

// Migrate applies pending migrations to the store that databaseURL and dataDir name,
// as Open would open it, and returns the schema version it is then at.
func Migrate(ctx context.Context, databaseURL, dataDir string) (int64, error) {
	if databaseURL == "" {
		return sqlite.Migrate(ctx, filepath.Join(dataDir, FileName))
	}
	if err := checkURL(databaseURL); err != nil {
		return 0, err
	}
	return postgres.Migrate(ctx, databaseURL)
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
