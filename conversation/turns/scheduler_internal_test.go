package turns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/sqlite"
	"github.com/threadwright/threadwright/testkit/logtest"
	"golang.org/x/sync/singleflight"
)

// A newer message stops the thread's running turn, but never its own: the worker can
// take a message (learning of it from the lease's renewal) before Submit's notice
// that it arrived, and that notice must not stop the message's own turn.
func TestNewMessageStopsOnlyAnOlderTurn(t *testing.T) {
	k := conversation.Key{TeamID: "T", ChannelID: "C", ThreadTS: "1.0"}
	in := func(id string) conversation.Input {
		return conversation.Input{ID: id, Key: k, Kind: conversation.KindUserMessage,
			Message: &conversation.UserMessage{UserID: "U1", Text: id, TS: "1700000002.000100"}}
	}
	for _, c := range []struct {
		name    string
		running active
		stops   bool
	}{
		{"OlderTurn", active{inputID: "m1", stoppable: true, interruptible: true}, true},
		{"OlderMessagesTurn", active{inputID: "m1", stoppable: true, interruptible: true, messageTS: "1700000002.000099"}, true},
		// A late first copy of a message sent before the one the turn answers.
		{"NewerMessagesTurn", active{inputID: "m1", stoppable: true, interruptible: true, messageTS: "1700000010.000000"}, false},
		{"ItsOwnTurn", active{inputID: "m2", stoppable: true, interruptible: true}, false},
		{"NotStoppable", active{inputID: "m1", interruptible: true}, false},
		{"PipelineRun", active{inputID: "m1", stoppable: true, interruptible: true, run: "run:1"}, false},
		// Under queue and merge a newer message waits for the running turn.
		{"NotInterruptible", active{inputID: "m1", stoppable: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			a := c.running
			a.cancel = cancel
			ts := &threadSet{m: map[conversation.Key]*thread{k: {run: &a}}}
			got := ts.stopOlder(in("m2"), conversation.Stopped{By: "U1", NewMessage: true})
			var by conversation.Stopped
			stopped := errors.As(context.Cause(ctx), &by)
			if got != c.stops || stopped != c.stops {
				t.Fatalf("stopOlder = %v, turn stopped %v; want %v", got, stopped, c.stops)
			}
		})
	}
}

// A turn knows the newest message it answers (the newest of a merged burst, by Slack
// ts), which a message must be newer than to stop it.
func TestStartRunKnowsItsNewestMessage(t *testing.T) {
	k := conversation.Key{TeamID: "T", ChannelID: "C", ThreadTS: "1.0"}
	m := func(ts string) *conversation.UserMessage { return &conversation.UserMessage{UserID: "U1", TS: ts} }
	burst := conversation.Input{ID: "m1", Key: k, Kind: conversation.KindUserMessage, Message: m("1700000001.000000"),
		Burst: []conversation.Input{{ID: "m3", Message: m("1700000003.000000"), Seq: 3}, {ID: "m2", Message: m("1700000002.000000"), Seq: 4}}}
	for _, c := range []struct {
		in   conversation.Input
		want string
	}{
		{burst, "1700000003.000000"},
		{conversation.Input{ID: "c1", Key: k, Kind: conversation.KindCommand, Command: &conversation.CommandInput{Line: "cancel"}}, ""},
	} {
		ts, th := &threadSet{m: map[conversation.Key]*thread{}}, &thread{}
		ts.startRun(th, c.in, func(error) {}, true)
		if th.run.messageTS != c.want {
			t.Errorf("the turn of %s answers the message of ts %q, want %q", c.in.ID, th.run.messageTS, c.want)
		}
	}
}

// pendingStore answers Pending with the next of answers (the last one again once
// they run out), or err, and counts the calls; during is called in each first.
// CountPending counts the thread's pending inputs as count, or the last answer's
// length when count is 0.
type pendingStore struct {
	conversation.Store
	answers [][]conversation.Input
	err     error
	during  func()
	calls   atomic.Int32
	count   int
}

func (s *pendingStore) CountPending(ctx context.Context, _ conversation.Key, _ string, _ int) (conversation.PendingCounts, error) {
	if s.count > 0 {
		return conversation.PendingCounts{Thread: s.count}, ctx.Err()
	}
	return conversation.PendingCounts{Thread: len(s.answers[len(s.answers)-1])}, ctx.Err()
}

func (s *pendingStore) Pending(ctx context.Context, _ conversation.Key, _ int) ([]conversation.Input, error) {
	n := int(s.calls.Add(1))
	if s.during != nil {
		s.during()
	}
	if s.err != nil {
		return nil, s.err
	}
	return s.answers[min(n, len(s.answers))-1], ctx.Err()
}

// TestAnotherReplicasMessageStopsOnlyANewerTurn: a person's message that another
// replica stored (LeaseState.Message, brought by the renewal) stops the running turn
// when it was sent after the message the turn answers, and not when it is a late
// first copy of an older one, an edit, or not yet the message the renewal named;
// when the store cannot say (it fails, a full page, the inputs read cut short before
// the named one by one that does not decode), it stops the turn, as before, but not
// for a named message deleted since; a turn that answers no message is stopped
// without asking; a turn frozen meanwhile (its answer being posted) is not stopped.
// A message is looked up once when the lookup finds it newer, and at most
// maxLookups times when not, so that a newer one committed after it (with a lower
// Seq) is found by a later renewal.
func TestAnotherReplicasMessageStopsOnlyANewerTurn(t *testing.T) {
	k := conversation.Key{TeamID: "T", ChannelID: "C", ThreadTS: "1.0"}
	msg := func(seq int64, ts string) conversation.Input {
		return conversation.Input{ID: fmt.Sprint("m", seq), Key: k, Seq: seq, Kind: conversation.KindUserMessage,
			Message: &conversation.UserMessage{UserID: "U2", TS: ts}}
	}
	running := msg(5, "1700000005.000000")
	newer, older := msg(6, "1700000006.000000"), msg(6, "1700000004.000000")
	edit := newer
	edit.Kind = conversation.KindEdit
	full := []conversation.Input{running}
	for i := range pendingScan - 1 {
		full = append(full, msg(int64(7+i), "1700000004.000000"))
	}
	var ls leases
	for _, c := range []struct {
		name      string
		messageTS string
		answers   [][]conversation.Input
		err       error
		freeze    bool
		stops     bool
		lookups   int32
		count     int // the thread's pending inputs (CountPending), when not those read
	}{
		{"Newer", running.Message.TS, [][]conversation.Input{{running, newer}}, nil, false, true, 1, 0},
		{"OlderDeliveredLate", running.Message.TS, [][]conversation.Input{{running, older}}, nil, false, false, maxLookups, 0},
		{"NewerCommittedLater", running.Message.TS, [][]conversation.Input{{running, msg(7, "1700000004.000000")},
			{running, newer, msg(7, "1700000004.000000")}}, nil, false, true, 2, 0},
		{"NewerButNotYetNamed", running.Message.TS, [][]conversation.Input{{running, older, msg(7, "1700000009.000000")}}, nil, false, false, maxLookups, 0},
		{"AnEdit", running.Message.TS, [][]conversation.Input{{running, edit}}, nil, false, false, maxLookups, 0},
		{"FullPage", running.Message.TS, [][]conversation.Input{full}, nil, false, true, 1, 0},
		{"StoreFails", running.Message.TS, nil, conversation.ErrUnavailable, false, true, 1, 0},
		// Pending stopped before an input that does not decode, ahead of the named one.
		{"BehindAnUndecodableInput", running.Message.TS, [][]conversation.Input{{running}}, nil, false, true, 1, 3},
		// The named message is no longer pending: its author deleted it.
		{"Deleted", running.Message.TS, [][]conversation.Input{{running}}, nil, false, false, maxLookups, 0},
		{"FrozenMeanwhile", running.Message.TS, [][]conversation.Input{{running, newer}}, nil, true, false, 1, 0},
		{"TurnAnswersNoMessage", "", nil, nil, false, true, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			st := &pendingStore{answers: c.answers, err: c.err, count: c.count}
			r := &active{inputID: running.ID, seq: running.Seq, cancel: cancel, stoppable: true, interruptible: true, messageTS: c.messageTS}
			threads := &threadSet{m: map[conversation.Key]*thread{k: {run: r}}}
			if c.freeze {
				st.during = func() { threads.markRun(k, func(a *active) { a.stoppable = false }) } // Run.Freeze
			}
			ls = leases{env: &env{cfg: Config{Store: st}, log: slog.New(slog.DiscardHandler), threads: threads, bg: &sync.WaitGroup{},
				bgCtx: context.Background()}}
			state := conversation.LeaseState{Message: 6, MessageBy: "U2"}
			for range maxLookups + 2 { // renewals bring the same message
				threads.mu.Lock()
				ls.applyRequests(k, r, state)
				threads.mu.Unlock()
				ls.bg.Wait()
			}
			var by conversation.Stopped
			if stopped := errors.As(context.Cause(ctx), &by); stopped != c.stops || (stopped && (!by.NewMessage || by.By != "U2")) {
				t.Errorf("turn stopped %v (%+v), want %v", stopped, by, c.stops)
			}
			if n := st.calls.Load(); n != c.lookups {
				t.Errorf("%d lookups of the pending inputs, want %d", n, c.lookups)
			}
		})
	}
}

// callStore counts the lease and checkpoint calls of a turn.
type callStore struct {
	conversation.Store
	mu    sync.Mutex
	calls map[string]int
}

func (s *callStore) count(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
}

func (s *callStore) Acquire(ctx context.Context, k conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, bool, error) {
	s.count("Acquire")
	return s.Store.Acquire(ctx, k, owner, ttl)
}

func (s *callStore) AcquireBegin(ctx context.Context, k conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, *conversation.Input, bool, error) {
	s.count("AcquireBegin")
	return s.Store.AcquireBegin(ctx, k, owner, ttl)
}

func (s *callStore) Begin(ctx context.Context, l conversation.Lease) (*conversation.Input, error) {
	s.count("Begin")
	return s.Store.Begin(ctx, l)
}

func (s *callStore) Next(ctx context.Context, l conversation.Lease, call int64) (*conversation.Input, bool, error) {
	s.count("Next")
	return s.Store.Next(ctx, l, call)
}

func (s *callStore) Release(ctx context.Context, l conversation.Lease) (bool, error) {
	s.count("Release")
	return s.Store.Release(ctx, l)
}

func (s *callStore) Pending(ctx context.Context, k conversation.Key, limit int) ([]conversation.Input, error) {
	s.count("Pending")
	return s.Store.Pending(ctx, k, limit)
}

func (s *callStore) Load(ctx context.Context, k conversation.Key, recent int) (*conversation.Checkpoint, error) {
	s.count("Load")
	return s.Store.Load(ctx, k, recent)
}

func (s *callStore) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	s.count("Save")
	return s.Store.Save(ctx, turn)
}

// replies answers each PostReply, and closes done at the want-th.
type replies struct {
	conversation.Messenger
	mu      sync.Mutex
	n, want int
	done    chan struct{}
}

func (m *replies) PostReply(context.Context, conversation.Key, string, conversation.Tag) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	if m.n == m.want {
		close(m.done)
	}
	return fmt.Sprintf("9.%d", m.n), nil
}

func (m *replies) SetStatus(context.Context, conversation.Key, string) error { return nil }

// answerer loads the checkpoint and finishes the turn with a reply, as the
// assistant's plain answer does.
type answerer struct{}

func (answerer) Handle(ctx context.Context, r *Run) error {
	cp, err := r.Load(ctx)
	if errors.Is(err, conversation.ErrNotFound) {
		cp, err = &conversation.Checkpoint{Conversation: conversation.Conversation{Key: r.In.Key}}, nil
	}
	if err != nil {
		return err
	}
	fctx, cancel := r.Final(ctx)
	defer cancel()
	return r.Finish(fctx, cp.Conversation, Ending{Msgs: []conversation.Message{{Role: conversation.RoleUser, Text: "hi"}}, Reply: "re", Answer: true})
}

// TestPlainTurnStoreCalls: a mention in a new thread costs the store three calls of
// a turn (docs/architecture.md, "Durable turns"): AcquireBegin takes the thread and
// begins the input, Load, and the Save that finishes it and frees the lease; no
// Acquire, Begin, Next or Release. The lease is free afterwards. Under the merge
// policy the turn reads the burst once, when the message's window has closed.
func TestPlainTurnStoreCalls(t *testing.T) {
	for _, c := range []struct {
		policy  conversation.DoubleTexting
		pending int
	}{{conversation.DoubleTextingQueue, 0}, {conversation.DoubleTextingMerge, 1}} {
		t.Run(string(c.policy), func(t *testing.T) {
			const n = 5
			want := map[string]int{"AcquireBegin": n, "Load": n, "Save": n}
			if c.pending > 0 {
				want["Pending"] = c.pending * n
			}
			testTurnStoreCalls(t, n, c.policy, want)
		})
	}
}

// testTurnStoreCalls answers n mentions in new threads under policy and checks the
// store calls their turns made against want.
func testTurnStoreCalls(t *testing.T, n int, policy conversation.DoubleTexting, want map[string]int) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	st := &callStore{Store: db, calls: map[string]int{}}
	m := &replies{want: n, done: make(chan struct{})}
	// LeaseTTL an hour: no sweep (every LeaseTTL/5) comes during the test, to find an
	// input between its Submit and its worker's AcquireBegin and poke that worker
	// into one more Acquire and Next after its turn.
	rt := New(Config{Store: st, Messenger: m, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MergeWindow: 300 * time.Millisecond,
		LeaseTTL: time.Hour, DoubleTexting: func(conversation.Key) conversation.DoubleTexting { return policy }}, answerer{})
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := rt.Submit(ctx, mention(fmt.Sprintf("m%d", i), i+1)); err != nil {
			t.Fatal(err)
		}
	}
	<-m.done
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	got := st.calls
	st.mu.Unlock()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("store calls of %d plain turns = %v; want %v", n, got, want)
	}
	for i := range n {
		k := mention("", i+1).Key
		if _, _, ok, err := db.Acquire(ctx, k, "other", time.Minute); err != nil || !ok {
			t.Errorf("Acquire of thread %s after its turn = %v, %v; want it free", k, ok, err)
		}
	}
}

// orderLog records, in order, the session statuses set and the saves that may free
// the lease.
type orderLog struct {
	conversation.Store
	mu     sync.Mutex
	events []string
}

func (o *orderLog) add(e string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, e)
}

func (o *orderLog) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	saved, err := o.Store.Save(ctx, turn)
	if turn.Release {
		o.add(fmt.Sprintf("save released=%v", saved.Released))
	}
	return saved, err
}

func (o *orderLog) SetSessionStatus(ctx context.Context, _ conversation.Key, status, _, _ string) error {
	o.add("status " + status)
	return ctx.Err()
}

func (o *orderLog) RenameSession(ctx context.Context, _ conversation.Key, title string) error {
	o.add("rename " + title)
	return ctx.Err()
}

// sessionEvents runs one mention's turn with handler h, and returns the session
// statuses set and the releasing saves, in order, once done is closed.
func sessionEvents(t *testing.T, h Handler, done <-chan struct{}) []string {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	o := &orderLog{Store: db}
	rt := New(Config{Store: o, Messenger: &replies{want: -1}, Sessions: o, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, h)
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Submit(ctx, mention("m1", 1)); err != nil {
		t.Fatal(err)
	}
	<-done
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.events)
}

// doneAnswerer is answerer that closes done when its turn returned.
type doneAnswerer struct {
	answerer
	done chan struct{}
}

func (a doneAnswerer) Handle(ctx context.Context, r *Run) error {
	defer close(a.done)
	return a.answerer.Handle(ctx, r)
}

// TestSessionEndsBeforeTheLeaseIsFreed: a turn sets its agent session's end status
// before the save that frees the thread's lease, so that the thread's next turn,
// which may start as soon as the lease is free (here or on another replica), is never
// shown idle by the status of the turn before it.
func TestSessionEndsBeforeTheLeaseIsFreed(t *testing.T) {
	h := doneAnswerer{done: make(chan struct{})}
	got := sessionEvents(t, h, h.done)
	want := []string{"status " + conversation.SessionProcessing, "status " + conversation.SessionActive, "save released=true"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("session statuses and releasing saves = %q; want %q", got, want)
	}
}

// lostAnswerer finishes a turn whose answer was posted (streamed) and whose thread was
// then taken over (its lease marked lost, as a Renew that finds it taken does).
type lostAnswerer struct {
	done chan struct{} // closed when the turn returned
}

func (a lostAnswerer) Handle(ctx context.Context, r *Run) error {
	defer close(a.done)
	ts := r.env.threads
	ts.mu.Lock()
	r.th.lost = true
	ts.mu.Unlock()
	fctx, cancel := r.Final(ctx)
	defer cancel()
	conv := conversation.Conversation{Key: r.In.Key}
	return r.Finish(fctx, conv, Ending{Msgs: []conversation.Message{{Role: conversation.RoleUser, Text: "hi"}}, Reply: "re", Posted: true, TS: "9.1", Answer: true})
}

// TestSessionNotEndedByALostTurn: a turn whose lease was taken over sets nothing on
// the session at its end: the new holder's "processing" stands. (Its save is the
// store's to refuse, by the fencing token; this in-process takeover leaves the store's
// lease as it was.)
func TestSessionNotEndedByALostTurn(t *testing.T) {
	h := lostAnswerer{done: make(chan struct{})}
	statuses := slices.DeleteFunc(sessionEvents(t, h, h.done), func(e string) bool { return !strings.HasPrefix(e, "status ") })
	if want := []string{"status " + conversation.SessionProcessing}; fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Errorf("session statuses = %q; want %q", statuses, want)
	}
}

// renewCountStore counts the calls of Renew, each held until release is closed, and
// answers with every thread of leases still held.
type renewCountStore struct {
	conversation.Store
	leases  []conversation.Lease
	calls   atomic.Int32
	release chan struct{}
}

// Renew renews the leases there are as it starts (as the statement reads them), once
// release is closed.
func (s *renewCountStore) Renew(ctx context.Context, owner string, ttl time.Duration) ([]conversation.LeaseState, error) {
	s.calls.Add(1)
	states := make([]conversation.LeaseState, len(s.leases))
	for i, l := range s.leases {
		states[i] = conversation.LeaseState{Lease: l}
	}
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return states, nil
}

// TestConfirmsShareOneRenewal: turns that confirm their leases at once, after the
// heartbeat's renewals failed for LeaseTTL, share one Renew rather than queue one
// each on the heartbeat's connection (postgres.RenewConns), and each learns that its
// lease holds.
func TestConfirmsShareOneRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 50
		st := &renewCountStore{release: make(chan struct{})}
		e := &env{cfg: Config{Store: st, Owner: "me", LeaseTTL: 10 * time.Second, Now: time.Now},
			log: slog.New(slog.NewTextHandler(io.Discard, nil)), threads: newThreadSet(), ctx: t.Context()}
		ls := leases{env: e, renewing: &singleflight.Group{}}
		var ths []*thread
		for i := range n {
			l := conversation.Lease{Key: conversation.Key{TeamID: "T", ChannelID: "C", ThreadTS: fmt.Sprint(i)}, Owner: "me", Token: 1}
			th := &thread{key: l.Key, lease: l, since: time.Now().Add(-time.Minute), validUntil: time.Now().Add(-time.Second)}
			e.threads.m[l.Key] = th
			st.leases = append(st.leases, l)
			ths = append(ths, th)
		}
		errs := make(chan error, n)
		for _, th := range ths {
			go func() { errs <- ls.confirm(t.Context(), th) }()
		}
		synctest.Wait() // every confirm waits for a renewal
		if c := st.calls.Load(); c != 1 {
			t.Errorf("%d confirms at once made %d Renew calls; want 1, shared", n, c)
		}
		close(st.release)
		for range n {
			if err := <-errs; err != nil {
				t.Errorf("confirm = %v; want nil (the lease holds)", err)
			}
		}
	})
}

// TestConfirmAsksAgainForALeaseTheRenewalMissed: a turn that confirms its lease while
// a renewal is in flight joins it, but a renewal that started before the lease was
// taken (since) proves nothing of it: confirm renews again rather than let the turn
// write on a lease no renewal saw. A lease the turn's last save freed is not its own:
// confirm says so without renewing.
func TestConfirmAsksAgainForALeaseTheRenewalMissed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &renewCountStore{release: make(chan struct{})}
		e := &env{cfg: Config{Store: st, Owner: "me", LeaseTTL: 10 * time.Second, Now: time.Now},
			log: slog.New(slog.NewTextHandler(io.Discard, nil)), threads: newThreadSet(), ctx: t.Context()}
		ls := leases{env: e, renewing: &singleflight.Group{}}
		// add adds a lease taken at since, whose known validity has just passed.
		add := func(ts string, since time.Time) *thread {
			l := conversation.Lease{Key: conversation.Key{TeamID: "T", ChannelID: "C", ThreadTS: ts}, Owner: "me", Token: 1}
			th := &thread{key: l.Key, lease: l, since: since, validUntil: time.Now().Add(-time.Millisecond)}
			e.threads.mu.Lock()
			e.threads.m[l.Key] = th
			e.threads.mu.Unlock()
			st.leases = append(st.leases, l)
			return th
		}
		start := time.Now() // the first renewal's start: the bubble's clock stands still
		a := add("1", start.Add(-time.Minute))
		errA := make(chan error, 1)
		go func() { errA <- ls.confirm(t.Context(), a) }()
		synctest.Wait()                       // a's renewal is in flight, started at start
		b := add("2", start.Add(time.Second)) // taken after that renewal started
		errB := make(chan error, 1)
		go func() { errB <- ls.confirm(t.Context(), b) }()
		synctest.Wait()
		close(st.release)
		if err := <-errA; err != nil {
			t.Errorf("confirm of the lease the renewal saw = %v; want nil", err)
		}
		if err := <-errB; err != nil {
			t.Errorf("confirm of the lease taken after the renewal started = %v; want nil, after a renewal of its own", err)
		}
		if c := st.calls.Load(); c != 2 {
			t.Errorf("Renew calls = %d; want 2 (the second for the lease the first missed)", c)
		}
		e.threads.mu.Lock()
		b.lease = conversation.Lease{} // freed by the turn's last save
		e.threads.mu.Unlock()
		if err := ls.confirm(t.Context(), b); !errors.Is(err, conversation.ErrLeaseLost) {
			t.Errorf("confirm of a freed lease = %v; want ErrLeaseLost", err)
		}
		if c := st.calls.Load(); c != 2 {
			t.Errorf("confirm of a freed lease renewed (%d calls)", c)
		}
	})
}

// TestUndecodableInputFails: an input whose stored payload does not decode (a corrupt
// row, or a newer version's) is finished as failed, with an error log naming it, and
// the thread goes on with its next input, rather than retrying it for ever. The
// merge policy's read of the burst before it (Store.Pending) still answers its
// thread's first input.
func TestUndecodableInputFails(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tw.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	// Thread 1's second input does not decode (Next begins it), thread 2's first
	// (AcquireBegin begins it).
	for _, in := range []conversation.Input{mention("a", 1), mention("b", 1), mention("c", 1), mention("x", 2), mention("y", 2)} {
		if _, err := db.Enqueue(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE inputs SET payload = '{"text": ' WHERE id IN ('b', 'x')`); err != nil {
		t.Fatal(err)
	}

	logs := &logtest.Buffer{}
	h := startHandler{started: make(chan string, 8)}
	notices := &noticeLog{}
	rt := New(Config{Store: db, Messenger: notices, Logger: slog.New(slog.NewTextHandler(logs, nil)), MergeWindow: time.Millisecond}, h)
	if err := rt.Start(ctx); err != nil { // takes the thread over: its inputs are pending
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(sctx)
	})
	deadline := time.After(30 * time.Second) // generous for a loaded machine
	var started []string
	for len(started) < 3 {
		select {
		case id := <-h.started:
			started = append(started, id)
		case <-deadline:
			t.Fatalf("turns started: %v; want a, c and y: a thread is stuck\n%s", started, logs.String())
		}
	}
	if i, j := slices.Index(started, "a"), slices.Index(started, "c"); i < 0 || j < i || !slices.Contains(started, "y") {
		t.Fatalf("turns started: %v; want a then c, and y (b and x, which do not decode, never run)", started)
	}
	// b and x were failed before c and y began.
	for _, id := range []string{"b", "x"} {
		var status string
		if err := raw.QueryRow(`SELECT status FROM inputs WHERE id = ?`, id).Scan(&status); err != nil || status != string(conversation.InputFailed) {
			t.Errorf("%s's status = %q, %v; want failed", id, status, err)
		}
		if l := logs.String(); !strings.Contains(l, "level=ERROR msg=\"input failed: its stored payload does not decode") || !strings.Contains(l, "input_id="+id) {
			t.Errorf("no error log naming input %s:\n%s", id, l)
		}
	}
	// Each thread is told, once, that a message of its was not read.
	got := notices.posted()
	for _, thread := range []string{"1.0", "2.0"} {
		n := 0
		for _, p := range got {
			if p.key.ThreadTS == thread && p.tag.Notice && strings.Contains(p.text, "could not read a message") && strings.Contains(p.text, "send it again") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("thread %s was told %d times that a message was not read; want once (posted: %+v)", thread, n, got)
		}
	}
}

// noticeLog records the replies posted.
type noticeLog struct {
	conversation.Messenger
	mu    sync.Mutex
	posts []notice
}

// notice is a reply noticeLog recorded.
type notice struct {
	key  conversation.Key
	text string
	tag  conversation.Tag
}

func (m *noticeLog) PostReply(_ context.Context, key conversation.Key, text string, tag conversation.Tag) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.posts = append(m.posts, notice{key, text, tag})
	return fmt.Sprintf("9.%d", len(m.posts)), nil
}

func (m *noticeLog) posted() []notice {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.posts)
}

// TestUndecodableTextOnlyForWhatAPersonSent: the reply about an input that cannot be
// read asks again only for what a person sent.
func TestUndecodableTextOnlyForWhatAPersonSent(t *testing.T) {
	for kind, want := range map[conversation.InputKind]bool{
		conversation.KindUserMessage: true, conversation.KindEdit: true, conversation.KindAction: true, conversation.KindCommand: true,
		conversation.KindPipeline: false, conversation.KindDelete: false, conversation.KindAssistantThread: false,
	} {
		if text, ok := undecodableText(kind); ok != want || ok && !strings.Contains(text, "send it again") {
			t.Errorf("undecodableText(%s) = %q, %v; want a request to send it again: %v", kind, text, ok, want)
		}
	}
}

// panicOnce is answerer whose first turn of input boom panics; done gets the id of
// each turn answered.
type panicOnce struct {
	answerer
	boom  string
	calls *atomic.Int32
	done  chan string
}

func (h panicOnce) Handle(ctx context.Context, r *Run) error {
	if r.In.ID == h.boom && h.calls.Add(1) == 1 {
		panic("a bug this input triggers")
	}
	err := h.answerer.Handle(ctx, r)
	h.done <- r.In.ID
	return err
}

// TestPanickingTurnFailsItsInputOnly: a turn that panics (a bug one input triggers)
// fails its input, which is tried again, and the process goes on answering the other
// threads: a panic ends the turn, not every turn of the replica.
func TestPanickingTurnFailsItsInputOnly(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	logs := &logtest.Buffer{}
	h := panicOnce{boom: "boom", calls: &atomic.Int32{}, done: make(chan string, 4)}
	rt := New(Config{Store: db, Messenger: firstRun{&replies{want: -1}, &atomic.Int32{}}, Logger: slog.New(slog.NewTextHandler(logs, nil))}, h)
	startRuntime(t, ctx, rt)
	for _, in := range []conversation.Input{mention("boom", 1), mention("ok", 2)} {
		if _, err := rt.Submit(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(30 * time.Second) // the retry waits about a second
	answered := map[string]bool{}
	for len(answered) < 2 {
		select {
		case id := <-h.done:
			answered[id] = true
		case <-deadline:
			t.Fatalf("answered %v; want boom (tried again) and ok\n%s", answered, logs.String())
		}
	}
	if n := h.calls.Load(); n != 2 {
		t.Errorf("boom's turn ran %d times; want twice (the panic, then the retry)", n)
	}
	if l := logs.String(); !strings.Contains(l, `msg="turn panicked"`) || !strings.Contains(l, "a bug this input triggers") {
		t.Errorf("no log of the panic:\n%s", l)
	}
}
