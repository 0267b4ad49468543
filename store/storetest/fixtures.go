package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// The fixtures the cases share: their threads, messages and inputs, the must helpers
// that fail a test on an error, and those of leases.

// key is the thread of most cases.
var key = conversation.Key{TeamID: "T0001", ChannelID: "C0001", ThreadTS: "1700000000.000100"}

// otherKey returns a key that differs from key in its thread only.
func otherKey(i int) conversation.Key {
	k := key
	k.ThreadTS = fmt.Sprintf("1700000001.%06d", i)
	return k
}

func user(text string) conversation.Message {
	return conversation.Message{Role: conversation.RoleUser, UserID: "U0001", Text: text}
}

func assistant(text string) conversation.Message {
	return conversation.Message{Role: conversation.RoleAssistant, Text: text}
}

// mustSave saves turn and fails the test on error.
func mustSave(t testing.TB, s conversation.Store, turn conversation.Turn) conversation.Saved {
	t.Helper()
	saved, err := s.Save(context.Background(), turn)
	if err != nil {
		t.Fatalf("Save(version %d): %v", turn.Version, err)
	}
	return saved
}

func mustLoad(t testing.TB, s conversation.Store, k conversation.Key, recent int) *conversation.Checkpoint {
	t.Helper()
	cp, err := s.Load(context.Background(), k, recent)
	if err != nil {
		t.Fatalf("Load(%s, %d): %v", k, recent, err)
	}
	return cp
}

func mustEnqueue(t testing.TB, s conversation.Store, in conversation.Input) {
	t.Helper()
	ok, err := s.Enqueue(context.Background(), in)
	if err != nil || !ok {
		t.Fatalf("Enqueue(%s) = %v, %v; want true, nil", in.ID, ok, err)
	}
}

func input(id string) conversation.Input {
	return conversation.Input{
		ID:      id,
		EventID: "Ev" + id,
		Key:     key,
		Kind:    conversation.KindUserMessage,
		Message: &conversation.UserMessage{UserID: "U0001", Text: "hello " + id, TS: "1700000000.000200", ThreadTS: key.ThreadTS, Mentioned: true},
	}
}

// texts returns the texts of msgs, to compare message lists.
func texts(msgs []conversation.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.Text)
	}
	return out
}

// seqs returns the seqs of msgs.
func seqs(msgs []conversation.Message) []int64 {
	out := []int64{}
	for _, m := range msgs {
		out = append(out, m.Seq)
	}
	return out
}

// jsonEqual reports whether a and b hold the same JSON value (a JSONB column does not
// keep the text's spacing or key order).
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("unmarshal %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func checkUTC(t *testing.T, what string, tm time.Time) {
	t.Helper()
	if tm.IsZero() || tm.Location() != time.UTC {
		t.Errorf("%s = %v; want a non-zero UTC time", what, tm)
	}
}

// race runs f(0) … f(n-1) at once and returns how many returned nil and the errors of
// the others.
func race(n int, f func(i int) error) (wins int, errs []error) {
	var (
		start sync.WaitGroup
		done  sync.WaitGroup
		mu    sync.Mutex
	)
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			err := f(i)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins++
			} else {
				errs = append(errs, err)
			}
		})
	}
	start.Done()
	done.Wait()
	return wins, errs
}

// tick waits until the clock has moved on, so that the next Save's updated_at is
// after the last one's.
func tick() { time.Sleep(2 * time.Millisecond) }

// Owners of the lease tests: names of worker processes.
const (
	ownerA = "replica-a/1"
	ownerB = "replica-b/1"
	ownerC = "replica-c/1"
)

// liveTTL is the ttl of a lease that does not expire during a test.
const liveTTL = time.Minute

// expiredTTL is the ttl of a lease that has expired when it is written.
const expiredTTL = time.Microsecond

// thread returns a key of its own for name, in the team and channel of key.
func thread(name string) conversation.Key {
	k := key
	k.ThreadTS = "1700000002." + name
	return k
}

// mustAcquire acquires k for owner with ttl and fails the test unless it is taken.
func mustAcquire(t testing.TB, s conversation.Store, k conversation.Key, owner string, ttl time.Duration) conversation.Lease {
	t.Helper()
	l, _, ok, err := s.Acquire(context.Background(), k, owner, ttl)
	if err != nil || !ok {
		t.Fatalf("Acquire(%s, %s) = %v, %v; want the lease", k, owner, ok, err)
	}
	if l.Key != k || l.Owner != owner || !l.Held() {
		t.Fatalf("Acquire(%s, %s) = %+v; want a lease of the thread and owner", k, owner, l)
	}
	return l
}

// mustNotAcquire fails the test unless Acquire of k for owner finds a liveTTL lease.
func mustNotAcquire(t testing.TB, s conversation.Store, k conversation.Key, owner string) {
	t.Helper()
	l, prev, ok, err := s.Acquire(context.Background(), k, owner, liveTTL)
	if err != nil || ok || l != (conversation.Lease{}) || prev != "" {
		t.Fatalf("Acquire(%s, %s) of a held thread = %+v, %q, %v, %v; want the zero lease, not ok", k, owner, l, prev, ok, err)
	}
}

// takeOver acquires k, whose lease has expired, for owner and returns the lease and
// the previous owner. It polls Acquire for a bounded time: the lease expired when it
// was written, so only a clock that stepped back makes it wait.
func takeOver(t testing.TB, s conversation.Store, k conversation.Key, owner string) (conversation.Lease, string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, prev, ok, err := s.Acquire(context.Background(), k, owner, liveTTL)
		if err != nil {
			t.Fatalf("Acquire(%s, %s): %v", k, owner, err)
		}
		if ok {
			return l, prev
		}
		if time.Now().After(deadline) {
			t.Fatalf("Acquire(%s, %s) of an expired lease: not taken within 10s", k, owner)
		}
	}
}

// mustBegin begins the next input of l's thread and fails the test on error.
func mustBegin(t testing.TB, s conversation.Store, l conversation.Lease) *conversation.Input {
	t.Helper()
	in, err := s.Begin(context.Background(), l)
	if err != nil {
		t.Fatalf("Begin(%s, token %d): %v", l.Key, l.Token, err)
	}
	return in
}

// mustBeginID begins the next input of l's thread and fails the test unless it is
// the input id, with attempts attempts.
func mustBeginID(t testing.TB, s conversation.Store, l conversation.Lease, id string, attempts int) *conversation.Input {
	t.Helper()
	in := mustBegin(t, s, l)
	if in == nil || in.ID != id || in.Attempts != attempts || in.Status != conversation.InputPending || in.Key != l.Key {
		t.Fatalf("Begin(%s) = %+v; want pending input %s with %d attempts", l.Key, in, id, attempts)
	}
	return in
}

// mustRelease releases l and fails the test unless Release returns want.
func mustRelease(t testing.TB, s conversation.Store, l conversation.Lease, want bool) {
	t.Helper()
	ok, err := s.Release(context.Background(), l)
	if err != nil || ok != want {
		t.Fatalf("Release(%s, token %d) = %v, %v; want %v, nil", l.Key, l.Token, ok, err, want)
	}
}

// mustRun runs the next input of l's thread as a turn without a Save does: it begins
// it, fails the test unless it is input id with one attempt, finishes it done and
// returns its Seq.
func mustRun(t testing.TB, s conversation.Store, l conversation.Lease, id string) int64 {
	t.Helper()
	in := mustBeginID(t, s, l, id, 1)
	if err := s.Finish(context.Background(), l, id, conversation.InputDone); err != nil {
		t.Fatalf("Finish(%s): %v", id, err)
	}
	return in.Seq
}

// mustOrphans returns what Orphans returns with limit and fails the test on error.
func mustOrphans(t testing.TB, s conversation.Store, limit int) []conversation.Key {
	t.Helper()
	keys, err := s.Orphans(context.Background(), limit)
	if err != nil {
		t.Fatalf("Orphans(%d): %v", limit, err)
	}
	return keys
}

// mustRenew renews owner's leases and returns their states by thread.
func mustRenew(t testing.TB, s conversation.Store, owner string, ttl time.Duration) map[conversation.Key]conversation.LeaseState {
	t.Helper()
	states, err := s.Renew(context.Background(), owner, ttl)
	if err != nil {
		t.Fatalf("Renew(%s): %v", owner, err)
	}
	out := map[conversation.Key]conversation.LeaseState{}
	for _, st := range states {
		if _, dup := out[st.Key]; dup {
			t.Fatalf("Renew(%s) returned %s twice", owner, st.Key)
		}
		if st.Owner != owner {
			t.Errorf("Renew(%s) returned a lease of %q", owner, st.Owner)
		}
		out[st.Key] = st
	}
	return out
}

// inputIn returns input id of thread k, a person's message from userID.
func inputIn(k conversation.Key, id, userID string) conversation.Input {
	return conversation.Input{
		ID: id, Key: k, Kind: conversation.KindUserMessage,
		Message: &conversation.UserMessage{UserID: userID, Text: "hello " + id, TS: "1.2", ThreadTS: k.ThreadTS},
	}
}

var errNotAcquired = errors.New("not acquired")

// suite is a conformance suite: named cases, each of which tests a store of its own.
type suite[S any] []struct {
	name string
	test func(t *testing.T, s S)
}

// run runs cases as parallel subtests named after them, each on a new, empty
// store that open returns (and closes in t.Cleanup).
func (cases suite[S]) run(t *testing.T, open func(t *testing.T) S) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, open(t))
		})
	}
}
