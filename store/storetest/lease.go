package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// The cases of Run for leases (docs/architecture.md, "Durable turns"). A lease that
// must have expired is acquired with a ttl under a millisecond, which leases round
// down to 0: it has expired when it is written, and the next Acquire by another owner
// takes it (takeOver polls, in case a clock stepped back), with no sleep.

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
// Next, Finish, Release and Save fail with ErrLeaseLost, not ErrConflict, and write nothing.
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
	_, _, err = s.Next(ctx, old, 0)
	lost("Next", err)
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
	// The conversation now exists at version 1: a stale Save at that very version, and
	// one that would create it again, are refused all the same.
	for _, version := range []int64{1, 0} {
		_, err = s.Save(ctx, conversation.Turn{Key: k, Version: version, Lease: old, Append: []conversation.Message{user("stale")}})
		lost(fmt.Sprintf("Save at version %d of a conversation at version 1", version), err)
	}
	if cp, err := s.Load(ctx, k, 10); err != nil || cp.Conversation.Version != 1 || len(cp.Messages) != 1 {
		t.Errorf("Load after the stale Saves: %+v, %v; want version 1 with its one message", cp, err)
	}
	_, _, err = s.Next(ctx, old, 0)
	lost("Next with nothing pending", err) // and it frees nothing: cur keeps the lease
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

// mustNext runs Next with l and fails the test unless it returns no error and, when
// id is "", no input and released want; otherwise input id, pending, with attempts,
// and released false.
func mustNext(t testing.TB, s conversation.Store, l conversation.Lease, id string, attempts int, want bool) *conversation.Input {
	t.Helper()
	in, released, err := s.Next(context.Background(), l, 0)
	switch {
	case err != nil:
		t.Fatalf("Next(%s, token %d): %v", l.Key, l.Token, err)
	case id == "" && (in != nil || released != want):
		t.Fatalf("Next(%s) = %+v, released %v; want no input, released %v", l.Key, in, released, want)
	case id != "" && (in == nil || in.ID != id || in.Attempts != attempts || in.Status != conversation.InputPending ||
		in.Key != l.Key || released):
		t.Fatalf("Next(%s) = %+v, released %v; want pending input %s with %d attempts, not released", l.Key, in, released, id, attempts)
	}
	return in
}

// testNext checks Next, Begin and Release in one call: it begins a thread's inputs in
// Seq order, counting an attempt each time and finishing none, keeps the lease while an
// input is pending, and frees it, keeping the token, when none is (inputs of other
// threads do not count); a freed lease is no longer the holder's.
func testNext(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("next")
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	mustEnqueue(t, s, inputIn(k, "n1", "U1"))
	mustEnqueue(t, s, inputIn(thread("next-other"), "o1", "U1"))
	mustEnqueue(t, s, inputIn(k, "n2", "U1"))
	mustNext(t, s, l, "n1", 1, false)
	mustNext(t, s, l, "n1", 2, false) // begun is not done
	mustNotAcquire(t, s, k, ownerB)
	mustSave(t, s, conversation.Turn{Key: k, Lease: l, InputID: "n1", Append: []conversation.Message{user("n1")}})
	mustNext(t, s, l, "n2", 1, false)
	if err := s.Finish(ctx, l, "n2", conversation.InputDone); err != nil {
		t.Fatalf("Finish(n2): %v", err)
	}
	mustNext(t, s, l, "", 0, true)
	if _, _, err := s.Next(ctx, l, 0); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Next after it freed the lease: %v; want ErrLeaseLost", err)
	}
	if _, err := s.Release(ctx, l); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Release after Next freed the lease: %v; want ErrLeaseLost", err)
	}
	l2 := mustAcquire(t, s, k, ownerB, liveTTL)
	if l2.Token != l.Token+1 {
		t.Errorf("Acquire after Next freed the lease: token %d; want %d", l2.Token, l.Token+1)
	}
	mustNext(t, s, l2, "", 0, true) // a lease with nothing pending is freed at once
	if _, _, err := s.Next(ctx, conversation.Lease{}, 0); err == nil {
		t.Error("Next with the zero lease succeeded; want an error")
	}
}

// mustSaveRelease saves turn with Turn.Release and fails the test unless it succeeds
// and frees the lease exactly when want says.
func mustSaveRelease(t testing.TB, s conversation.Store, turn conversation.Turn, want bool) conversation.Saved {
	t.Helper()
	turn.Release = true
	saved := mustSave(t, s, turn)
	if saved.Released != want {
		t.Fatalf("Save of %s with Release (input %q) = %+v; want released %v", turn.Key, turn.InputID, saved, want)
	}
	return saved
}

// testSaveRelease checks Save with Turn.Release: it frees the lease, keeping the
// token, only when no input of the thread is left pending once the save's input (and
// those merged into it) are done; an input the save enqueues, or one still pending,
// keeps it, as does a save without Release. Without a lease there is nothing to free,
// and a lease taken over fails the save with ErrLeaseLost, freeing nothing.
func testSaveRelease(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("save-release")
	mustEnqueue(t, s, inputIn(k, "s1", "U1"))
	mustEnqueue(t, s, inputIn(k, "s2", "U1"))
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	mustBeginID(t, s, l, "s1", 1)
	saved := mustSaveRelease(t, s, conversation.Turn{Key: k, Lease: l, InputID: "s1", Append: []conversation.Message{user("s1")}}, false)
	mustNotAcquire(t, s, k, ownerB)
	mustBeginID(t, s, l, "s2", 1)
	follow := inputIn(k, "s3", "U1")
	saved = mustSaveRelease(t, s, conversation.Turn{Key: k, Version: saved.Version, Lease: l, InputID: "s2", Enqueue: []conversation.Input{follow}}, false)
	mustBeginID(t, s, l, "s3", 1)
	saved = mustSave(t, s, conversation.Turn{Key: k, Version: saved.Version, Lease: l, InputID: "s3"}) // no Release
	if saved.Released {
		t.Fatalf("Save without Release = %+v; want not released", saved)
	}
	mustEnqueue(t, s, inputIn(k, "s4", "U1"))
	mustEnqueue(t, s, inputIn(k, "s5", "U1"))
	mustEnqueue(t, s, inputIn(thread("save-release-other"), "o1", "U1")) // another thread's does not hold it
	mustBeginID(t, s, l, "s4", 1)
	mustSaveRelease(t, s, conversation.Turn{Key: k, Version: saved.Version, Lease: l, InputID: "s4", Merged: []string{"s5"},
		Append: []conversation.Message{user("s4"), user("s5")}}, true)
	if _, err := s.Begin(ctx, l); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Begin after the Save freed the lease: %v; want ErrLeaseLost", err)
	}
	if got := mustRenew(t, s, ownerA, liveTTL); len(got) != 0 {
		t.Errorf("Renew after the Save freed the lease = %+v; want none", got)
	}
	cur, prev, ok, err := s.Acquire(ctx, k, ownerB, liveTTL)
	if err != nil || !ok || cur.Token != l.Token+1 || prev != "" {
		t.Fatalf("Acquire after the Save freed the lease = %+v, %q, %v, %v; want token %d, no previous owner", cur, prev, ok, err, l.Token+1)
	}
	if _, err := s.Save(ctx, conversation.Turn{Key: k, Version: 4, Lease: l, Release: true}); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Save with Release and a lease taken over: %v; want ErrLeaseLost", err)
	}
	mustNotAcquire(t, s, k, ownerC) // the holder's lease stays
	mustSaveRelease(t, s, conversation.Turn{Key: thread("save-release-nolease"), Append: []conversation.Message{user("x")}}, false)
	mustSaveRelease(t, s, conversation.Turn{Key: k, Version: 4, Lease: cur}, true)
}

// testAcquireBegin checks AcquireBegin, Acquire and Begin in one call: it takes a free
// thread and begins its first pending input, counting an attempt; takes nothing, and
// begins nothing, while another owner's live lease holds the thread; takes an expired
// lease over, with the next token and the former owner, beginning the input its
// holder left pending, whose later Save then fails; and takes a thread with nothing
// pending, beginning nothing (Next then frees it). Of concurrent calls, exactly one
// takes the thread and begins the input.
func testAcquireBegin(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("acquire-begin")
	mustEnqueue(t, s, inputIn(k, "ab1", "U1"))
	mustEnqueue(t, s, inputIn(k, "ab2", "U1"))
	l, prev, in, ok, err := s.AcquireBegin(ctx, k, ownerA, expiredTTL)
	if err != nil || !ok || l.Key != k || l.Owner != ownerA || l.Token != 1 || prev != "" ||
		in == nil || in.ID != "ab1" || in.Attempts != 1 || in.Status != conversation.InputPending || in.Key != k {
		t.Fatalf("AcquireBegin of a free thread = %+v, %q, %+v, %v, %v; want token 1 and input ab1 with 1 attempt", l, prev, in, ok, err)
	}
	cur, prev, in, ok, err := s.AcquireBegin(ctx, k, ownerB, liveTTL)
	for deadline := time.Now().Add(10 * time.Second); err == nil && !ok && time.Now().Before(deadline); {
		cur, prev, in, ok, err = s.AcquireBegin(ctx, k, ownerB, liveTTL) // only a clock that stepped back waits
	}
	if err != nil || !ok || cur.Token != 2 || prev != ownerA || in == nil || in.ID != "ab1" || in.Attempts != 2 {
		t.Fatalf("AcquireBegin of an expired lease = %+v, %q, %+v, %v, %v; want token 2 from %s, input ab1 with 2 attempts", cur, prev, in, ok, err, ownerA)
	}
	if _, err := s.Save(ctx, conversation.Turn{Key: k, Lease: l, InputID: "ab1"}); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Save with the lease taken over: %v; want ErrLeaseLost", err)
	}
	if l, prev, in, ok, err := s.AcquireBegin(ctx, k, ownerC, liveTTL); err != nil || ok || l.Held() || prev != "" || in != nil {
		t.Fatalf("AcquireBegin of a held thread = %+v, %q, %+v, %v, %v; want nothing", l, prev, in, ok, err)
	}
	mustSave(t, s, conversation.Turn{Key: k, Lease: cur, InputID: "ab1"})
	mustNext(t, s, cur, "ab2", 1, false) // ownerC's call began nothing
	if err := s.Finish(ctx, cur, "ab2", conversation.InputDone); err != nil {
		t.Fatalf("Finish(ab2): %v", err)
	}
	mustNext(t, s, cur, "", 0, true)
	if l, _, in, ok, err := s.AcquireBegin(ctx, k, ownerA, liveTTL); err != nil || !ok || l.Token != 3 || in != nil {
		t.Fatalf("AcquireBegin with nothing pending = %+v, %+v, %v, %v; want token 3, no input", l, in, ok, err)
	} else {
		mustNext(t, s, l, "", 0, true)
	}
	if _, _, _, _, err := s.AcquireBegin(ctx, conversation.Key{}, ownerA, liveTTL); err == nil {
		t.Error("AcquireBegin of the zero key succeeded; want an error")
	}

	rk := thread("acquire-begin-race")
	mustEnqueue(t, s, inputIn(rk, "r1", "U1"))
	var (
		mu    sync.Mutex
		begun []*conversation.Input
	)
	wins, errs := race(8, func(i int) error {
		_, _, in, ok, err := s.AcquireBegin(ctx, rk, fmt.Sprintf("worker-%d", i), liveTTL)
		switch {
		case err != nil:
			return err
		case !ok:
			return errNotAcquired
		}
		mu.Lock()
		defer mu.Unlock()
		begun = append(begun, in)
		return nil
	})
	if wins != 1 || len(begun) != 1 || begun[0] == nil || begun[0].ID != "r1" || begun[0].Attempts != 1 {
		t.Fatalf("%d of 8 concurrent AcquireBegins took the thread, beginning %+v; want 1, beginning r1 once (others: %v)", wins, begun, errs)
	}
	for _, err := range errs {
		if !errors.Is(err, errNotAcquired) {
			t.Errorf("a losing AcquireBegin failed with %v; want ok false", err)
		}
	}
}

// testAcquireBeginAgain checks AcquireBegin called again after its answer was lost:
// it takes the caller's own lease again, with the next token (which fences the lease
// lost track of), and returns the input the lost call began without counting another
// attempt (the lost call counted it); an input the lost call did not begin (none was
// pending then) counts its first attempt; and a lease of another owner taken over
// counts the new holder's attempt of the input its former holder began.
func testAcquireBeginAgain(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("acquire-begin-again")
	mustEnqueue(t, s, inputIn(k, "aa1", "U1"))
	l, _, in, ok, err := s.AcquireBegin(ctx, k, ownerA, liveTTL)
	if err != nil || !ok || in == nil || in.ID != "aa1" || in.Attempts != 1 {
		t.Fatalf("AcquireBegin of a free thread = %+v, %+v, %v, %v; want input aa1 with 1 attempt", l, in, ok, err)
	}
	again, prev, in, ok, err := s.AcquireBegin(ctx, k, ownerA, liveTTL)
	if err != nil || !ok || again.Token != l.Token+1 || prev != ownerA || in == nil || in.ID != "aa1" || in.Attempts != 1 {
		t.Fatalf("AcquireBegin of the caller's own lease again = %+v, %q, %+v, %v, %v; want token %d from itself, input aa1 with its 1 attempt",
			again, prev, in, ok, err, l.Token+1)
	}
	if _, err := s.Save(ctx, conversation.Turn{Key: k, Lease: l, InputID: "aa1"}); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Errorf("Save with the lease its owner took again: %v; want ErrLeaseLost", err)
	}
	mustSave(t, s, conversation.Turn{Key: k, Lease: again, InputID: "aa1"})
	if l, prev, in, ok, err := s.AcquireBegin(ctx, k, ownerA, liveTTL); err != nil || !ok || prev != ownerA || in != nil {
		t.Fatalf("AcquireBegin of the caller's own lease, nothing pending = %+v, %q, %+v, %v, %v; want the lease, no input", l, prev, in, ok, err)
	}
	mustEnqueue(t, s, inputIn(k, "aa2", "U1"))
	for i, ttl := range []time.Duration{liveTTL, expiredTTL} {
		if l, prev, in, ok, err := s.AcquireBegin(ctx, k, ownerA, ttl); err != nil || !ok || prev != ownerA || in == nil || in.ID != "aa2" || in.Attempts != 1 {
			t.Fatalf("AcquireBegin %d of the caller's own lease, aa2 enqueued since = %+v, %q, %+v, %v, %v; want input aa2 with 1 attempt", i+1, l, prev, in, ok, err)
		}
	}
	cur, prev, in, ok, err := s.AcquireBegin(ctx, k, ownerB, liveTTL)
	for deadline := time.Now().Add(10 * time.Second); err == nil && !ok && time.Now().Before(deadline); {
		cur, prev, in, ok, err = s.AcquireBegin(ctx, k, ownerB, liveTTL) // only a clock that stepped back waits
	}
	if err != nil || !ok || prev != ownerA || in == nil || in.ID != "aa2" || in.Attempts != 2 {
		t.Fatalf("AcquireBegin of %s's expired lease = %+v, %q, %+v, %v, %v; want input aa2 with 2 attempts", ownerA, cur, prev, in, ok, err)
	}
}

// testNextAgain checks Next called again with the same call number after its answer
// was lost: it returns the input that call began without counting another attempt;
// the holder's next call (a turn of it failed) counts one, and so does a call of the
// same number under another lease of the thread, or an unnumbered one (0).
func testNextAgain(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("next-again")
	mustEnqueue(t, s, inputIn(k, "na1", "U1"))
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	for _, c := range []struct {
		what     string
		call     int64
		attempts int
	}{
		{"call 1", 1, 1},
		{"call 1 again, its answer lost", 1, 1},
		{"call 1 a third time", 1, 1},
		{"call 2, after a turn of na1 failed", 2, 2},
		{"call 2 again", 2, 2},
		{"an unnumbered call", 0, 3},
		{"another unnumbered call", 0, 4},
	} {
		in, released, err := s.Next(ctx, l, c.call)
		if err != nil || released || in == nil || in.ID != "na1" || in.Attempts != c.attempts {
			t.Fatalf("Next, %s = %+v, released %v, %v; want input na1 with %d attempts", c.what, in, released, err, c.attempts)
		}
	}
	again := mustAcquire(t, s, k, ownerA, liveTTL) // the same owner, another token
	if in, _, err := s.Next(ctx, again, 2); err != nil || in == nil || in.ID != "na1" || in.Attempts != 5 {
		t.Fatalf("Next numbered 2 under another lease = %+v, %v; want input na1 with 5 attempts", in, err)
	}
	mustSave(t, s, conversation.Turn{Key: k, Lease: again, InputID: "na1"})
	if in, released, err := s.Next(ctx, again, 3); err != nil || in != nil || !released {
		t.Fatalf("Next with nothing pending = %+v, released %v, %v; want the lease freed", in, released, err)
	}
}
