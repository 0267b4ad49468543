package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// The cases of Run for DeleteIdle: conversations, inputs and free leases.

func testDeleteIdle(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	old, fresh := key, otherKey(1)
	mustSave(t, s, conversation.Turn{Key: old, Append: []conversation.Message{user("old 1"), assistant("old 2")}})
	oldInput := input("old")
	oldInput.CreatedAt = time.Now().Add(-48 * time.Hour)
	mustEnqueue(t, s, oldInput)

	cutoff := mustLoad(t, s, old, 0).Conversation.UpdatedAt.Add(time.Microsecond)
	for time.Now().Before(cutoff.Add(time.Millisecond)) {
		time.Sleep(time.Millisecond)
	}
	mustSave(t, s, conversation.Turn{Key: fresh, Append: []conversation.Message{user("fresh")}})
	mustEnqueue(t, s, input("fresh"))

	n, err := s.DeleteIdle(ctx, cutoff)
	if err != nil || n != 1 {
		t.Fatalf("DeleteIdle = %d, %v; want 1, nil", n, err)
	}
	if _, err := s.Load(ctx, old, 10); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("Load of a deleted conversation: %v; want ErrNotFound", err)
	}
	if cp := mustLoad(t, s, fresh, 10); !reflect.DeepEqual(texts(cp.Messages), []string{"fresh"}) {
		t.Errorf("kept conversation's messages = %q; want [fresh]", texts(cp.Messages))
	}
	// Of the thread's inputs, the old one is gone and the fresh one is next.
	mustBeginID(t, s, mustAcquire(t, s, key, ownerA, liveTTL), "fresh", 1)
	// The thread can start again: a new conversation, numbered from 1, without the old messages.
	saved := mustSave(t, s, conversation.Turn{Key: old, Append: []conversation.Message{user("new")}})
	if saved.FirstSeq != 1 {
		t.Errorf("re-created conversation's first seq = %d; want 1", saved.FirstSeq)
	}
	if cp := mustLoad(t, s, old, 10); !reflect.DeepEqual(texts(cp.Messages), []string{"new"}) {
		t.Errorf("re-created conversation's messages = %q; want [new]", texts(cp.Messages))
	}
	if n, err := s.DeleteIdle(ctx, time.Now().Add(-time.Hour)); n != 0 || err != nil {
		t.Errorf("DeleteIdle with nothing idle = %d, %v; want 0, nil", n, err)
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
