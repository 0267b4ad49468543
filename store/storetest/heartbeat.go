package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// The cases of Run for the holder's heartbeat (Renew), the Stop request it carries
// (Signal) and the sweep of threads nobody holds (Orphans).

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
