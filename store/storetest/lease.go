package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// The cases of Run for leases (docs/architecture.md, "Durable turns"). A lease that
// must have expired is acquired with a ttl under a millisecond, which leases round
// down to 0: it has expired when it is written, and the next Acquire by another owner
// takes it (takeOver polls, in case a clock stepped back), with no sleep.

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

// testAcquire checks Acquire: a free thread is taken with token 1; a liveTTL lease
// keeps it from other owners, while its own owner takes it again with the next token;
// an expired lease is taken over with the next token and the previous owner; a
// released one is taken with the next token and no previous owner.
func testAcquire(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("acquire")
	l, prev, ok, err := s.Acquire(ctx, k, ownerA, expiredTTL)
	if err != nil || !ok || l.Token != 1 || prev != "" || l.Owner != ownerA || l.Key != k {
		t.Fatalf("Acquire of a free thread = %+v, %q, %v, %v; want token 1, no previous owner", l, prev, ok, err)
	}
	l2, prev := takeOver(t, s, k, ownerB)
	if l2.Token != 2 || prev != ownerA {
		t.Errorf("Acquire of an expired lease = token %d, previous owner %q; want 2, %q", l2.Token, prev, ownerA)
	}
	mustNotAcquire(t, s, k, ownerA)
	// The holder may take its own live lease again (an Acquire whose answer it never
	// got): with a new token, which fences the lease it lost track of.
	l2b, prev, ok, err := s.Acquire(ctx, k, ownerB, liveTTL)
	if err != nil || !ok || l2b.Token != 3 || prev != ownerB {
		t.Errorf("Acquire of the caller's own live lease = %+v, %q, %v, %v; want token 3, previous owner itself", l2b, prev, ok, err)
	}
	if _, err := s.Release(ctx, l2); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Release with the token the holder took again = %v; want ErrLeaseLost", err)
	}
	mustRelease(t, s, l2b, true)
	l3, prev, ok, err := s.Acquire(ctx, k, ownerC, liveTTL)
	if err != nil || !ok || l3.Token != 4 || prev != "" {
		t.Errorf("Acquire of a released thread = %+v, %q, %v, %v; want token 4, no previous owner", l3, prev, ok, err)
	}
	// Threads are leased one by one.
	if other := mustAcquire(t, s, thread("acquire-other"), ownerA, liveTTL); other.Token != 1 {
		t.Errorf("Acquire of another thread: token %d; want 1", other.Token)
	}
	for _, bad := range []struct {
		key   conversation.Key
		owner string
	}{{k, ""}, {conversation.Key{ThreadTS: "1.1"}, ownerA}} {
		if _, _, ok, err := s.Acquire(ctx, bad.key, bad.owner, liveTTL); ok || err == nil {
			t.Errorf("Acquire(%q, %q) = %v, %v; want an error", bad.key, bad.owner, ok, err)
		}
	}
}

// testConcurrentAcquire races Acquires of one thread: exactly one wins.
func testConcurrentAcquire(t *testing.T, s conversation.Store) {
	const workers, rounds = 8, 3
	for round := range rounds {
		k := thread(fmt.Sprintf("race-%d", round))
		wins, errs := race(workers, func(i int) error {
			_, _, ok, err := s.Acquire(context.Background(), k, fmt.Sprintf("worker-%d", i), liveTTL)
			if err == nil && !ok {
				return errNotAcquired
			}
			return err
		})
		if wins != 1 {
			t.Fatalf("round %d: %d of %d concurrent Acquires won; want exactly 1 (others: %v)", round, wins, workers, errs)
		}
		for _, err := range errs {
			if !errors.Is(err, errNotAcquired) {
				t.Errorf("round %d: a losing Acquire failed with %v; want ok false", round, err)
			}
		}
	}
}

var errNotAcquired = errors.New("not acquired")

// testBeginOrder checks that Begin runs a thread's inputs in the order they were
// enqueued (Seq, which increases across threads), whatever their CreatedAt, and
// counts an attempt each time.
func testBeginOrder(t *testing.T, s conversation.Store) {
	a, b := thread("order-a"), thread("order-b")
	old := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, in := range []conversation.Input{
		inputIn(a, "a1", "U1"), inputIn(b, "b1", "U1"), inputIn(a, "a2", "U1"), inputIn(b, "b2", "U1"), inputIn(a, "a3", "U1"),
	} {
		in.CreatedAt = old.Add(-time.Duration(i) * time.Hour) // later inputs claim to be older
		mustEnqueue(t, s, in)
	}
	la := mustAcquire(t, s, a, ownerA, liveTTL)
	lb := mustAcquire(t, s, b, ownerB, liveTTL)
	var seqs []int64
	for _, next := range []struct {
		l  conversation.Lease
		id string
	}{{la, "a1"}, {lb, "b1"}, {la, "a2"}, {lb, "b2"}, {la, "a3"}} {
		in := mustBeginID(t, s, next.l, next.id, 1)
		seqs = append(seqs, in.Seq)
		// Begin does not finish the input: the next Begin runs it again, with another
		// attempt, until it is saved or finished.
		mustBeginID(t, s, next.l, next.id, 2)
		if err := s.Finish(context.Background(), next.l, next.id, conversation.InputDone); err != nil {
			t.Fatalf("Finish(%s): %v", next.id, err)
		}
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Errorf("seqs in enqueue order = %v; want them increasing", seqs)
			break
		}
	}
	for _, l := range []conversation.Lease{la, lb} {
		if in := mustBegin(t, s, l); in != nil {
			t.Errorf("Begin(%s) with no pending input = %+v; want nil", l.Key, in)
		}
	}
}

// testLeaseLost checks fencing: once a lease is taken over, its former holder's Begin,
// Finish, Release and Save fail with ErrLeaseLost, not ErrConflict, and write nothing.
func testLeaseLost(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("lost")
	mustEnqueue(t, s, inputIn(k, "x", "U1"))
	old := mustAcquire(t, s, k, ownerA, expiredTTL)
	mustBeginID(t, s, old, "x", 1)
	cur, _ := takeOver(t, s, k, ownerB)

	lost := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, conversation.ErrLeaseLost) || errors.Is(err, conversation.ErrConflict) {
			t.Errorf("%s with a lease taken over: %v; want ErrLeaseLost", what, err)
		}
	}
	_, err := s.Begin(ctx, old)
	lost("Begin", err)
	lost("Finish", s.Finish(ctx, old, "x", conversation.InputFailed))
	_, err = s.Release(ctx, old)
	lost("Release", err)
	next := conversation.Input{ID: "pipeline:lost", Kind: conversation.KindPipeline, Key: k}
	for _, version := range []int64{0, 3} { // a stale version too: the lease is checked first
		_, err = s.Save(ctx, conversation.Turn{Key: k, Version: version, Lease: old, InputID: "x",
			Append: []conversation.Message{user("stale")}, Enqueue: []conversation.Input{next}})
		lost(fmt.Sprintf("Save at version %d", version), err)
	}
	// A token is the holder's only if its owner is too.
	_, err = s.Begin(ctx, conversation.Lease{Key: k, Owner: ownerA, Token: cur.Token})
	lost("Begin with the current token and another owner", err)

	// Nothing was written: no conversation, the input still pending, with the one
	// attempt the former holder's first Begin counted, and nothing enqueued.
	if _, err := s.Load(ctx, k, 10); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("Load after the stale Saves: %v; want ErrNotFound", err)
	}
	mustBeginID(t, s, cur, "x", 2)
	mustSave(t, s, conversation.Turn{Key: k, Lease: cur, InputID: "x", Append: []conversation.Message{user("x")}})
	if in := mustBegin(t, s, cur); in != nil {
		t.Errorf("Begin after the Save = %+v; want nil (nothing enqueued by the stale Saves)", in)
	}
	mustRelease(t, s, cur, true)
}

// testRelease checks that Release keeps the lease while an input is pending and frees
// it, keeping the token, when none is; a freed lease is no longer the holder's.
func testRelease(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("release")
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	mustEnqueue(t, s, inputIn(k, "r1", "U1"))
	mustRelease(t, s, l, false)
	mustNotAcquire(t, s, k, ownerB)
	mustBeginID(t, s, l, "r1", 1)
	mustRelease(t, s, l, false) // begun is not done
	saved := mustSave(t, s, conversation.Turn{Key: k, Lease: l, InputID: "r1", Append: []conversation.Message{user("r1")}})
	if saved.Version != 1 {
		t.Errorf("Save with the lease = %+v; want version 1", saved)
	}
	// Inputs of other threads do not hold it.
	mustEnqueue(t, s, inputIn(thread("release-other"), "r2", "U1"))
	mustRelease(t, s, l, true)
	if _, err := s.Release(ctx, l); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("second Release: %v; want ErrLeaseLost", err)
	}
	if _, err := s.Begin(ctx, l); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Begin after Release: %v; want ErrLeaseLost", err)
	}
	if l2 := mustAcquire(t, s, k, ownerB, liveTTL); l2.Token != l.Token+1 {
		t.Errorf("Acquire after Release: token %d; want %d", l2.Token, l.Token+1)
	}
	if _, err := s.Release(ctx, conversation.Lease{}); err == nil {
		t.Error("Release of the zero lease succeeded; want an error")
	}
}

// testAbandon checks that Abandon frees a held lease whatever is pending: at once
// Orphans offers the thread, the former holder's Renew leaves it out, and another
// owner takes it with the next token, as a free thread (no previous owner), and runs
// the input the abandoned turn began, which counted its attempt. An Abandon with a
// lease that no longer holds the thread, or with another owner's name on the current
// token, fails with ErrLeaseLost and changes nothing: the holder keeps the lease and
// its signals.
func testAbandon(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("abandon")
	mustEnqueue(t, s, inputIn(k, "a1", "U1"))
	mustEnqueue(t, s, inputIn(k, "a2", "U1"))
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	mustBeginID(t, s, l, "a1", 1)
	mustRelease(t, s, l, false) // Release would keep it
	if err := s.Abandon(ctx, l); err != nil {
		t.Fatalf("Abandon: %v", err)
	}
	if got := mustOrphans(t, s, 10); !reflect.DeepEqual(got, []conversation.Key{k}) {
		t.Errorf("Orphans after Abandon = %v; want [%s]", got, k)
	}
	if got := mustRenew(t, s, ownerA, liveTTL); len(got) != 0 {
		t.Errorf("Renew of the owner that abandoned = %+v; want none", got)
	}
	cur, prev, ok, err := s.Acquire(ctx, k, ownerB, liveTTL)
	if err != nil || !ok || cur.Token != l.Token+1 || prev != "" {
		t.Fatalf("Acquire after Abandon = %+v, %q, %v, %v; want token %d, no previous owner", cur, prev, ok, err, l.Token+1)
	}

	stop := conversation.StopRequest{Target: "a1", By: "U2"}
	if err := s.Signal(ctx, k, stop); err != nil {
		t.Fatalf("Signal: %v", err)
	}
	for name, stale := range map[string]conversation.Lease{
		"the abandoned lease":                        l,
		"the current token with the former owner":    {Key: k, Owner: ownerA, Token: cur.Token},
		"the holder's name with the abandoned token": {Key: k, Owner: ownerB, Token: l.Token},
	} {
		if err := s.Abandon(ctx, stale); !errors.Is(err, conversation.ErrLeaseLost) {
			t.Errorf("Abandon with %s: %v; want ErrLeaseLost", name, err)
		}
	}
	if err := s.Abandon(ctx, conversation.Lease{}); err == nil || errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Abandon of the zero lease: %v; want an error other than ErrLeaseLost", err)
	}
	mustNotAcquire(t, s, k, ownerC)
	if got := mustOrphans(t, s, 10); len(got) != 0 {
		t.Errorf("Orphans after the stale Abandons = %v; want none", got)
	}
	want := map[conversation.Key]conversation.LeaseState{k: {Lease: cur, Stop: stop}}
	if got := mustRenew(t, s, ownerB, liveTTL); !reflect.DeepEqual(got, want) {
		t.Errorf("Renew of the holder after the stale Abandons = %+v; want %+v", got, want)
	}
	mustBeginID(t, s, cur, "a1", 2)
}

// testFinishLease checks Finish under a lease: the holder finishes its thread's
// inputs, and neither an input of another thread nor, once the lease is taken over,
// its own.
func testFinishLease(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k, other := thread("finish"), thread("finish-other")
	for _, in := range []conversation.Input{inputIn(k, "f1", "U1"), inputIn(k, "f2", "U1"), inputIn(other, "f3", "U1")} {
		mustEnqueue(t, s, in)
	}
	l := mustAcquire(t, s, k, ownerA, expiredTTL)
	if err := s.Finish(ctx, l, "f1", conversation.InputDropped); err != nil {
		t.Fatalf("Finish under the lease: %v", err)
	}
	if err := s.Finish(ctx, l, "f3", conversation.InputDropped); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Finish of another thread's input: %v; want ErrLeaseLost", err)
	}
	if err := s.Finish(ctx, l, "missing", conversation.InputDropped); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("Finish of a missing input: %v; want ErrNotFound", err)
	}
	cur, _ := takeOver(t, s, k, ownerB)
	if err := s.Finish(ctx, l, "f2", conversation.InputFailed); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Finish with a lease taken over: %v; want ErrLeaseLost", err)
	}
	mustBeginID(t, s, cur, "f2", 1) // still pending
	lo := mustAcquire(t, s, other, ownerB, liveTTL)
	mustBeginID(t, s, lo, "f3", 1) // still pending
}

// testRenew checks that Renew extends its owner's leases, expired ones included, and
// reports what was signalled to each: the newest input enqueued while it was held,
// the newest person's message among them, the last stop request.
func testRenew(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k1, k2, k3, free := thread("renew-1"), thread("renew-2"), thread("renew-3"), thread("renew-free")
	// Inputs enqueued before the lease is acquired, or while the thread is free, are
	// not signalled.
	mustEnqueue(t, s, inputIn(k1, "before", "U0"))
	l1 := mustAcquire(t, s, k1, ownerA, liveTTL)
	l2 := mustAcquire(t, s, k2, ownerA, expiredTTL)
	mustAcquire(t, s, k3, ownerB, liveTTL)
	mustEnqueue(t, s, inputIn(free, "free", "U0"))
	if err := s.Signal(ctx, free, conversation.StopRequest{Target: "free", By: "U0"}); err != nil {
		t.Fatalf("Signal of a free thread: %v", err)
	}

	got := mustRenew(t, s, ownerA, liveTTL)
	want := map[conversation.Key]conversation.LeaseState{k1: {Lease: l1}, k2: {Lease: l2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Renew = %+v; want %+v", got, want)
	}
	mustNotAcquire(t, s, k2, ownerB) // renewed, though it had expired

	// The holder runs each input as it comes (mustRun), which tells its Seq; running
	// an input changes no signal.
	mustRun(t, s, l1, "before")
	mustEnqueue(t, s, inputIn(k1, "m1", "U7"))
	m1 := mustRun(t, s, l1, "m1")
	want[k1] = conversation.LeaseState{Lease: l1, Newest: m1, Message: m1, MessageBy: "U7"}
	if got := mustRenew(t, s, ownerA, liveTTL); !reflect.DeepEqual(got, want) {
		t.Errorf("Renew after a message = %+v; want %+v", got, want)
	}

	// Another kind of input is newest, but not a message; a stop request is kept.
	click := conversation.Input{ID: "click", Key: k1, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: conversation.Action{Name: conversation.ActionStop}, UserID: "U8"}}
	mustEnqueue(t, s, click)
	if err := s.Signal(ctx, k2, conversation.StopRequest{Target: "in-2", By: "U9"}); err != nil {
		t.Fatalf("Signal: %v", err)
	}
	if err := s.Signal(ctx, k2, conversation.StopRequest{Target: "run:7", By: "U10"}); err != nil {
		t.Fatalf("Signal: %v", err)
	}
	want[k1] = conversation.LeaseState{Lease: l1, Newest: mustRun(t, s, l1, "click"), Message: m1, MessageBy: "U7"}
	want[k2] = conversation.LeaseState{Lease: l2, Stop: conversation.StopRequest{Target: "run:7", By: "U10"}}
	if got := mustRenew(t, s, ownerA, liveTTL); !reflect.DeepEqual(got, want) {
		t.Errorf("Renew after a click and stop requests = %+v; want %+v", got, want)
	}

	// What a held thread's Save enqueues is signalled too.
	next := conversation.Input{ID: "pipeline:renew", Kind: conversation.KindPipeline, Key: k2}
	mustSave(t, s, conversation.Turn{Key: k2, Lease: l2, Enqueue: []conversation.Input{next}})
	want[k2] = conversation.LeaseState{Lease: l2, Newest: mustRun(t, s, l2, next.ID),
		Stop: conversation.StopRequest{Target: "run:7", By: "U10"}}
	if got := mustRenew(t, s, ownerA, liveTTL); !reflect.DeepEqual(got, want) {
		t.Errorf("Renew after a Save that enqueues = %+v; want %+v", got, want)
	}

	// Acquire and Release clear the signals.
	mustRelease(t, s, l2, true)
	l2 = mustAcquire(t, s, k2, ownerA, liveTTL)
	lf := mustAcquire(t, s, free, ownerA, liveTTL)
	want[k2], want[free] = conversation.LeaseState{Lease: l2}, conversation.LeaseState{Lease: lf}
	if got := mustRenew(t, s, ownerA, liveTTL); !reflect.DeepEqual(got, want) {
		t.Errorf("Renew after Release and Acquire = %+v; want %+v", got, want)
	}
	if got := mustRenew(t, s, "nobody", liveTTL); len(got) != 0 {
		t.Errorf("Renew of an owner without leases = %+v; want none", got)
	}
}

// testRenewTakenOver checks that a lease taken over is missing from its former
// owner's Renew, and that Renew cannot take it back.
func testRenewTakenOver(t *testing.T, s conversation.Store) {
	k1, k2 := thread("taken-1"), thread("taken-2")
	mustAcquire(t, s, k1, ownerA, expiredTTL)
	l2 := mustAcquire(t, s, k2, ownerA, liveTTL)
	cur, prev := takeOver(t, s, k1, ownerB)
	if prev != ownerA {
		t.Errorf("previous owner = %q; want %q", prev, ownerA)
	}
	got := mustRenew(t, s, ownerA, liveTTL)
	if want := map[conversation.Key]conversation.LeaseState{k2: {Lease: l2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Renew of the former owner = %+v; want only %s", got, k2)
	}
	if got := mustRenew(t, s, ownerB, liveTTL); !reflect.DeepEqual(got, map[conversation.Key]conversation.LeaseState{k1: {Lease: cur}}) {
		t.Errorf("Renew of the new owner = %+v; want %s", got, k1)
	}
}

// testSignalClear checks that Signal with the zero StopRequest clears the request
// recorded before (its holder applied it): Renew reports an empty Stop, until the
// next request. Clearing a thread with no request, or one no lease holds, is no
// error.
func testSignalClear(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("signal-clear")
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	signal := func(r conversation.StopRequest) {
		t.Helper()
		if err := s.Signal(ctx, k, r); err != nil {
			t.Fatalf("Signal(%+v): %v", r, err)
		}
	}
	check := func(when string, stop conversation.StopRequest) {
		t.Helper()
		want := map[conversation.Key]conversation.LeaseState{k: {Lease: l, Stop: stop}}
		if got := mustRenew(t, s, ownerA, liveTTL); !reflect.DeepEqual(got, want) {
			t.Errorf("Renew %s = %+v; want %+v", when, got, want)
		}
	}
	stop := conversation.StopRequest{Target: "in-1", By: "U1"}
	signal(stop)
	check("after a stop request", stop)
	signal(conversation.StopRequest{})
	check("after the request was cleared", conversation.StopRequest{})
	signal(conversation.StopRequest{})
	check("after clearing no request", conversation.StopRequest{})
	again := conversation.StopRequest{Target: "run:2", By: "U2"}
	signal(again)
	check("after a new request", again)
	if err := s.Signal(ctx, thread("signal-free"), conversation.StopRequest{}); err != nil {
		t.Errorf("Signal clearing a thread no lease holds: %v", err)
	}
}

// testOrphans checks that Orphans lists the threads with pending inputs and no liveTTL
// lease (none ever, or an expired one), the thread with the oldest pending input
// first, up to limit.
func testOrphans(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	orphans := func(limit int) []string {
		t.Helper()
		keys, err := s.Orphans(ctx, limit)
		if err != nil {
			t.Fatalf("Orphans(%d): %v", limit, err)
		}
		out := []string{}
		for _, k := range keys {
			out = append(out, k.ThreadTS[len(thread("").ThreadTS):])
		}
		return out
	}
	if got := orphans(10); len(got) != 0 {
		t.Errorf("Orphans of an empty store = %v; want none", got)
	}
	for _, in := range []conversation.Input{
		inputIn(thread("expired"), "o1", "U1"),
		inputIn(thread("live"), "o2", "U1"),
		inputIn(thread("never"), "o3", "U1"), // answered below; o8 stays pending
		inputIn(thread("done"), "o4", "U1"),
		inputIn(thread("released"), "o5", "U1"),
		inputIn(thread("later"), "o6", "U1"),
		inputIn(thread("released"), "o7", "U1"),
		inputIn(thread("never"), "o8", "U1"),
	} {
		mustEnqueue(t, s, in)
	}
	mustAcquire(t, s, thread("expired"), ownerA, expiredTTL)
	mustAcquire(t, s, thread("live"), ownerA, liveTTL)
	if err := s.Finish(ctx, conversation.Lease{}, "o3", conversation.InputDone); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, conversation.Lease{}, "o4", conversation.InputDone); err != nil {
		t.Fatal(err)
	}
	// A worker that finished o5, kept the thread for o7 and died.
	l := mustAcquire(t, s, thread("released"), ownerB, expiredTTL)
	if err := s.Finish(ctx, l, "o5", conversation.InputDone); err != nil {
		t.Fatal(err)
	}
	mustRelease(t, s, l, false)

	for _, tc := range []struct {
		limit int
		want  []string
	}{
		{10, []string{"expired", "later", "released", "never"}},
		{2, []string{"expired", "later"}},
		{0, []string{}},
		{-1, []string{}},
	} {
		if got := orphans(tc.limit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Orphans(%d) = %v; want %v", tc.limit, got, tc.want)
		}
	}
	// Renewed, the lease is live again.
	mustRenew(t, s, ownerB, liveTTL)
	if got, want := orphans(10), []string{"expired", "later", "never"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Orphans after a renewal = %v; want %v", got, want)
	}
}

// testExistsPending checks that Exists holds for a thread with only a pending input
// (a mention whose first turn has not been saved), and only while it is pending.
func testExistsPending(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("exists")
	mustEnqueue(t, s, inputIn(k, "e1", "U1"))
	if ok, err := s.Exists(ctx, k); !ok || err != nil {
		t.Errorf("Exists with a pending input = %v, %v; want true, nil", ok, err)
	}
	if err := s.Finish(ctx, conversation.Lease{}, "e1", conversation.InputDropped); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Exists(ctx, k); ok || err != nil {
		t.Errorf("Exists with a dropped input only = %v, %v; want false, nil", ok, err)
	}
}

// testDeleteIdleLeases checks that DeleteIdle deletes the free lease rows of threads
// with nothing left, so that their tokens start again, and keeps the others: a thread
// that still has a conversation, and a held lease.
func testDeleteIdleLeases(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	idle, held := thread("idle"), thread("held")
	mustEnqueue(t, s, inputIn(idle, "d1", "U1"))
	l := mustAcquire(t, s, idle, ownerA, liveTTL)
	mustBeginID(t, s, l, "d1", 1)
	mustSave(t, s, conversation.Turn{Key: idle, Lease: l, InputID: "d1", Append: []conversation.Message{user("d1")}})
	mustRelease(t, s, l, true)
	mustEnqueue(t, s, inputIn(held, "d2", "U1"))
	lh := mustAcquire(t, s, held, ownerB, liveTTL)

	// Nothing idle yet: the free row stays, and the token goes on.
	if _, err := s.DeleteIdle(ctx, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	l = mustAcquire(t, s, idle, ownerA, liveTTL)
	if l.Token != 2 {
		t.Errorf("token after DeleteIdle with nothing idle = %d; want 2", l.Token)
	}
	mustRelease(t, s, l, true)

	// Everything idle: the conversation, the inputs and the free row go; the held row
	// stays.
	if n, err := s.DeleteIdle(ctx, time.Now().Add(time.Hour)); n != 1 || err != nil {
		t.Fatalf("DeleteIdle = %d, %v; want 1, nil", n, err)
	}
	if l = mustAcquire(t, s, idle, ownerA, liveTTL); l.Token != 1 {
		t.Errorf("token after DeleteIdle = %d; want 1 (a new row)", l.Token)
	}
	mustNotAcquire(t, s, held, ownerA)
	mustRelease(t, s, lh, true)
}

// testStorableText checks that NUL characters and invalid UTF-8, which PostgreSQL's
// TEXT and JSONB cannot hold, in an input's message, a message's text, user id and
// Slack ts, a state string and a meta string are stored repaired in both backends
// (NUL dropped, each byte that is not UTF-8 U+FFFD), and that a JSON text that only
// looks like the escape \u0000 is kept.
func testStorableText(t *testing.T, s conversation.Store) {
	const (
		bad      = "a\x00b\xffc\xfe\xfdd\x00"
		repaired = "ab\uFFFDc\uFFFD\uFFFDd"
	)
	k := thread("text")
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	in := inputIn(k, "t1", "U\x001")
	in.Message.Text = bad
	in.EventID = "Ev\x00"
	mustEnqueue(t, s, in)
	got := mustBeginID(t, s, l, "t1", 1)
	if got.Message == nil || got.Message.Text != repaired || got.Message.UserID != "U1" || got.EventID != "Ev" {
		t.Errorf("input's message = %+v, event %q; want text %q, user U1, event Ev", got.Message, got.EventID, repaired)
	}
	if st := mustRenew(t, s, ownerA, liveTTL)[k]; st.MessageBy != "U1" {
		t.Errorf("Renew: message by %q; want U1", st.MessageBy)
	}

	m := user(bad)
	m.UserID, m.SlackTS = "U\x002", "1.\xff3"
	m.Meta = json.RawMessage("{\"note\": \"a\\u0000b\xffc\", \"kept\": \"\\\\u0000\", \"k\\u0000ey\": [\"\\u0000\"], \"pair\": \"\\ud83d\\ude00\", \"lone\": \"\\ud83dx\"}")
	state := conversation.State{Mode: conversation.ModeAssistant, Summary: bad, Entities: []conversation.Entity{{ID: bad}}}
	mustSave(t, s, conversation.Turn{Key: k, Lease: l, InputID: "t1", State: state, Append: []conversation.Message{m}})

	cp := mustLoad(t, s, k, 10)
	if c := cp.Conversation.State; c.Summary != repaired || len(c.Entities) != 1 || c.Entities[0].ID != repaired {
		t.Errorf("state = %+v; want the summary and entity id %q", c, repaired)
	}
	if len(cp.Messages) != 1 {
		t.Fatalf("loaded %d messages; want 1", len(cp.Messages))
	}
	gm := cp.Messages[0]
	if gm.Text != repaired || gm.UserID != "U2" || gm.SlackTS != "1.\uFFFD3" {
		t.Errorf("message = text %q, user %q, ts %q; want %q, U2, %q", gm.Text, gm.UserID, gm.SlackTS, repaired, "1.\uFFFD3")
	}
	wantMeta := json.RawMessage(`{"note": "ab\ufffdc", "kept": "\\u0000", "key": [""], "pair": "😀", "lone": "\ufffdx"}`)
	if !jsonEqual(t, gm.Meta, wantMeta) {
		t.Errorf("meta = %s; want %s", gm.Meta, wantMeta)
	}
}
