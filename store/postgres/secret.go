package postgres

import (
	"context"

	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Secrets are the installation's secrets (migration 00006), such as the key that
// signs buttons.
type Secrets struct{ *pool }

// Secret returns the installation's secret called name (32 bytes), making it the
// first time any replica asks: every replica gets the same value, also when several
// ask at once (migration 00006). Errors: the database's, wrapped.
func (s *Secrets) Secret(ctx context.Context, name string) ([]byte, error) {
	v, err := sqlstore.Secret(ctx, name,
		func(ctx context.Context, value []byte) error {
			_, err := s.db.ExecContext(ctx, `INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, value)
			return err
		},
		func(ctx context.Context) (v []byte, err error) {
			return v, s.db.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = $1`, name).Scan(&v)
		})
	return v, classify(err)
}
