package sqlite

import (
	"context"
	"time"

	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Secrets are the installation's secrets (migration 00006), such as the key that
// signs buttons.
type Secrets struct{ *pool }

// Secret returns the installation's secret called name (32 bytes), making it the
// first time it is asked for: every process using the file gets the same value
// (migration 00006). Errors: the database's, wrapped.
func (s *Secrets) Secret(ctx context.Context, name string) ([]byte, error) {
	v, err := sqlstore.Secret(ctx, name,
		func(ctx context.Context, value []byte) error {
			_, err := s.write.ExecContext(ctx, `INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
				name, value, time.Now().UnixMicro())
			return err
		},
		func(ctx context.Context) (v []byte, err error) {
			return v, s.write.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = ?`, name).Scan(&v)
		})
	return v, classify(err)
}
