package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// testCountPending checks CountPending: a thread's pending inputs of every kind and a
// person's pending inputs across threads (messages, clicks and commands alike, in
// their workspace only) count until they are done, dropped or failed, or saved by a
// turn; each count stops at the limit; an empty user counts nothing; a limit that is
// not positive is an error.
func testCountPending(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	a, b := thread("count-a"), thread("count-b")
	other := b
	other.TeamID = "T0OTHER"
	click := func(k conversation.Key, id, user string) conversation.Input {
		return conversation.Input{ID: id, Key: k, Kind: conversation.KindAction,
			Action: &conversation.ActionInput{UserID: user, Action: conversation.Action{Name: "approve"}}}
	}
	command := func(k conversation.Key, id, user string) conversation.Input {
		return conversation.Input{ID: id, Key: k, Kind: conversation.KindCommand,
			Command: &conversation.CommandInput{UserID: user, Line: "status"}}
	}
	pipeline := conversation.Input{ID: "p1", Key: a, Kind: conversation.KindPipeline}
	for _, in := range []conversation.Input{
		inputIn(a, "m1", "U1"), inputIn(a, "m2", "U1"), inputIn(a, "m3", "U2"), click(a, "c1", "U1"), pipeline,
		inputIn(b, "m4", "U1"), command(b, "k1", "U1"), inputIn(other, "m5", "U1"),
	} {
		mustEnqueue(t, s, in)
	}
	count := func(k conversation.Key, user string, limit int) conversation.PendingCounts {
		t.Helper()
		c, err := s.CountPending(ctx, k, user, limit)
		if err != nil {
			t.Fatalf("CountPending(%s, %q, %d): %v", k, user, limit, err)
		}
		return c
	}
	for _, tt := range []struct {
		name  string
		key   conversation.Key
		user  string
		limit int
		want  conversation.PendingCounts
	}{
		{"thread and person", a, "U1", 100, conversation.PendingCounts{Thread: 5, User: 5}},
		{"another person", a, "U2", 100, conversation.PendingCounts{Thread: 5, User: 1}},
		{"no person", a, "", 100, conversation.PendingCounts{Thread: 5, User: 0}},
		{"unknown person", b, "U9", 100, conversation.PendingCounts{Thread: 2, User: 0}},
		{"limited", a, "U1", 3, conversation.PendingCounts{Thread: 3, User: 3}},
		{"other workspace", other, "U1", 100, conversation.PendingCounts{Thread: 1, User: 1}},
	} {
		if got := count(tt.key, tt.user, tt.limit); got != tt.want {
			t.Errorf("%s: CountPending = %+v; want %+v", tt.name, got, tt.want)
		}
	}

	// Finished inputs no longer count; a running input does until its turn saves.
	if err := s.Finish(ctx, conversation.Lease{}, "m1", conversation.InputDropped); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, conversation.Lease{}, "k1", conversation.InputFailed); err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, s, a, ownerA, liveTTL)
	mustBeginID(t, s, l, "m2", 1)
	if got, want := count(a, "U1", 100), (conversation.PendingCounts{Thread: 4, User: 3}); got != want {
		t.Errorf("after two finished, one begun: CountPending = %+v; want %+v", got, want)
	}
	mustSave(t, s, conversation.Turn{Key: a, Lease: l, InputID: "m2", Append: []conversation.Message{user("m2")}})
	if got, want := count(a, "U1", 100), (conversation.PendingCounts{Thread: 3, User: 2}); got != want {
		t.Errorf("after a saved turn: CountPending = %+v; want %+v", got, want)
	}

	if _, err := s.CountPending(ctx, a, "U1", 0); err == nil {
		t.Error("CountPending with limit 0 succeeded; want an error")
	}
}

// BenchCountPending measures CountPending, Submit's one query before it stores an
// input, in a store holding 10,000 pending inputs: 1,000 threads of 10, by 100 people,
// with the thread and the person asked about among them, and 10,000 finished inputs.
// With the counts capped at the limit (20), the time should not depend on how many
// inputs are stored. open must return a new, empty store and close it in b.Cleanup.
func BenchCountPending(b *testing.B, open func(b *testing.B) conversation.Store) {
	s := open(b)
	ctx := b.Context()
	for i := range 20_000 {
		k := thread(fmt.Sprintf("bench%d", i/10%1000))
		id := fmt.Sprintf("b%d", i)
		mustEnqueue(b, s, inputIn(k, id, fmt.Sprintf("U%d", i%100)))
		if i >= 10_000 {
			if err := s.Finish(ctx, conversation.Lease{}, id, conversation.InputDone); err != nil {
				b.Fatal(err)
			}
		}
	}
	k := thread("bench7")
	b.ReportAllocs()
	for b.Loop() {
		c, err := s.CountPending(ctx, k, "U7", 20)
		if err != nil {
			b.Fatal(err)
		}
		if c.Thread != 10 || c.User != 20 {
			b.Fatalf("CountPending = %+v; want 10 and 20 (capped)", c)
		}
	}
}

// testEnqueued checks Enqueued: an input enqueued is found while pending and once
// finished; an id never enqueued is not.
func testEnqueued(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("enqueued")
	enqueued := func(id string) bool {
		t.Helper()
		ok, err := s.Enqueued(ctx, id)
		if err != nil {
			t.Fatalf("Enqueued(%s): %v", id, err)
		}
		return ok
	}
	if enqueued("enq-1") {
		t.Fatal("an id never enqueued was found")
	}
	mustEnqueue(t, s, inputIn(k, "enq-1", "U1"))
	if !enqueued("enq-1") {
		t.Fatal("a pending input was not found")
	}
	if err := s.Finish(ctx, conversation.Lease{}, "enq-1", conversation.InputDone); err != nil {
		t.Fatal(err)
	}
	if !enqueued("enq-1") || enqueued("enq-2") {
		t.Error("a finished input was not found, or another id was")
	}
}
