package storetest

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// The cases of Run for EnqueueBatch: the intake's group commit.

// testEnqueueBatch checks that a batch stores each of its new inputs once, reports
// its duplicates (of an input stored before, and within the batch), and keeps each
// thread's inputs in their order in the batch whatever the other threads' inputs
// between them.
func testEnqueueBatch(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	other := conversation.Key{TeamID: key.TeamID, ChannelID: key.ChannelID, ThreadTS: "1600000000.000100"}
	inOther := func(id string) conversation.Input {
		in := input(id)
		in.Key = other
		in.Message.ThreadTS = other.ThreadTS
		return in
	}
	mustEnqueue(t, s, input("before"))
	batch := []conversation.Input{input("a1"), inOther("b1"), input("before"), input("a2"), inOther("b2"), input("a1"), input("a3")}
	inserted, err := s.EnqueueBatch(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, false, true, true, false, true}; !slices.Equal(inserted, want) {
		t.Errorf("EnqueueBatch inserted %v; want %v", inserted, want)
	}
	if got := drain(t, s, key); !slices.Equal(got, []string{"before", "a1", "a2", "a3"}) {
		t.Errorf("thread's inputs begun in the order %v; want before, a1, a2, a3", got)
	}
	if got := drain(t, s, other); !slices.Equal(got, []string{"b1", "b2"}) {
		t.Errorf("other thread's inputs begun in the order %v; want b1, b2", got)
	}
	if inserted, err := s.EnqueueBatch(ctx, nil); err != nil || len(inserted) != 0 {
		t.Errorf("EnqueueBatch(nil) = %v, %v; want nothing", inserted, err)
	}
}

// testEnqueueBatchSignals checks that a batch tells the holder of a thread's lease
// what enqueuing its inputs one by one would (Renew): the newest of them, and the
// newest person's message with its author, whatever the inputs of other threads
// between them; a free thread's lease is told nothing, and each thread's lease
// holds while its inputs are pending.
func testEnqueueBatchSignals(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	held, free := thread("batch-held"), thread("batch-free")
	l := mustAcquire(t, s, held, ownerA, liveTTL)
	click := conversation.Input{ID: "b-click", Key: held, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: conversation.Action{Name: conversation.ActionStop}, UserID: "U9"}}
	batch := []conversation.Input{inputIn(held, "b-m1", "U1"), inputIn(free, "b-f1", "U5"), inputIn(held, "b-m2", "U2"), click, inputIn(free, "b-f2", "U6")}
	if _, err := s.EnqueueBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	mustRelease(t, s, l, false) // inputs pending: the holder keeps the thread
	mustRun(t, s, l, "b-m1")
	m2 := mustRun(t, s, l, "b-m2")
	newest := mustRun(t, s, l, "b-click")
	want := conversation.LeaseState{Lease: l, Newest: newest, Message: m2, MessageBy: "U2"}
	if got := mustRenew(t, s, ownerA, liveTTL)[held]; !reflect.DeepEqual(got, want) {
		t.Errorf("Renew after a batch = %+v; want %+v", got, want)
	}
	lf := mustAcquire(t, s, free, ownerB, liveTTL)
	if got := mustRenew(t, s, ownerB, liveTTL)[free]; !reflect.DeepEqual(got, conversation.LeaseState{Lease: lf}) {
		t.Errorf("Renew of a thread free during the batch = %+v; want no signal", got)
	}
	mustRun(t, s, lf, "b-f1")
	mustRun(t, s, lf, "b-f2")
	mustRelease(t, s, lf, true)
}

// testEnqueueBatchAtomic checks that a batch is one transaction: when one of its
// inputs cannot be stored, none is, a repeat of an id in the batch included.
func testEnqueueBatchAtomic(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	bad := input("")
	if _, err := s.EnqueueBatch(ctx, []conversation.Input{input("x1"), input("x2"), bad}); err == nil {
		t.Fatal("EnqueueBatch with an input without an id succeeded; want an error")
	}
	repeat := input("x1")
	repeat.Kind = "" // an input that cannot be stored, under an id the batch holds already
	if _, err := s.EnqueueBatch(ctx, []conversation.Input{input("x1"), input("x2"), repeat}); err == nil {
		t.Fatal("EnqueueBatch with a repeated id whose input has no kind succeeded; want an error")
	}
	for _, id := range []string{"x1", "x2"} {
		if ok, err := s.Enqueued(ctx, id); ok || err != nil {
			t.Errorf("Enqueued(%s) after a failed batch = %v, %v; want false: nothing stored", id, ok, err)
		}
	}
	if c, err := s.CountPending(ctx, key, "", 10); err != nil || c.Thread != 0 {
		t.Errorf("CountPending after a failed batch = %+v, %v; want 0", c, err)
	}
}

// testConcurrentEnqueueBatch checks that batches stored at once, holding the same
// threads' inputs in different orders of threads, all commit (no deadlock), each
// input once.
func testConcurrentEnqueueBatch(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	keys := []conversation.Key{key, {TeamID: key.TeamID, ChannelID: key.ChannelID, ThreadTS: "1600000000.000100"}}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var batch []conversation.Input
			for i := range 10 {
				in := input(string(rune('a'+w)) + string(rune('0'+i)))
				in.Key = keys[(i+w)%2]
				batch = append(batch, in)
			}
			if _, err := s.EnqueueBatch(ctx, batch); err != nil {
				t.Errorf("batch %d: %v", w, err)
			}
		}()
	}
	wg.Wait()
	got := append(drain(t, s, keys[0]), drain(t, s, keys[1])...)
	if len(got) != 40 {
		t.Errorf("%d inputs begun; want the 40 enqueued", len(got))
	}
}

// drain begins and finishes every pending input of thread k, and returns their ids in
// the order Begin took them.
func drain(t *testing.T, s conversation.Store, k conversation.Key) []string {
	t.Helper()
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	got := []string{}
	for {
		in := mustBegin(t, s, l)
		if in == nil {
			return got
		}
		got = append(got, in.ID)
		if err := s.Finish(context.Background(), l, in.ID, conversation.InputDone); err != nil {
			t.Fatal(err)
		}
	}
}
