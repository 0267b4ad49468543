package storetest

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// The cases of Run for edits and deletions (docs/architecture.md, "Edits and
// deletions"): Amend of a waiting input, and a Save's Rewrite of stored messages.

// testAmend checks that Amend changes a pending input's text, or drops it, only
// before its turn began; and that of two replicas racing Begin and Amend on one
// input, either the amend lands before the turn (which then gets the new text) or
// it is refused.
func testAmend(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	in := input("msg:T0001:C0001:1700000000.000200")
	mustEnqueue(t, s, in)
	if ok, err := s.Amend(ctx, in.ID, "hello edited", false); !ok || err != nil {
		t.Fatalf("Amend of a waiting input = %v, %v; want true, nil", ok, err)
	}
	l := mustAcquire(t, s, key, ownerA, liveTTL)
	got := mustBeginID(t, s, l, in.ID, 1)
	want := *in.Message
	want.Text = "hello edited"
	if !reflect.DeepEqual(*got.Message, want) {
		t.Errorf("begun message %+v; want %+v (only the text amended)", *got.Message, want)
	}
	if ok, err := s.Amend(ctx, in.ID, "too late", false); ok || err != nil {
		t.Errorf("Amend of a begun input = %v, %v; want false, nil", ok, err)
	}
	if ok, err := s.Amend(ctx, in.ID, "", true); ok || err != nil {
		t.Errorf("drop of a begun input = %v, %v; want false, nil", ok, err)
	}
	if ok, err := s.Amend(ctx, "msg:none", "x", false); ok || err != nil {
		t.Errorf("Amend of no input = %v, %v; want false, nil", ok, err)
	}

	// A dropped input is never begun; the thread's next one is.
	gone, next := input("msg:T0001:C0001:1700000000.000300"), input("msg:T0001:C0001:1700000000.000400")
	mustEnqueue(t, s, gone)
	mustEnqueue(t, s, next)
	if ok, err := s.Amend(ctx, gone.ID, "", true); !ok || err != nil {
		t.Fatalf("drop of a waiting input = %v, %v; want true, nil", ok, err)
	}
	if err := s.Finish(ctx, l, in.ID, conversation.InputDone); err != nil {
		t.Fatal(err)
	}
	mustBeginID(t, s, l, next.ID, 1)

	// Begin and Amend racing: whatever the order, the begun text is the one amended
	// exactly when Amend reports it did.
	for i := range 20 {
		k := otherKey(100 + i)
		race := input("race")
		race.ID, race.Key = race.ID+k.ThreadTS, k
		mustEnqueue(t, s, race)
		rl := mustAcquire(t, s, k, ownerB, liveTTL)
		var (
			wg      sync.WaitGroup
			amended bool
			begun   *conversation.Input
			aerr    error
			berr    error
		)
		wg.Add(2)
		go func() { defer wg.Done(); amended, aerr = s.Amend(ctx, race.ID, "raced", false) }()
		go func() { defer wg.Done(); begun, berr = s.Begin(ctx, rl) }()
		wg.Wait()
		if aerr != nil || berr != nil || begun == nil {
			t.Fatalf("race %d: Amend %v, Begin %v, %v", i, aerr, begun, berr)
		}
		if (begun.Message.Text == "raced") != amended {
			t.Fatalf("race %d: Amend reported %v, the turn got %q", i, amended, begun.Message.Text)
		}
	}
	raceNextDrop(t, s)
}

// raceNextDrop races Next and a drop (Amend with drop) of a thread's one input: either
// the drop lands first and Next begins nothing (and frees the lease, or keeps it when
// it saw the input pending and the next Next frees it), or Next begins the input and
// the drop is refused.
func raceNextDrop(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	for i := range 20 {
		k := otherKey(200 + i)
		race := input("race-drop")
		race.ID, race.Key = race.ID+k.ThreadTS, k
		mustEnqueue(t, s, race)
		rl := mustAcquire(t, s, k, ownerB, liveTTL)
		var (
			wg                sync.WaitGroup
			dropped, released bool
			begun             *conversation.Input
			aerr, nerr        error
		)
		wg.Go(func() { dropped, aerr = s.Amend(ctx, race.ID, "", true) })
		wg.Go(func() { begun, released, nerr = s.Next(ctx, rl, 0) })
		wg.Wait()
		switch {
		case aerr != nil || nerr != nil:
			t.Fatalf("race %d: Amend %v, Next %v", i, aerr, nerr)
		case dropped == (begun != nil):
			t.Fatalf("race %d: the drop reported %v, Next began %+v", i, dropped, begun)
		case dropped && !released:
			mustNext(t, s, rl, "", 0, true)
		}
	}
}

// testRewrite checks that a Save's Rewrite changes the stored text of the messages
// posted at a Slack ts, and clears their meta, in that conversation only.
func testRewrite(t *testing.T, s conversation.Store) {
	q, a := user("my password is hunter2"), assistant("Noted.")
	q.SlackTS, a.SlackTS = "1700000000.000200", "1700000000.000300"
	a.Meta = []byte(`{"tools":["x"]}`)
	saved := mustSave(t, s, conversation.Turn{Key: key, Append: []conversation.Message{q, a}})
	o := q
	mustSave(t, s, conversation.Turn{Key: otherKey(1), Append: []conversation.Message{o}})
	later := user("next")
	mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, Append: []conversation.Message{later},
		Rewrite: []conversation.MessageRewrite{{SlackTS: q.SlackTS, Text: "(message deleted)"}, {SlackTS: a.SlackTS, Text: "Noted again."}}})
	cp := mustLoad(t, s, key, 100)
	if got, want := texts(cp.Messages), []string{"(message deleted)", "Noted again.", "next"}; !reflect.DeepEqual(got, want) {
		t.Errorf("texts = %q; want %q", got, want)
	}
	if cp.Messages[1].Meta != nil {
		t.Errorf("rewritten message's meta %s; want none", cp.Messages[1].Meta)
	}
	if got := texts(mustLoad(t, s, otherKey(1), 100).Messages); !reflect.DeepEqual(got, []string{q.Text}) {
		t.Errorf("other conversation's texts = %q; want it untouched", got)
	}
}
