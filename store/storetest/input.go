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

// The cases of Run for inputs: Enqueue and its duplicates, the order Begin takes them
// in, Finish, and the inputs a Save marks done or enqueues.

// testEnqueueDedup checks that an input is enqueued once per id, and that what it
// carries comes back from Begin as it was enqueued: numbered, pending, created now
// (in UTC), with the attempt that Begin counts.
func testEnqueueDedup(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	in := input("msg:T0001:C0001:1700000000.000200")
	mustEnqueue(t, s, in)

	again := in
	again.EventID = "EvOther"
	again.Message = &conversation.UserMessage{Text: "redelivered"}
	if ok, err := s.Enqueue(ctx, again); ok || err != nil {
		t.Errorf("second Enqueue = %v, %v; want false, nil", ok, err)
	}
	l := mustAcquire(t, s, key, ownerA, liveTTL)
	got := mustBeginID(t, s, l, in.ID, 1)
	checkUTC(t, "input CreatedAt", got.CreatedAt)
	if got.Seq <= 0 {
		t.Errorf("begun input's Seq = %d; want it numbered", got.Seq)
	}
	want := in
	want.Status, want.Attempts, want.CreatedAt, want.Seq = conversation.InputPending, 1, got.CreatedAt, got.Seq
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("begun input = %+v (message %+v); want %+v (message %+v)", *got, got.Message, want, want.Message)
	}

	// A finished input still deduplicates.
	if err := s.Finish(ctx, conversation.Lease{}, in.ID, conversation.InputDropped); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Enqueue(ctx, in); ok || err != nil {
		t.Errorf("Enqueue of a finished input = %v, %v; want false, nil", ok, err)
	}
	// An input without a message round-trips too.
	bare := input("bare")
	bare.Message = nil
	mustEnqueue(t, s, bare)
	if got := mustBeginID(t, s, l, bare.ID, 1); got.Message != nil {
		t.Errorf("begun input = %+v; want the input without a message", got)
	}
	if _, err := s.Enqueue(ctx, conversation.Input{Key: key, Kind: conversation.KindUserMessage}); err == nil {
		t.Error("Enqueue without an id succeeded; want an error")
	}
}

func testConcurrentEnqueue(t *testing.T, s conversation.Store) {
	const n = 8
	wins, errs := race(n, func(int) error {
		ok, err := s.Enqueue(context.Background(), input("one"))
		if err == nil && !ok {
			return errors.New("not inserted")
		}
		return err
	})
	if wins != 1 {
		t.Errorf("%d of %d concurrent Enqueues inserted; want exactly 1 (others: %v)", wins, n, errs)
	}
}

// testConcurrentWorkers races workers that each try to take a thread and begin its
// input, as the workers of several replicas do, round after round: exactly one
// acquires the thread and begins the input, and only its Begin counts an attempt. The
// winner then abandons the thread with the input still pending (its process stops),
// and the next round's winner takes it with the next token and begins the input
// again.
func testConcurrentWorkers(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	const workers, rounds = 8, 3
	k := thread("workers")
	mustEnqueue(t, s, inputIn(k, "w1", "U1"))
	for round := 1; round <= rounds; round++ {
		var (
			mu    sync.Mutex
			won   conversation.Lease
			begun *conversation.Input
		)
		wins, errs := race(workers, func(i int) error {
			l, _, ok, err := s.Acquire(ctx, k, fmt.Sprintf("worker-%d", i), liveTTL)
			if err != nil {
				return err
			}
			if !ok {
				return errNotAcquired
			}
			in, err := s.Begin(ctx, l)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			won, begun = l, in
			return nil
		})
		if wins != 1 {
			t.Fatalf("round %d: %d of %d concurrent workers took the thread; want exactly 1 (others: %v)", round, wins, workers, errs)
		}
		for _, err := range errs {
			if !errors.Is(err, errNotAcquired) {
				t.Errorf("round %d: a losing worker failed with %v; want Acquire's ok false", round, err)
			}
		}
		if won.Token != int64(round) {
			t.Errorf("round %d: the winner's token = %d; want %d", round, won.Token, round)
		}
		if begun == nil || begun.ID != "w1" || begun.Attempts != round {
			t.Fatalf("round %d: the winner began %+v; want input w1 with %d attempts", round, begun, round)
		}
		if err := s.Abandon(ctx, won); err != nil {
			t.Fatalf("round %d: Abandon: %v", round, err)
		}
	}
}

// testBeginSkipsFinished checks that an input that is done, dropped or failed never
// runs again, whether it was begun before or not: Begin skips it, and Orphans offers
// no thread for it.
func testBeginSkipsFinished(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("finished")
	for _, id := range []string{"done", "dropped", "failed", "begun-done", "begun-failed", "next"} {
		mustEnqueue(t, s, inputIn(k, id, "U1"))
	}
	saved := mustSave(t, s, conversation.Turn{Key: k, InputID: "done"})
	for id, status := range map[string]conversation.InputStatus{"dropped": conversation.InputDropped, "failed": conversation.InputFailed} {
		if err := s.Finish(ctx, conversation.Lease{}, id, status); err != nil {
			t.Fatalf("Finish(%s): %v", id, err)
		}
	}
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	mustBeginID(t, s, l, "begun-done", 1)
	mustSave(t, s, conversation.Turn{Key: k, Version: saved.Version, Lease: l, InputID: "begun-done"})
	mustBeginID(t, s, l, "begun-failed", 1)
	if err := s.Finish(ctx, l, "begun-failed", conversation.InputFailed); err != nil {
		t.Fatalf("Finish(begun-failed): %v", err)
	}
	mustBeginID(t, s, l, "next", 1)
	if err := s.Finish(ctx, l, "next", conversation.InputDone); err != nil {
		t.Fatalf("Finish(next): %v", err)
	}
	if in := mustBegin(t, s, l); in != nil {
		t.Errorf("Begin with only finished inputs = %+v; want nil", in)
	}
	mustRelease(t, s, l, true)
	if got := mustOrphans(t, s, 10); len(got) != 0 {
		t.Errorf("Orphans with only finished inputs = %v; want none", got)
	}
}

// testFinish checks that Finish without a lease ends an input, which Begin then
// skips, and rejects a missing input and an unknown status.
func testFinish(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	mustEnqueue(t, s, input("a"))
	mustEnqueue(t, s, input("b"))
	if err := s.Finish(ctx, conversation.Lease{}, "a", conversation.InputFailed); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	l := mustAcquire(t, s, key, ownerA, liveTTL)
	mustBeginID(t, s, l, "b", 1)
	if err := s.Finish(ctx, conversation.Lease{}, "missing", conversation.InputDropped); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("Finish of a missing input: %v; want ErrNotFound", err)
	}
	if err := s.Finish(ctx, conversation.Lease{}, "b", "bogus"); err == nil {
		t.Error("Finish with an unknown status succeeded; want an error")
	}
}

// testInputOrder checks that a thread's inputs run in the order they were enqueued,
// with increasing Seqs, whatever their CreatedAt (older, newer, or equal, with ids out
// of order), and that CreatedAt comes back as it was enqueued, in UTC.
func testInputOrder(t *testing.T, s conversation.Store) {
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	created := map[string]time.Time{}
	var want []string
	for _, c := range []struct {
		id  string
		age time.Duration
	}{{"c", 3 * time.Second}, {"a", time.Second}, {"d", 4 * time.Second}, {"b2", 2 * time.Second}, {"b1", 2 * time.Second}} {
		in := input(c.id)
		in.CreatedAt = base.Add(c.age).In(time.FixedZone("UTC+3", 3*60*60))
		mustEnqueue(t, s, in)
		created[c.id] = base.Add(c.age)
		want = append(want, c.id)
	}
	l := mustAcquire(t, s, key, ownerA, liveTTL)
	got := []string{}
	var last int64
	for range len(want) + 1 {
		in := mustBegin(t, s, l)
		if in == nil {
			break
		}
		got = append(got, in.ID)
		if in.Seq <= last {
			t.Errorf("input %s: Seq %d after %d; want it increasing", in.ID, in.Seq, last)
		}
		last = in.Seq
		if !in.CreatedAt.Equal(created[in.ID]) || in.CreatedAt.Location() != time.UTC {
			t.Errorf("input %s: CreatedAt %v; want %v in UTC", in.ID, in.CreatedAt, created[in.ID])
		}
		if err := s.Finish(context.Background(), l, in.ID, conversation.InputDone); err != nil {
			t.Fatalf("Finish(%s): %v", in.ID, err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Begin ran %v; want %v (the order of Enqueue)", got, want)
	}
}

// testInputPayloads checks that every kind of input comes back from Begin with what
// it carries (a resumed click or command must still know what it was), and that a
// channel command, which has no thread yet, can be enqueued and run under the
// channel's lease.
func testInputPayloads(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	channel := conversation.Key{TeamID: "T1", ChannelID: "C1"}
	act := conversation.Action{Name: conversation.ActionPick, Channel: "C1", ThreadTS: "1.1", Artifact: "problem", Rev: 3, Arg: "B"}
	for _, in := range []conversation.Input{
		{ID: "p1", Key: k, Kind: conversation.KindUserMessage, Message: &conversation.UserMessage{UserID: "U1", Text: "hi", TS: "1.2", ThreadTS: "1.1", Mentioned: true}},
		{ID: "p2", Key: k, Kind: conversation.KindAction, Action: &conversation.ActionInput{Action: act, UserID: "U2", Text: "shorter", MessageTS: "1.3"}},
		{ID: "p3", Key: channel, Kind: conversation.KindCommand,
			Command: &conversation.CommandInput{Source: conversation.SourceSlash, UserID: "U3", Line: "restart budget"}},
	} {
		mustEnqueue(t, s, in)
	}
	if _, err := s.Enqueue(ctx, conversation.Input{ID: "p4", Key: channel, Kind: conversation.KindUserMessage}); err == nil {
		t.Error("a user message without a thread was enqueued")
	}
	l := mustAcquire(t, s, k, ownerA, liveTTL)
	if got := mustBeginID(t, s, l, "p1", 1); got.Message == nil || got.Message.Text != "hi" || !got.Message.Mentioned || got.Action != nil {
		t.Errorf("message input: %+v", got)
	}
	if err := s.Finish(ctx, l, "p1", conversation.InputDone); err != nil {
		t.Fatal(err)
	}
	if got := mustBeginID(t, s, l, "p2", 1); got.Action == nil || got.Action.Action != act || got.Action.Text != "shorter" || got.Action.UserID != "U2" || got.Message != nil {
		t.Errorf("action input: %+v", got)
	}
	lc := mustAcquire(t, s, channel, ownerA, liveTTL)
	if got := mustBeginID(t, s, lc, "p3", 1); got.Command == nil || got.Command.Line != "restart budget" || got.Command.Source != conversation.SourceSlash {
		t.Errorf("command input: %+v", got)
	}
}

// testSaveMarksInputDone checks that a Save under the lease, for the input its holder
// began, marks the input done: Begin offers the next one, then none.
func testSaveMarksInputDone(t *testing.T, s conversation.Store) {
	mustEnqueue(t, s, input("a"))
	mustEnqueue(t, s, input("b"))
	l := mustAcquire(t, s, key, ownerA, liveTTL)
	mustBeginID(t, s, l, "a", 1)
	saved := mustSave(t, s, conversation.Turn{Key: key, Lease: l, InputID: "a", Append: []conversation.Message{user("hello a")}})
	mustBeginID(t, s, l, "b", 1)
	mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, Lease: l, InputID: "b"})
	if in := mustBegin(t, s, l); in != nil {
		t.Errorf("Begin after the Saves of a and b = %+v; want nil", in)
	}
	mustRelease(t, s, l, true)
}

// testPendingAndMerged checks Pending (the thread's pending inputs, lowest Seq first,
// up to limit, the running one included) and a Save's Merged inputs (the merge
// policy's burst): marked done with its input, all or nothing.
func testPendingAndMerged(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c", "d"} {
		mustEnqueue(t, s, input(id))
	}
	l := mustAcquire(t, s, key, ownerA, liveTTL)
	mustBeginID(t, s, l, "a", 1)
	ids := func(limit int) []string {
		t.Helper()
		pending, err := s.Pending(ctx, key, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, in := range pending {
			if in.Message == nil || in.Status != conversation.InputPending || in.CreatedAt.IsZero() {
				t.Errorf("pending input %+v: want its message, pending, with its time", in)
			}
			out = append(out, in.ID)
		}
		return out
	}
	if got := ids(3); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("Pending(3) = %v; want [a b c]", got)
	}
	// A merged input that is not pending fails the whole save.
	if err := s.Finish(ctx, l, "d", conversation.InputDropped); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(ctx, conversation.Turn{Key: key, Lease: l, InputID: "a", Merged: []string{"b", "d"}}); !errors.Is(err, conversation.ErrConflict) {
		t.Fatalf("Save merging a finished input: %v; want ErrConflict", err)
	}
	if got := ids(10); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("Pending after the refused Save = %v; want [a b c]", got)
	}
	mustSave(t, s, conversation.Turn{Key: key, Lease: l, InputID: "a", Merged: []string{"b", "c"}, Append: []conversation.Message{user("a b c")}})
	if got := ids(10); len(got) != 0 {
		t.Errorf("Pending after the merged Save = %v; want none", got)
	}
	if in := mustBegin(t, s, l); in != nil {
		t.Errorf("Begin after the merged Save = %+v; want nil", in)
	}
	mustRelease(t, s, l, true)
}

// testConflictKeepsInputPending checks that a Save that fails its version check
// leaves its input pending: the holder's next Begin runs it again.
func testConflictKeepsInputPending(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	mustSave(t, s, conversation.Turn{Key: key})
	mustEnqueue(t, s, input("a"))
	mustEnqueue(t, s, input("b"))
	l := mustAcquire(t, s, key, ownerA, liveTTL)
	mustBeginID(t, s, l, "a", 1)
	if _, err := s.Save(ctx, conversation.Turn{Key: key, Version: 7, Lease: l, InputID: "a"}); !errors.Is(err, conversation.ErrConflict) {
		t.Fatalf("stale Save: %v; want ErrConflict", err)
	}
	if _, err := s.Save(ctx, conversation.Turn{Key: key, Lease: l, InputID: "b"}); !errors.Is(err, conversation.ErrConflict) {
		t.Fatalf("second create: %v; want ErrConflict", err)
	}
	mustBeginID(t, s, l, "a", 2)
	if err := s.Finish(ctx, l, "a", conversation.InputDropped); err != nil {
		t.Fatal(err)
	}
	mustBeginID(t, s, l, "b", 1)
}

// testSaveAnsweredInput checks that an input is answered at most once: a Save for an
// input that is no longer pending writes nothing.
func testSaveAnsweredInput(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	mustEnqueue(t, s, input("a"))
	saved := mustSave(t, s, conversation.Turn{Key: key, InputID: "a", Append: []conversation.Message{user("hello a")}})
	for _, id := range []string{"a", "missing"} {
		_, err := s.Save(ctx, conversation.Turn{Key: key, Version: saved.Version, InputID: id, Append: []conversation.Message{user("twice")}})
		if !errors.Is(err, conversation.ErrConflict) {
			t.Errorf("Save for input %q that is not pending: %v; want ErrConflict", id, err)
		}
	}
	if cp := mustLoad(t, s, key, 10); cp.Conversation.Version != 1 || len(cp.Messages) != 1 {
		t.Errorf("after rejected saves: version %d, %d messages; want 1, 1", cp.Conversation.Version, len(cp.Messages))
	}
}

// testSaveEnqueues checks Turn.Enqueue: the inputs are pending exactly when the turn
// was saved, after the input it answered, deduplicated by id, and a conflicting Save
// enqueues nothing.
func testSaveEnqueues(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	mustEnqueue(t, s, input("a"))
	l := mustAcquire(t, s, key, ownerA, liveTTL)
	mustBeginID(t, s, l, "a", 1)
	next := conversation.Input{ID: "pipeline:1", Kind: conversation.KindPipeline, Key: key, CreatedAt: time.Now()}
	saved := mustSave(t, s, conversation.Turn{Key: key, Lease: l, InputID: "a", Enqueue: []conversation.Input{next}})
	if got := mustBeginID(t, s, l, next.ID, 1); got.Kind != conversation.KindPipeline {
		t.Fatalf("begun input = %+v; want the pipeline input", got)
	}
	other := conversation.Input{ID: "pipeline:2", Kind: conversation.KindPipeline, Key: key}
	if _, err := s.Save(ctx, conversation.Turn{Key: key, Version: saved.Version + 5, Lease: l, Enqueue: []conversation.Input{other}}); !errors.Is(err, conversation.ErrConflict) {
		t.Fatalf("stale Save: %v; want ErrConflict", err)
	}
	saved = mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, Lease: l, InputID: next.ID, Enqueue: []conversation.Input{next}})
	if in := mustBegin(t, s, l); in != nil {
		t.Errorf("Begin after a conflicting Save and a re-enqueue of a done id = %+v; want nil", in)
	}
	if saved.Version != 2 {
		t.Errorf("version = %d; want 2", saved.Version)
	}
}

// Undecodable checks, on a new store that open returns with corrupt, which replaces
// the stored payload of an input so that it no longer decodes (as a corrupt row, or
// one written by a newer version, would), what the holder of the thread learns: Begin,
// Next and AcquireBegin begin such an input and return an *conversation.UndecodableError
// that names it (AcquireBegin with the lease taken), so that the holder can finish it
// as failed and go on with the thread's next input; and Pending stops before it (the
// burst before it still merges).
func Undecodable(t *testing.T, open func(t *testing.T) (s conversation.Store, corrupt func(t *testing.T, id string))) {
	ctx := context.Background()
	s, corrupt := open(t)
	for _, id := range []string{"a", "b", "c"} {
		mustEnqueue(t, s, input(id))
	}
	corrupt(t, "b")
	l := mustAcquire(t, s, key, ownerA, liveTTL)
	mustBeginID(t, s, l, "a", 1)
	if pending, err := s.Pending(ctx, key, 10); err != nil || len(pending) != 1 || pending[0].ID != "a" {
		t.Errorf("Pending before an undecodable input = %+v, %v; want [a], nil", pending, err)
	}
	if err := s.Finish(ctx, l, "a", conversation.InputDone); err != nil {
		t.Fatal(err)
	}
	wantUndecodable := func(what string, in *conversation.Input, err error, k conversation.Key, id string) {
		t.Helper()
		var ue *conversation.UndecodableError
		if in != nil || !errors.As(err, &ue) {
			t.Fatalf("%s of an undecodable input = %+v, %v; want nil, an *UndecodableError", what, in, err)
		}
		if got := ue.Input; got.ID != id || got.Key != k || got.Kind != conversation.KindUserMessage || got.Attempts != 1 || got.Message != nil {
			t.Errorf("%s: UndecodableError.Input = %+v; want input %s of %s, its kind, 1 attempt, no payload", what, got, id, k)
		}
	}
	in, err := s.Begin(ctx, l)
	wantUndecodable("Begin", in, err, key, "b")
	// The attempt is stored: the next one is the second.
	attempts := func(err error) int {
		var ue *conversation.UndecodableError
		if !errors.As(err, &ue) {
			return -1
		}
		return ue.Input.Attempts
	}
	if _, err := s.Begin(ctx, l); attempts(err) != 2 {
		t.Errorf("Begin of the undecodable input again = %v (%d attempts); want an *UndecodableError, 2 attempts: the first was stored", err, attempts(err))
	}
	if err := s.Finish(ctx, l, "b", conversation.InputFailed); err != nil {
		t.Fatalf("Finish(b, failed) = %v", err)
	}
	mustNext(t, s, l, "c", 1, false)

	// Next, and AcquireBegin, which takes the lease all the same.
	k := thread("undecodable")
	for _, id := range []string{"d", "e"} {
		in := input(id)
		in.Key = k
		mustEnqueue(t, s, in)
	}
	corrupt(t, "d")
	l, _, in, ok, err := s.AcquireBegin(ctx, k, ownerA, liveTTL)
	if !ok || !l.Held() {
		t.Fatalf("AcquireBegin of a thread whose first input does not decode: lease %+v, ok %v (%v); want the lease", l, ok, err)
	}
	wantUndecodable("AcquireBegin", in, err, k, "d")
	l2 := mustAcquire(t, s, k, ownerA, liveTTL) // the same owner's again: a new token
	_, _, err = s.Next(ctx, l2, 1)
	if !errors.As(err, new(*conversation.UndecodableError)) {
		t.Fatalf("Next of an undecodable input = %v; want an *UndecodableError", err)
	}
	if _, _, again := s.Next(ctx, l2, 2); attempts(again) != attempts(err)+1 {
		t.Errorf("Next of the undecodable input again: %d attempts after %d; want one more: the first was stored", attempts(again), attempts(err))
	}
	if err := s.Finish(ctx, l2, "d", conversation.InputFailed); err != nil {
		t.Fatalf("Finish(d, failed) = %v", err)
	}
	mustNext(t, s, l2, "e", 1, false)
}
