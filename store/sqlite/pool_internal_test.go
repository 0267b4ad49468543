package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// queued returns how many turn writes wait behind the running batch.
func (g *group) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// TestGroupCommit checks turnWrite's group commit: the writes queued while a batch
// runs share the next batch's transaction; each commits, or not, on its own: a write
// that fails is rolled back (its savepoint), one whose context ended before its turn
// never runs, and the others in the batch commit.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "threadwright.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.write.ExecContext(ctx, `CREATE TABLE group_commit (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}

	// A first write holds the connection until the others are queued.
	running, hold := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.turnWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
			close(running)
			<-hold
			return nil
		})
	}()
	<-running

	errFailed := errors.New("failed after its insert")
	cancelled, cancel := context.WithCancel(ctx)
	txs := make(chan *sql.Tx, 5)
	insert := func(k string, then error) func(context.Context, *sql.Tx) error {
		return func(ctx context.Context, tx *sql.Tx) error {
			txs <- tx
			if _, err := tx.ExecContext(ctx, `INSERT INTO group_commit (k) VALUES (?)`, k); err != nil {
				return err
			}
			return then
		}
	}
	calls := []struct {
		ctx  context.Context
		f    func(context.Context, *sql.Tx) error
		want error // nil, or what errors.Is finds in the error
	}{
		{ctx, insert("a", nil), nil},
		{ctx, insert("b", errFailed), errFailed},
		{cancelled, insert("c", nil), context.Canceled},
		{ctx, insert("a", nil), nil}, // a unique violation: not errors.Is-able, checked below
		{ctx, insert("d", nil), nil},
	}
	errs := make([]chan error, len(calls))
	for i, c := range calls {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- s.turnWrite(c.ctx, c.f) }()
		for s.group.queued() < i+1 { // queued in this order
			runtime.Gosched()
		}
	}
	cancel()
	close(hold)
	if err := <-first; err != nil {
		t.Fatalf("first write: %v", err)
	}
	for i, c := range calls {
		err := <-errs[i]
		switch {
		case i == 3:
			if err == nil {
				t.Errorf("call %d inserted a twice: no error", i)
			}
		case !errors.Is(err, c.want) || (c.want == nil) != (err == nil):
			t.Errorf("call %d: err = %v; want %v", i, err, c.want)
		}
	}
	close(txs)
	var seen []*sql.Tx
	for tx := range txs {
		seen = append(seen, tx)
	}
	if len(seen) != 4 || len(slices.Compact(seen)) != 1 {
		t.Errorf("the 4 writes that ran had %d transactions among %d calls; want 1, shared", len(slices.Compact(seen)), len(seen))
	}
	var got []string
	if err := s.read.SelectContext(ctx, &got, `SELECT k FROM group_commit ORDER BY k`); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"a", "d"}) {
		t.Errorf("rows = %v; want [a d]: the failed write and the cancelled one leave nothing", got)
	}
}
