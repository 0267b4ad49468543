package turns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/postgres"
	"github.com/threadwright/threadwright/store/sqlite"
	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/logtest"
)

// lostReplyStore loses the reply of the first store call that freed the lease (a
// releasing Save, or a Next), or with kept of the first Save that kept it, as a
// connection that drops after the commit does: it runs hook (an input of the same
// thread submitted in this process meanwhile) and reports the store unavailable, so
// that the call is retried and finds the lease gone (or, kept, the conversation at a
// newer version).
type lostReplyStore struct {
	conversation.Store
	mu   sync.Mutex
	done bool
	kept bool
	hook func()
}

// lose reports whether this call's reply is the one lost.
func (s *lostReplyStore) lose(freed bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := !s.done && freed
	s.done = s.done || first
	return first
}

func (s *lostReplyStore) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	saved, err := s.Store.Save(ctx, turn)
	if err == nil && s.lose(saved.Released != s.kept) {
		s.hook()
		return conversation.Saved{}, fmt.Errorf("%w: reply lost after the commit", conversation.ErrUnavailable)
	}
	return saved, err
}

func (s *lostReplyStore) Next(ctx context.Context, l conversation.Lease, call int64) (*conversation.Input, bool, error) {
	in, released, err := s.Store.Next(ctx, l, call)
	if err == nil && s.lose(released) {
		s.hook()
		return nil, false, fmt.Errorf("%w: reply lost after the commit", conversation.ErrUnavailable)
	}
	return in, released, err
}

// dropper ends each turn without a save (Run.Drop), so that its worker frees the
// lease with Next.
type dropper struct{ m *replies }

func (d dropper) Handle(ctx context.Context, r *Run) error {
	defer func() { _, _ = d.m.PostReply(ctx, r.In.Key, "", conversation.Tag{}) }()
	return r.Drop(ctx, conversation.InputDone)
}

// outcomes records the outcome of each turn (Metrics.TurnEnded).
type outcomes struct {
	noMetrics
	mu  sync.Mutex
	got []string
}

func (o *outcomes) TurnEnded(_, outcome string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, outcome)
}

func (o *outcomes) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return fmt.Sprint(o.got)
}

// submitting submits m2 (submit) during m1's turn, before its save, which then
// keeps the lease (an input is pending), and answers each turn.
type submitting struct {
	answerer
	submit func()
}

func (h submitting) Handle(ctx context.Context, r *Run) error {
	if r.In.ID == "m1" {
		h.submit()
	}
	return h.answerer.Handle(ctx, r)
}

// TestLostReplyOfTheReleaseStrandsNothing: a store call that freed the thread's lease
// and whose reply was lost is retried and finds the lease gone (ErrLeaseLost); an
// input of the thread submitted here meanwhile is then run at once by taking the
// thread again, not left for the sweep (every LEASE_TTL/5, two minutes here). The
// input whose save it was had been answered and saved: its turn is a finished one
// (answered, logged as finished, counted off the limits' pending inputs once), not
// one abandoned for a lost lease.
func TestLostReplyOfTheReleaseStrandsNothing(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler func(*replies) Handler
	}{
		{"Save", func(*replies) Handler { return answerer{} }},
		{"Next", func(m *replies) Handler { return dropper{m} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			testLostReply(t, false, func(m *replies, _ func()) Handler { return c.handler(m) })
		})
	}
}

// TestLostReplyOfASaveThatKeptTheLease: a turn's last save that kept the lease (an
// input was pending) and whose reply was lost is retried and finds the conversation
// at a newer version (ErrConflict): its turn is a finished one, not one that failed
// and leaves its input pending, and the next input runs.
func TestLostReplyOfASaveThatKeptTheLease(t *testing.T) {
	testLostReply(t, true, func(_ *replies, submit func()) Handler { return submitting{submit: submit} })
}

// testLostReply runs m1, then m2, submitted by the lost reply's hook (or, kept, by
// the handler's submit), on a lostReplyStore, and checks that both turns were
// answered, none logged as failed or abandoned, and each input counted finished once.
func testLostReply(t *testing.T, kept bool, handler func(m *replies, submit func()) Handler) {
	ctx := context.Background()
	db := openSQLite(t)
	st := &lostReplyStore{Store: db, kept: kept}
	m := &replies{want: 2, done: make(chan struct{})}
	logs, met := &logtest.Buffer{}, &outcomes{}
	var rt *Runtime
	submit := func() {
		if _, err := rt.Submit(ctx, mention("m2", 1)); err != nil {
			t.Error(err)
		}
	}
	rt = New(Config{Store: st, Messenger: m, Logger: slog.New(slog.NewTextHandler(logs, nil)), Metrics: met, LeaseTTL: 10 * time.Minute}, handler(m, submit))
	var (
		mu       sync.Mutex
		finished = map[string]int{}
	)
	count := rt.sched.finished
	rt.sched.finished = func(in conversation.Input) {
		mu.Lock()
		finished[in.ID]++
		mu.Unlock()
		count(in)
	}
	st.hook = func() {
		if !kept {
			submit()
		}
	}
	startRuntime(t, ctx, rt)
	if _, err := rt.Submit(ctx, mention("m1", 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.done:
	case <-time.After(time.Minute): // the sweep would take it after two
		pending, _ := db.Pending(ctx, mention("", 1).Key, 10)
		t.Fatalf("the input submitted while the lease was freed is not run: %d input(s) pending", len(pending))
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := rt.Wait(wctx); err != nil {
		t.Fatalf("the thread is still held after both turns: %v", err)
	}
	if got := met.String(); got != "[answered answered]" {
		t.Errorf("turn outcomes %s; want both answered", got)
	}
	if l := logs.String(); strings.Contains(l, "lease was lost") || strings.Contains(l, "lease lost") || strings.Contains(l, "level=ERROR") {
		t.Errorf("a turn whose input was saved is logged as one that failed or whose lease was lost:\n%s", l)
	}
	st.mu.Lock()
	if !st.done {
		t.Error("no reply was lost")
	}
	st.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if finished["m1"] != 1 || finished["m2"] != 1 || len(finished) != 2 {
		t.Errorf("inputs counted finished: %v; want m1 and m2 once each", finished)
	}
	rt.intake.limits.mu.Lock()
	defer rt.intake.limits.mu.Unlock()
	if n := rt.intake.limits.pending[mention("", 1).Key]; n != 0 {
		t.Errorf("the limits count %d input(s) of the thread pending; want 0", n)
	}
}

// lostBeginStore loses the answer of the first AcquireBegin that took a lease: it
// commits, but the caller sees the connection drop (ErrUnavailable) and tries again.
type lostBeginStore struct {
	conversation.Store
	once sync.Once
}

func (s *lostBeginStore) AcquireBegin(ctx context.Context, k conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, *conversation.Input, bool, error) {
	l, prev, in, ok, err := s.Store.AcquireBegin(ctx, k, owner, ttl)
	lost := false
	s.once.Do(func() { lost = err == nil && ok })
	if lost {
		return conversation.Lease{}, "", nil, false, fmt.Errorf("%w: reply lost after the commit", conversation.ErrUnavailable)
	}
	return l, prev, in, ok, err
}

// attemptsSeen sends the Attempts of each turn's input on seen, then answers it.
type attemptsSeen struct {
	answerer
	seen chan<- int
}

func (a attemptsSeen) Handle(ctx context.Context, r *Run) error {
	a.seen <- r.In.Attempts
	return a.answerer.Handle(ctx, r)
}

// firstRun is a Messenger that finds nothing an earlier run of an input posted (a
// turn whose input counts more than one attempt asks), and counts the asks.
type firstRun struct {
	*replies
	asked *atomic.Int32
}

func (m firstRun) Posted(context.Context, conversation.Key, string, string) ([]conversation.Posted, error) {
	m.asked.Add(1)
	return nil, nil
}

// TestLostAnswerOfAcquireBeginCountsOneAttempt: an AcquireBegin whose answer was lost
// is tried again, takes this process's own lease again and begins the same input: its
// turn runs once, as the input's first attempt, not its second, and reads what an
// earlier run posted (the lost call may have taken the lease from a holder that ran
// the input: Postgres skips a locked input).
func TestLostAnswerOfAcquireBeginCountsOneAttempt(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	seen := make(chan int, 4)
	asked := &atomic.Int32{}
	rt := New(Config{Store: &lostBeginStore{Store: db}, Messenger: firstRun{&replies{want: -1}, asked}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		attemptsSeen{seen: seen})
	startRuntime(t, ctx, rt)
	if _, err := rt.Submit(ctx, mention("m1", 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-seen:
		if n != 1 {
			t.Errorf("the turn runs as attempt %d; want 1 (the lost AcquireBegin and its retry are one attempt)", n)
		}
		// The lease was this process's own, taken again: whoever held it before may
		// have run the input and posted, so the turn reads what was posted.
		if asked.Load() != 1 {
			t.Errorf("the turn asked %d times what an earlier run posted; want once", asked.Load())
		}
	case <-time.After(time.Minute):
		t.Fatal("the input's turn did not run")
	}
}

// lostNextStore loses the answer of the first Next that began an input: it commits,
// but the caller sees the connection drop (ErrUnavailable) and calls again.
type lostNextStore struct {
	conversation.Store
	once sync.Once
	lost atomic.Bool
}

func (s *lostNextStore) Next(ctx context.Context, l conversation.Lease, call int64) (*conversation.Input, bool, error) {
	in, released, err := s.Store.Next(ctx, l, call)
	lost := false
	s.once.Do(func() { lost = err == nil && in != nil })
	if lost {
		s.lost.Store(true)
		return nil, false, fmt.Errorf("%w: reply lost after the commit", conversation.ErrUnavailable)
	}
	return in, released, err
}

// attemptsOf records the Attempts of each turn's input by id and answers it; m1's
// turn submits m2 (submit) first, so that the worker begins m2 with Next.
type attemptsOf struct {
	answerer
	submit func()
	mu     *sync.Mutex
	seen   map[string]int
}

func (a attemptsOf) Handle(ctx context.Context, r *Run) error {
	a.mu.Lock()
	a.seen[r.In.ID] = r.In.Attempts
	a.mu.Unlock()
	if r.In.ID == "m1" {
		a.submit()
	}
	return a.answerer.Handle(ctx, r)
}

// TestLostAnswerOfNextCountsOneAttempt: a Next whose answer was lost after it began
// an input is tried again as the same call, and begins the same input without
// counting another attempt: its turn runs once, as the input's first attempt.
func TestLostAnswerOfNextCountsOneAttempt(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	m := &replies{want: 2, done: make(chan struct{})}
	var rt *Runtime
	h := attemptsOf{mu: &sync.Mutex{}, seen: map[string]int{}, submit: func() {
		if _, err := rt.Submit(ctx, mention("m2", 1)); err != nil {
			t.Error(err)
		}
	}}
	st := &lostNextStore{Store: db}
	rt = New(Config{Store: st, Messenger: firstRun{m, &atomic.Int32{}}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, h)
	startRuntime(t, ctx, rt)
	if _, err := rt.Submit(ctx, mention("m1", 1)); err != nil {
		t.Fatal(err)
	}
	await(t, m.done, "the two turns to answer")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen["m1"] != 1 || h.seen["m2"] != 1 {
		t.Errorf("the turns ran as attempts %v; want 1 each (the lost Next and its retry are one attempt)", h.seen)
	}
	if !st.lost.Load() {
		t.Error("no Next that began an input had its answer lost: m2 was not begun with Next")
	}
}

// checkpointer checkpoints its turn once (Run.Checkpoint, a pipeline's progress),
// sends what Checkpoint returned on got, then answers.
type checkpointer struct {
	got chan<- error
}

func (c checkpointer) Handle(ctx context.Context, r *Run) error {
	cp, err := r.Load(ctx)
	if errors.Is(err, conversation.ErrNotFound) {
		cp, err = &conversation.Checkpoint{Conversation: conversation.Conversation{Key: r.In.Key}}, nil
	}
	if err != nil {
		return err
	}
	st := cp.Conversation.State
	st.Summary = "progress"
	// A confirmation's transcript, raw JSON whose keys are not in the order Postgres's
	// jsonb keeps them: the stored state reads back with them reordered.
	st.ToolApproval = &conversation.ToolApproval{ID: "a1", UserID: "U1", Begun: true, Tool: conversation.PendingTool{Name: "fetch",
		Transcript: json.RawMessage(`{"messages":[{"role":"user","content":"hi"}],"batch":{},"step":2}`)}}
	saved, err := r.Checkpoint(ctx, conversation.Turn{Key: r.In.Key, Version: cp.Conversation.Version, State: st})
	c.got <- err
	if err != nil {
		return err
	}
	conv := cp.Conversation
	conv.Version, conv.State = saved.Version, st
	fctx, cancel := r.Final(ctx)
	defer cancel()
	return r.Finish(fctx, conv, Ending{Reply: "re", Answer: true})
}

// TestLostReplyOfACheckpoint: a save that keeps the lease (a pipeline's checkpoint, or
// a confirmed tool call marked begun) committed, but its reply was lost: its retry
// finds the conversation at a newer version (ErrConflict), and the run asks the store
// whether that version is its own save; it is, so Checkpoint succeeds and the turn
// goes on and answers, rather than failing and running its work again. On both
// stores: Postgres's jsonb gives the state back with its objects' keys reordered.
func TestLostReplyOfACheckpoint(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		testLostReplyOfACheckpoint(t, openSQLite(t))
	})
	t.Run("Postgres", func(t *testing.T) {
		db, err := postgres.Open(context.Background(), storetest.PostgresDSN(t), 4)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		testLostReplyOfACheckpoint(t, db)
	})
}

func testLostReplyOfACheckpoint(t *testing.T, db conversation.Store) {
	ctx := context.Background()
	st := &lostReplyStore{Store: db, kept: true, hook: func() {}}
	m := &replies{want: 1, done: make(chan struct{})}
	got := make(chan error, 4)
	rt := New(Config{Store: st, Messenger: firstRun{m, &atomic.Int32{}}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, checkpointer{got: got})
	startRuntime(t, ctx, rt)
	if _, err := rt.Submit(ctx, mention("m1", 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("Checkpoint whose commit's reply was lost: %v; want it found committed", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the turn did not checkpoint")
	}
	await(t, m.done, "the turn to answer after its checkpoint")
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.done {
		t.Error("no reply was lost")
	}
	cp, err := db.Load(ctx, mention("", 1).Key, 0)
	if err != nil || cp.Conversation.State.Summary != "progress" {
		t.Errorf("stored conversation %+v, %v; want the checkpoint's summary", cp, err)
	}
}

// openSQLite opens a SQLite store in a file of the test's own, closed when it ends.
func openSQLite(t *testing.T) *sqlite.Store {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "tw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// await fails the test unless done is closed within a minute; what says what it waits
// for.
func await(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("waited a minute for %s", what)
	}
}
