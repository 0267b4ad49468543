package turns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/sqlite"
)

// lostEnqueueReplyStore stores each input it is given and fails the first call as a
// connection lost before the commit's reply would (ErrUnavailable), or with
// firstErr when set.
type lostEnqueueReplyStore struct {
	conversation.Store
	mu       sync.Mutex
	calls    int
	stored   map[string]bool
	firstErr error
}

func (s *lostEnqueueReplyStore) Enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	inserted := !s.stored[in.ID]
	s.stored[in.ID] = true
	if s.calls == 1 && s.firstErr != nil {
		return false, s.firstErr
	}
	if s.calls == 1 {
		return false, fmt.Errorf("commit: connection reset: %w", conversation.ErrUnavailable)
	}
	return inserted, nil
}

// TestDrainLostReplyStartsTheThread: a spooled input that the drain's first attempt
// stored, its reply lost (the retry finds it stored), leaves the spool and starts
// work on its thread, stopping no turn there, as does one the store holds already
// (the batch of the Submit that spooled it committed, its reply lost); one the first
// attempt stores is announced as new (stop).
func TestDrainLostReplyStartsTheThread(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sp := testSpool(t, ctx)
	st := &lostEnqueueReplyStore{stored: map[string]bool{}}
	in := testIntake(st, Config{Spool: sp}, func(conversation.Key) {})
	kicked, stopped := make(chan conversation.Key, 3), make(chan string, 3)
	s := in.spool
	s.kick = func(k conversation.Key) { kicked <- k }
	s.stop = func(in conversation.Input) { stopped <- in.ID }
	lost, fresh := personMention("m1", "U1", "1000.000100"), personMention("m2", "U2", "2000.000100")
	held := personMention("m3", "U3", "3000.000100")
	st.stored[held.ID] = true
	batch := []conversation.Input{lost, fresh, held}
	for _, m := range batch {
		if _, err := sp.Put(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var stored arrivals
	if n, err := s.pass(ctx, batch, map[string]int{}, map[string]bool{}, &stored); n != 3 || err != nil {
		t.Fatalf("the pass moved %d, %v; want 3", n, err)
	}
	if len(kicked)+len(stopped) != 0 {
		t.Fatal("a pass announced what it stored; the drain does, once the spool is empty")
	}
	s.announce(&stored)
	for _, want := range []conversation.Key{lost.Key, fresh.Key, held.Key} {
		if len(kicked) == 0 || <-kicked != want {
			t.Errorf("thread %s not started once, in order", want)
		}
	}
	if len(stopped) != 1 || <-stopped != fresh.ID {
		t.Error("the spooled input stored at the first attempt was not announced as new, alone")
	}
	if n, err := sp.Len(ctx); err != nil || n != 0 {
		t.Errorf("%d inputs left in the spool (%v); want none", n, err)
	}
	in.limits.mu.Lock()
	defer in.limits.mu.Unlock()
	for _, c := range []struct {
		in   conversation.Input
		want int
	}{{lost, 1}, {fresh, 1}, {held, 0}} {
		// The one the store held already was counted by whoever stored it.
		if n := in.limits.pending[c.in.Key]; n != c.want {
			t.Errorf("%s counts %d pending inputs in its thread; want %d", c.in.ID, n, c.want)
		}
	}
}

// TestDrainCountsWhatALateAttemptStored: a spooled input whose store call ran out of
// time (not retried at once: the drain passes over it, and tries again a second
// later) but committed is found stored on the drain's next pass, and counted as
// pending then, as one stored at the first attempt is.
func TestDrainCountsWhatALateAttemptStored(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sp := testSpool(t, ctx)
	st := &lostEnqueueReplyStore{stored: map[string]bool{}, firstErr: errNoAnswer}
	in := testIntake(st, Config{Spool: sp}, func(conversation.Key) {})
	s := in.spool
	s.kick = func(conversation.Key) {}
	m := personMention("m1", "U1", "1000.000100")
	if _, err := sp.Put(ctx, m); err != nil {
		t.Fatal(err)
	}
	tried := map[string]bool{} // the drain's, across its passes
	if _, err := s.unspool(ctx, m, tried); !storeDown(err) {
		t.Fatalf("first pass: %v; want the store down", err)
	}
	if _, err := s.unspool(ctx, m, tried); err != nil {
		t.Fatal(err)
	}
	in.limits.mu.Lock()
	defer in.limits.mu.Unlock()
	if n := in.limits.pending[m.Key]; n != 1 {
		t.Errorf("%d pending inputs counted in its thread; want 1", n)
	}
}

// holdOnce is a slog.Handler that holds the first record whose message is msg until
// release is closed, having closed reached.
type holdOnce struct {
	msg              string
	once             sync.Once
	reached, release chan struct{}
}

func (h *holdOnce) Enabled(context.Context, slog.Level) bool { return true }
func (h *holdOnce) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *holdOnce) WithGroup(string) slog.Handler            { return h }
func (h *holdOnce) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() {
			close(h.reached)
			<-h.release
		})
	}
	return nil
}

// TestDrainEndsAsInputsComeBack: an input spooled just as the drain found the spool
// empty (it stopped spooling, and has not returned yet) is drained: the drain stops
// draining in the same step as it stops spooling, so the input's put starts a new
// one.
func TestDrainEndsAsInputsComeBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sp := testSpool(t, ctx)
	st := &lostEnqueueReplyStore{stored: map[string]bool{}, calls: 1} // never fails
	in := testIntake(st, Config{Spool: sp}, func(conversation.Key) {})
	hold := &holdOnce{msg: "store available again: spooled inputs moved into it", reached: make(chan struct{}), release: make(chan struct{})}
	in.log = slog.New(hold)
	in.bgCtx = ctx
	s := in.spool
	s.kick, s.stop = func(conversation.Key) {}, func(conversation.Input) {}
	if _, err := s.put(personMention("m1", "U1", "1000.000100"), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.reached: // the drain moved m1, found the spool empty and stopped spooling
	case <-ctx.Done():
		t.Fatal("the drain did not empty the spool")
	}
	if _, err := s.put(personMention("m2", "U2", "2000.000100"), nil); err != nil {
		t.Fatal(err)
	}
	close(hold.release)
	s.bg.Wait() // every drain started has returned
	if n, err := sp.Len(ctx); err != nil || n != 0 {
		t.Errorf("%d inputs left in the spool with no drain running (%v); want none", n, err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.stored["m2"] {
		t.Error("the input spooled as the drain ended was not stored")
	}
}

// testSpool opens a spool in a temporary directory, closed when the test ends.
func testSpool(t *testing.T, ctx context.Context) *sqlite.Spool {
	t.Helper()
	sp, err := sqlite.OpenSpool(ctx, filepath.Join(t.TempDir(), "spool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	return sp
}

// drainAll spools ins in sp, and runs s's drain until the spool is empty.
func drainAll(t *testing.T, ctx context.Context, s *spooler, sp conversation.Spool, ins ...conversation.Input) {
	t.Helper()
	for _, m := range ins {
		if _, err := sp.Put(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	s.spooling, s.draining = true, true
	s.drain(ctx)
	if n, err := sp.Len(ctx); n != 0 || err != nil {
		t.Fatalf("%d inputs left in the spool (%v)", n, err)
	}
}

// onePeek is a spool whose Peek returns one input: as a drain's Peek does that finds
// the next input not spooled yet.
type onePeek struct{ conversation.Spool }

func (o onePeek) Peek(ctx context.Context, _ int) ([]conversation.Input, error) {
	return o.Spool.Peek(ctx, 1)
}

// TestDrainStopsNoTurnOfItsOwn: a person's two messages spooled while the store was
// down go into it before either is announced, even in passes of their own (the second
// was spooled after the drain's first Peek), so the turn the first starts is not
// stopped by the second (the thread would show "Stopped" for a question nobody
// followed up while it ran); the thread is started once. A message announced later
// still stops that turn.
func TestDrainStopsNoTurnOfItsOwn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sp := testSpool(t, ctx)
	st := &lostEnqueueReplyStore{stored: map[string]bool{}, calls: 1} // never fails
	in := testIntake(st, Config{Spool: onePeek{sp}}, func(conversation.Key) {})
	first, second := personMention("m1", "U1", "1000.000100"), personMention("m2", "U1", "1000.000100")
	first.Message.TS, second.Message.TS = "1000.000200", "1000.000300"
	var turn context.Context
	kicks := 0
	s := in.spool
	s.stop = in.stopFor
	s.kick = func(k conversation.Key) {
		// A worker that begins the thread's first pending input at once.
		kicks++
		var stopTurn context.CancelCauseFunc
		turn, stopTurn = context.WithCancelCause(ctx)
		th := &thread{key: k}
		in.threads.mu.Lock()
		in.threads.m[k] = th
		in.threads.mu.Unlock()
		in.threads.startRun(th, first, stopTurn, true)
		th.run.stoppable = true
	}
	drainAll(t, ctx, s, sp, first, second)
	if kicks != 1 {
		t.Fatalf("the thread was started %d times; want once", kicks)
	}
	if err := context.Cause(turn); err != nil {
		t.Fatalf("the first message's turn was stopped (%v) by the second, spooled with it", err)
	}
	third := personMention("m3", "U1", "1000.000100")
	third.Message.TS = "1000.000400"
	s.announce(&arrivals{fresh: []conversation.Input{third}})
	var by conversation.Stopped
	if !errors.As(context.Cause(turn), &by) || !by.NewMessage {
		t.Fatalf("a newer message left the turn running (%v)", context.Cause(turn))
	}
}

// TestDrainAnnouncesALongSpoolAsItGoes: a drain announces what it stored once
// announceAfter has passed since the first of it went in, before the rest of the spool
// goes in: a long spool's first threads do not wait for its end.
func TestDrainAnnouncesALongSpoolAsItGoes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sp := testSpool(t, ctx)
	st := &lostEnqueueReplyStore{stored: map[string]bool{}, calls: 1} // never fails
	// Each look at the clock is announceAfter later.
	var ticks atomic.Int64
	start := time.Now()
	in := testIntake(st, Config{Spool: onePeek{sp}}, func(conversation.Key) {})
	in.cfg.Now = func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * announceAfter) }
	first, second := personMention("m1", "U1", "1000.000100"), personMention("m2", "U2", "2000.000100")
	secondStoredAtFirstKick := true
	s := in.spool
	s.stop = in.stopFor
	s.kick = func(k conversation.Key) {
		if k == first.Key {
			st.mu.Lock()
			secondStoredAtFirstKick = st.stored[second.ID]
			st.mu.Unlock()
		}
	}
	drainAll(t, ctx, s, sp, first, second)
	if secondStoredAtFirstKick {
		t.Fatal("the first thread was started only once the whole spool was in (or never)")
	}
}
