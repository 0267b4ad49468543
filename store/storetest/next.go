package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// mustNext runs Next with l and fails the test unless it returns no error and, when
// id is "", no input and released want; otherwise input id, pending, with attempts,
// and released false.
func mustNext(t testing.TB, s conversation.Store, l conversation.Lease, id string, attempts int, want bool) *conversation.Input {
	t.Helper()
	in, released, err := s.Next(context.Background(), l)
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
	if _, _, err := s.Next(ctx, l); !errors.Is(err, conversation.ErrLeaseLost) {
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
	if _, _, err := s.Next(ctx, conversation.Lease{}); err == nil {
		t.Error("Next with the zero lease succeeded; want an error")
	}
}
