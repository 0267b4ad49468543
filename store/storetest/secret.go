package storetest

import (
	"bytes"
	"context"
	"testing"

	"golang.org/x/sync/errgroup"
)

// Secrets is what RunSecrets tests: a store's Secret.
type Secrets interface {
	// Secret returns the installation's secret called name, made once.
	Secret(ctx context.Context, name string) ([]byte, error)
}

// RunSecrets runs the conformance suite of Secret against the stores open returns:
// two stores on one new, empty database, as two replicas use it. A secret is 32
// bytes, the same on every call and for every caller racing to make it, on either
// store, and secrets of different names differ.
func RunSecrets(t *testing.T, open func(t *testing.T) (Secrets, Secrets)) {
	t.Run("SecretStable", func(t *testing.T) {
		t.Parallel()
		s, replica := open(t)
		ctx := context.Background()
		a, err := s.Secret(ctx, "action-signing")
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != 32 {
			t.Fatalf("secret is %d bytes; want 32", len(a))
		}
		if bytes.Equal(a, make([]byte, 32)) {
			t.Fatal("secret is all zero")
		}
		again, err := s.Secret(ctx, "action-signing")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, again) {
			t.Fatal("second Secret returned another value")
		}
		fromReplica, err := replica.Secret(ctx, "action-signing")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, fromReplica) {
			t.Fatal("the other replica's Secret returned another value")
		}
		other, err := s.Secret(ctx, "other")
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(a, other) {
			t.Fatal("secrets of two names are equal")
		}
	})
	t.Run("SecretConcurrent", func(t *testing.T) {
		t.Parallel()
		a, b := open(t)
		stores := []Secrets{a, b}
		const callers = 8
		got := make([][]byte, callers)
		var g errgroup.Group
		for i := range callers {
			g.Go(func() error {
				v, err := stores[i%len(stores)].Secret(context.Background(), "race")
				got[i] = v
				return err
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < callers; i++ {
			if !bytes.Equal(got[i], got[0]) {
				t.Fatalf("caller %d got another secret than caller 0", i)
			}
		}
	})
}
