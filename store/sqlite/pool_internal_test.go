package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// queued returns how many turn writes wait behind the running batch.
func (g *group) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// groupStore returns a new Store with a table, group_commit (k TEXT PRIMARY KEY), for
// the tests' writes.
func groupStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "threadwright.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.write.Exec(`CREATE TABLE group_commit (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return s
}

// holdWrites runs a turn write that holds the connection until the returned function
// is called, which waits for it and fails the test if it failed.
func holdWrites(t *testing.T, s *Store) (release func()) {
	t.Helper()
	running, hold := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- s.turnWrite(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
			close(running)
			<-hold
			return nil
		})
	}()
	<-running
	return func() {
		close(hold)
		if err := <-errc; err != nil {
			t.Errorf("the holding write: %v", err)
		}
	}
}

// queue starts turnWrite(ctx, f) and waits until it is queued, as the n-th call
// behind the running batch; its error comes on the channel returned.
func queue(s *Store, n int, ctx context.Context, f func(context.Context, *sql.Tx) error) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- s.turnWrite(ctx, f) }()
	for s.group.queued() < n {
		runtime.Gosched()
	}
	return errc
}

// insert returns a turn write that inserts k, sends its transaction on txs and then
// returns then.
func insert(k string, txs chan<- *sql.Tx, then error) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		txs <- tx
		if _, err := tx.ExecContext(ctx, `INSERT INTO group_commit (k) VALUES (?)`, k); err != nil {
			return err
		}
		return then
	}
}

// rows returns the keys in group_commit, sorted.
func rows(t *testing.T, s *Store) []string {
	t.Helper()
	var got []string
	if err := s.read.Select(&got, `SELECT k FROM group_commit ORDER BY k`); err != nil {
		t.Fatal(err)
	}
	return got
}

// distinct returns how many different transactions txs (closed first) carried, and
// how many writes in all.
func distinct(txs chan *sql.Tx) (transactions, writes int) {
	per := perTransaction(txs)
	for _, n := range per {
		writes += n
	}
	return len(per), writes
}

// perTransaction returns how many writes each transaction that txs (closed first)
// carried ran, in the order they came.
func perTransaction(txs chan *sql.Tx) []int {
	close(txs)
	var per []int
	var last *sql.Tx
	for tx := range txs {
		if tx != last {
			per = append(per, 0)
			last = tx
		}
		per[len(per)-1]++
	}
	return per
}

// TestGroupCommit checks turnWrite's group commit: the writes queued while a batch
// runs share the next batch's transaction; each commits, or not, on its own: a write
// that fails is rolled back (the batch runs again, each write in a savepoint), one
// whose context ended before its turn never runs, and the others in the batch commit.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s := groupStore(t)
	release := holdWrites(t, s)
	errFailed := errors.New("failed after its insert")
	cancelled, cancel := context.WithCancel(ctx)
	txs := make(chan *sql.Tx, 8)
	calls := []struct {
		ctx  context.Context
		f    func(context.Context, *sql.Tx) error
		want error // nil, or what errors.Is finds in the error
	}{
		{ctx, insert("a", txs, nil), nil},
		{ctx, insert("b", txs, errFailed), errFailed},
		{cancelled, insert("c", txs, nil), context.Canceled},
		{ctx, insert("a", txs, nil), nil}, // a unique violation: not errors.Is-able, checked below
		{ctx, insert("d", txs, nil), nil},
	}
	errs := make([]<-chan error, len(calls))
	for i, c := range calls {
		errs[i] = queue(s, i+1, c.ctx, c.f)
	}
	cancel()
	if err := <-errs[2]; !errors.Is(err, context.Canceled) { // returns at once, before its turn
		t.Errorf("call 2, cancelled while queued: err = %v; want context.Canceled", err)
	}
	release()
	for i, c := range calls {
		if i == 2 {
			continue
		}
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
	if per := perTransaction(txs); !slices.Equal(per, []int{2, 4}) {
		t.Errorf("writes per transaction = %v; want [2 4]: a and b together, b fails, then all 4 in savepoints", per)
	}
	if got := rows(t, s); !slices.Equal(got, []string{"a", "d"}) {
		t.Errorf("rows = %v; want [a d]: the failed write and the cancelled one leave nothing", got)
	}
}

// TestGroupCommitWithoutSavepoints checks that a batch whose writes all succeed runs
// them with no savepoint (a savepoint makes SQLite copy each page it changes to a
// sub-journal): each write finds none to roll back to, and all commit together.
func TestGroupCommitWithoutSavepoints(t *testing.T) {
	s := groupStore(t)
	release := holdWrites(t, s)
	const n = 3
	txs := make(chan *sql.Tx, n)
	inSavepoint := make([]bool, n)
	errs := make([]<-chan error, n)
	for i := range n {
		write := insert(fmt.Sprint(i), txs, nil)
		errs[i] = queue(s, i+1, context.Background(), func(ctx context.Context, tx *sql.Tx) error {
			// Undoes nothing in a savepoint just set; fails where there is none.
			_, err := tx.ExecContext(ctx, rollbackToSQL)
			inSavepoint[i] = err == nil
			return write(ctx, tx)
		})
	}
	release()
	for i, errc := range errs {
		if err := <-errc; err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if slices.Contains(inSavepoint, true) {
		t.Errorf("writes in a savepoint: %v; want none", inSavepoint)
	}
	if per := perTransaction(txs); !slices.Equal(per, []int{n}) {
		t.Errorf("writes per transaction = %v; want [%d]", per, n)
	}
	if got := rows(t, s); !slices.Equal(got, []string{"0", "1", "2"}) {
		t.Errorf("rows = %v; want [0 1 2]", got)
	}
}

// TestGroupCommitCancelledWhileQueued checks that a call whose context ends while it
// waits for its batch returns at once, and never runs, while the batch ahead of it
// still holds the connection.
func TestGroupCommitCancelledWhileQueued(t *testing.T) {
	s := groupStore(t)
	release := holdWrites(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan *sql.Tx, 1)
	errc := queue(s, 1, ctx, insert("never", ran, nil))
	cancel()
	err := <-errc // while the batch ahead still holds the connection
	release()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if err := s.turnWrite(context.Background(), insert("after", make(chan *sql.Tx, 1), nil)); err != nil {
		t.Fatalf("a write after the abandoned one: %v", err)
	}
	if _, writes := distinct(ran); writes != 0 {
		t.Error("the abandoned call ran")
	}
	if got := rows(t, s); !slices.Equal(got, []string{"after"}) {
		t.Errorf("rows = %v; want [after]", got)
	}
}

// TestGroupCommitBound checks that a batch holds at most maxGroup calls: the calls
// queued beyond it commit in the next batch.
func TestGroupCommitBound(t *testing.T) {
	s := groupStore(t)
	release := holdWrites(t, s)
	const n = maxGroup + 4
	txs := make(chan *sql.Tx, n)
	errs := make([]<-chan error, n)
	for i := range n {
		errs[i] = queue(s, i+1, context.Background(), insert(fmt.Sprint(i), txs, nil))
	}
	release()
	for i, errc := range errs {
		if err := <-errc; err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if per := perTransaction(txs); !slices.Equal(per, []int{maxGroup, n - maxGroup}) {
		t.Errorf("writes per transaction = %v; want [%d %d]", per, maxGroup, n-maxGroup)
	}
	if got := rows(t, s); len(got) != n {
		t.Errorf("%d rows; want %d", len(got), n)
	}
}

// TestGroupCommitLostTransaction checks that when a call loses the batch's
// transaction (here by ending it; SQLite does so on an I/O error or a full disk), that
// call fails and the others run again in a new transaction and commit.
func TestGroupCommitLostTransaction(t *testing.T) {
	s := groupStore(t)
	release := holdWrites(t, s)
	txs := make(chan *sql.Tx, 8)
	ctx := context.Background()
	a := queue(s, 1, ctx, insert("a", txs, nil))
	lose := queue(s, 2, ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `ROLLBACK`)
		return cmp.Or(err, errors.New("rolled the transaction back"))
	})
	b := queue(s, 3, ctx, insert("b", txs, nil))
	release()
	if err := <-lose; err == nil {
		t.Error("the call that lost the transaction: no error")
	}
	for name, errc := range map[string]<-chan error{"a": a, "b": b} {
		if err := <-errc; err != nil {
			t.Errorf("call %s: %v; want it run again and committed", name, err)
		}
	}
	if got := rows(t, s); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("rows = %v; want [a b]", got)
	}
	if per := perTransaction(txs); !slices.Equal(per, []int{1, 1, 2}) {
		t.Errorf("writes per transaction = %v; want [1 1 2]: a with no savepoints, a again in savepoints, then a and b", per)
	}
	if err := s.turnWrite(ctx, insert("c", make(chan *sql.Tx, 1), nil)); err != nil {
		t.Fatalf("the next write: %v", err)
	}
}

// TestGroupCommitCallerCancelledDuringBatch checks that a call whose context ends
// while its write runs, another call of the batch still waiting, is not interrupted:
// its write commits.
func TestGroupCommitCallerCancelledDuringBatch(t *testing.T) {
	s := groupStore(t)
	release := holdWrites(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	txs := make(chan *sql.Tx, 2)
	first := queue(s, 1, ctx, func(fctx context.Context, tx *sql.Tx) error {
		cancel() // the caller gives up while its write runs
		return insert("a", txs, nil)(fctx, tx)
	})
	second := queue(s, 2, context.Background(), insert("b", txs, nil))
	release()
	if err := <-first; err != nil {
		t.Errorf("the cancelled caller's write: %v; want it committed", err)
	}
	if err := <-second; err != nil {
		t.Errorf("the other write: %v", err)
	}
	if got := rows(t, s); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("rows = %v; want [a b]", got)
	}
}

// TestGroupCommitAlone checks a batch of one (no savepoint): a write that fails
// leaves nothing.
func TestGroupCommitAlone(t *testing.T) {
	s := groupStore(t)
	errFailed := errors.New("failed after its insert")
	txs := make(chan *sql.Tx, 2)
	if err := s.turnWrite(context.Background(), insert("a", txs, errFailed)); !errors.Is(err, errFailed) {
		t.Fatalf("err = %v; want %v", err, errFailed)
	}
	if _, writes := distinct(txs); writes != 1 {
		t.Errorf("the write ran %d times; want once: a batch of one keeps its error", writes)
	}
	if got := rows(t, s); len(got) != 0 {
		t.Errorf("rows = %v; want none", got)
	}
}

// TestGroupCommitAllCallersGone checks that a batch's context ends once every caller's
// has, and that a write it interrupts says why its caller's ended (a deadline).
func TestGroupCommitAllCallersGone(t *testing.T) {
	s := groupStore(t)
	release := holdWrites(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	errc := queue(s, 1, ctx, func(fctx context.Context, tx *sql.Tx) error {
		<-ctx.Done()  // the caller's deadline passes while its write runs
		<-fctx.Done() // its caller's was the batch's only context
		return insert("late", make(chan *sql.Tx, 1), nil)(fctx, tx)
	})
	release()
	if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v; want the write interrupted, and the caller's context.DeadlineExceeded", err)
	}
	if got := rows(t, s); len(got) != 0 {
		t.Errorf("rows = %v; want none", got)
	}
}

// enqueueWaiting starts an intake transaction (EnqueueBatch, a message), whose error
// comes on intake, and returns once it waits for the write connection, which the
// caller, a turn write, holds.
func enqueueWaiting(ctx context.Context, s *Store, intake chan<- error) {
	waits := s.write.Stats().WaitCount
	go func() {
		_, err := s.EnqueueBatch(ctx, []conversation.Input{{ID: "msg:T1:C1:1.000001", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.000001"},
			Kind: conversation.KindUserMessage, Message: &conversation.UserMessage{UserID: "U1", Text: "hello", TS: "1.000001"}}})
		intake <- err
	}()
	for s.write.Stats().WaitCount == waits {
		runtime.Gosched()
	}
}

// TestGroupCommitYieldsToIntake checks that a batch of turn writes yields to an
// intake transaction that comes while it runs: it commits the write that ran, the
// intake's input is stored, and the rest of the batch runs after it (they see it).
func TestGroupCommitYieldsToIntake(t *testing.T) {
	s := groupStore(t)
	ctx := context.Background()
	release := holdWrites(t, s)
	intake := make(chan error, 1)
	inputs := func(tx *sql.Tx) (n int) {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM inputs`).Scan(&n); err != nil {
			t.Error(err)
		}
		return n
	}
	seen := make([]int, 4) // the inputs each turn write saw
	first := queue(s, 1, ctx, func(fctx context.Context, tx *sql.Tx) error {
		seen[0] = inputs(tx)
		enqueueWaiting(ctx, s, intake)
		return nil
	})
	var rest []<-chan error
	for i := 1; i < 4; i++ {
		rest = append(rest, queue(s, i+1, ctx, func(fctx context.Context, tx *sql.Tx) error {
			seen[i] = inputs(tx)
			return nil
		}))
	}
	release()
	for _, errc := range append([]<-chan error{first}, rest...) {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-intake; err != nil {
		t.Fatalf("EnqueueBatch: %v", err)
	}
	if !slices.Equal(seen, []int{0, 1, 1, 1}) {
		t.Errorf("inputs seen by the batch's writes = %v; want [0 1 1 1]: the batch yields to the intake after its first write", seen)
	}
}

// TestGroupCommitPanicAfterYield checks that a write that panics in a batch's later
// transaction (the batch yielded to the intake) fails the writes of that transaction
// only: a write committed before the yield keeps its success. The panic comes out
// on the batch's leader, the first write.
func TestGroupCommitPanicAfterYield(t *testing.T) {
	s := groupStore(t)
	ctx := context.Background()
	release := holdWrites(t, s)
	leader := make(chan any, 1)
	go func() {
		defer func() { leader <- recover() }()
		_ = s.turnWrite(ctx, insert("leader", make(chan *sql.Tx, 1), nil))
	}()
	for s.group.queued() < 1 {
		runtime.Gosched()
	}
	intake := make(chan error, 1)
	committed := queue(s, 2, ctx, func(fctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(fctx, `INSERT INTO group_commit (k) VALUES ('committed')`); err != nil {
			return err
		}
		enqueueWaiting(ctx, s, intake)
		return nil
	})
	panicking := queue(s, 3, ctx, func(context.Context, *sql.Tx) error { panic("a bug in a turn write") })
	release()
	if r := <-leader; r == nil {
		t.Fatal("the panic did not come out on the batch's leader")
	}
	if err := <-committed; err != nil {
		t.Errorf("the write committed before the batch yielded: %v; want success", err)
	}
	if err := <-panicking; err == nil {
		t.Error("the write that panicked reported success")
	}
	if err := <-intake; err != nil {
		t.Fatalf("EnqueueBatch: %v", err)
	}
	if got := rows(t, s); !slices.Equal(got, []string{"committed", "leader"}) {
		t.Errorf("rows %v; want [committed leader]", got)
	}
}
