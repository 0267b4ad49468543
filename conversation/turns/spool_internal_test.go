package turns

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
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
// attempt stores is announced as new (notify).
func TestDrainLostReplyStartsTheThread(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sp := testSpool(t, ctx)
	st := &lostEnqueueReplyStore{stored: map[string]bool{}}
	in := testIntake(st, Config{Spool: sp}, func(conversation.Key) {})
	kicked, notified := make(chan conversation.Key, 3), make(chan string, 3)
	s := in.spool
	s.kick = func(k conversation.Key) { kicked <- k }
	s.notify = func(in conversation.Input) { notified <- in.ID }
	lost, fresh := personMention("m1", "U1", "1000.000100"), personMention("m2", "U2", "2000.000100")
	held := personMention("m3", "U3", "3000.000100")
	st.stored[held.ID] = true
	for _, m := range []conversation.Input{lost, fresh, held} {
		if _, err := sp.Put(ctx, m); err != nil {
			t.Fatal(err)
		}
		if err := s.unspool(ctx, m, map[string]bool{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(kicked) != 2 || <-kicked != lost.Key {
		t.Error("the spooled input stored by an attempt whose reply was lost started no work on its thread")
	}
	if len(kicked) != 1 || <-kicked != held.Key {
		t.Error("the spooled input the store held already started no work on its thread")
	}
	if len(notified) != 1 || <-notified != fresh.ID {
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
	if err := s.unspool(ctx, m, tried); !storeDown(err) {
		t.Fatalf("first pass: %v; want the store down", err)
	}
	if err := s.unspool(ctx, m, tried); err != nil {
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
	s.kick, s.notify = func(conversation.Key) {}, func(conversation.Input) {}
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
