package sqlstore

import (
	"context"
	"crypto/rand"
	"fmt"
)

// SecretBytes is the size of a secret Secret makes: 32 random bytes, the key size of
// HMAC-SHA256.
const SecretBytes = 32

// Secret implements the stores' Secret: it makes a random secret, has insert store it
// under name unless a row of that name exists (INSERT … ON CONFLICT DO NOTHING), and
// returns what read then finds, so that every replica, the ones racing to make it
// included, gets the value of the one row that won.
func Secret(ctx context.Context, name string, insert func(ctx context.Context, value []byte) error, read func(ctx context.Context) ([]byte, error)) ([]byte, error) {
	value := make([]byte, SecretBytes)
	if _, err := rand.Read(value); err != nil {
		return nil, fmt.Errorf("make secret %s: %w", name, err)
	}
	if err := insert(ctx, value); err != nil {
		return nil, fmt.Errorf("store secret %s: %w", name, err)
	}
	got, err := read(ctx)
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	return got, nil
}
