package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Run runs the conformance suite against the stores open returns, one subtest per case
// (t.Run("ErrConflict", …)). The subtests run in parallel; each calls open once and must
// get a new, empty store that open closes in t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) conversation.Store) {
	cases := []struct {
		name string
		test func(t *testing.T, s conversation.Store)
	}{
		{"CreateLoad", testCreateLoad},
		{"ErrNotFound", testNotFound},
		{"Exists", testExists},
		{"AppendSeq", testAppendSeq},
		{"RecentWindow", testRecentWindow},
		{"ErrConflict", testConflict},
		{"ConcurrentSaves", testConcurrentSaves},
		{"ConcurrentCreates", testConcurrentCreates},
		{"InvalidTurn", testInvalidTurn},
		{"EnqueueDedup", testEnqueueDedup},
		{"ConcurrentEnqueue", testConcurrentEnqueue},
		{"ConcurrentWorkers", testConcurrentWorkers},
		{"BeginSkipsFinished", testBeginSkipsFinished},
		{"Finish", testFinish},
		{"InputOrder", testInputOrder},
		{"InputPayloads", testInputPayloads},
		{"SaveMarksInputDone", testSaveMarksInputDone},
		{"ConflictKeepsInputPending", testConflictKeepsInputPending},
		{"SaveAnsweredInput", testSaveAnsweredInput},
		{"SaveEnqueues", testSaveEnqueues},
		{"Workflows", testWorkflows},
		{"WorkflowsLimit", testWorkflowsLimit},
		{"DeleteIdle", testDeleteIdle},
		{"LargeText", testLargeText},
		{"Unicode", testUnicode},
		{"Ping", testPing},
		{"Acquire", testAcquire},
		{"ConcurrentAcquire", testConcurrentAcquire},
		{"BeginOrder", testBeginOrder},
		{"LeaseLost", testLeaseLost},
		{"Release", testRelease},
		{"FinishLease", testFinishLease},
		{"Abandon", testAbandon},
		{"Renew", testRenew},
		{"RenewTakenOver", testRenewTakenOver},
		{"SignalClear", testSignalClear},
		{"Orphans", testOrphans},
		{"ExistsPending", testExistsPending},
		{"DeleteIdleLeases", testDeleteIdleLeases},
		{"StorableText", testStorableText},
		{"CountPending", testCountPending},
		{"Enqueued", testEnqueued},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, open(t))
		})
	}
}

// Opened returns s, which an Open function returned with err, and closes it when the
// test ends. It fails tb at once when err is not nil, and later when Close fails: it
// is for a store, or another connection (an *sql.DB), that a test opens.
func Opened[S interface{ Close() error }](tb testing.TB, s S, err error) S {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

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

func testCreateLoad(t *testing.T, s conversation.Store) {
	state := conversation.State{Mode: conversation.ModeAssistant, StartedBy: "U0001", Turns: 1, PromptTokens: 120, CompletionTokens: 30}
	asked := user("What time is it?")
	asked.SlackTS = "1700000000.000100"
	answered := assistant("It is *noon*.")
	answered.SlackTS = "1700000000.000200"
	answered.PromptTokens, answered.CompletionTokens = 120, 30
	answered.Meta = json.RawMessage(`{"tool_calls": [{"name": "get_current_time", "arguments": "{}"}], "steps": 2}`)

	before := time.Now().Add(-time.Second)
	saved := mustSave(t, s, conversation.Turn{Key: key, State: state, Append: []conversation.Message{asked, answered}})
	if saved.ConversationID == 0 || saved.Version != 1 || saved.FirstSeq != 1 {
		t.Errorf("Save = %+v; want a conversation id, version 1, first seq 1", saved)
	}

	cp := mustLoad(t, s, key, 10)
	c := cp.Conversation
	if c.ID != saved.ConversationID || c.Key != key || c.Version != 1 || c.LastSeq != 2 {
		t.Errorf("conversation = id %d, key %s, version %d, last seq %d; want %d, %s, 1, 2",
			c.ID, c.Key, c.Version, c.LastSeq, saved.ConversationID, key)
	}
	if !reflect.DeepEqual(c.State, state) {
		t.Errorf("state = %+v; want %+v", c.State, state)
	}
	checkUTC(t, "CreatedAt", c.CreatedAt)
	checkUTC(t, "UpdatedAt", c.UpdatedAt)
	if c.CreatedAt.Before(before) || c.UpdatedAt.Before(c.CreatedAt) {
		t.Errorf("created %v, updated %v; want after %v, updated not before created", c.CreatedAt, c.UpdatedAt, before)
	}
	if len(cp.Messages) != 2 {
		t.Fatalf("loaded %d messages; want 2", len(cp.Messages))
	}
	for i, want := range []conversation.Message{asked, answered} {
		got := cp.Messages[i]
		checkUTC(t, "message CreatedAt", got.CreatedAt)
		if !jsonEqual(t, got.Meta, want.Meta) {
			t.Errorf("message %d meta = %s; want %s", i, got.Meta, want.Meta)
		}
		want.Seq, want.CreatedAt, want.Meta = int64(i+1), got.CreatedAt, got.Meta
		if !reflect.DeepEqual(got, want) {
			t.Errorf("message %d = %+v; want %+v", i, got, want)
		}
	}
	if cp.Messages[0].Meta != nil {
		t.Errorf("message without meta loaded with meta %q; want nil", cp.Messages[0].Meta)
	}
}

func testNotFound(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	if _, err := s.Load(ctx, key, 10); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("Load of a missing conversation: %v; want ErrNotFound", err)
	}
	mustSave(t, s, conversation.Turn{Key: key})
	for _, k := range []conversation.Key{
		{TeamID: "T0002", ChannelID: key.ChannelID, ThreadTS: key.ThreadTS},
		{TeamID: key.TeamID, ChannelID: "C0002", ThreadTS: key.ThreadTS},
		otherKey(1),
	} {
		if _, err := s.Load(ctx, k, 10); !errors.Is(err, conversation.ErrNotFound) {
			t.Errorf("Load(%s): %v; want ErrNotFound", k, err)
		}
	}
}

func testExists(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	if ok, err := s.Exists(ctx, key); ok || err != nil {
		t.Errorf("Exists before create = %v, %v; want false, nil", ok, err)
	}
	mustSave(t, s, conversation.Turn{Key: key})
	if ok, err := s.Exists(ctx, key); !ok || err != nil {
		t.Errorf("Exists after create = %v, %v; want true, nil", ok, err)
	}
	if ok, err := s.Exists(ctx, otherKey(1)); ok || err != nil {
		t.Errorf("Exists of another thread = %v, %v; want false, nil", ok, err)
	}
}

func testAppendSeq(t *testing.T, s conversation.Store) {
	saved := mustSave(t, s, conversation.Turn{Key: key, Append: []conversation.Message{user("1"), assistant("2")}})
	saved = mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, Append: []conversation.Message{user("3"), assistant("4"), assistant("5")}})
	if saved.Version != 2 || saved.FirstSeq != 3 {
		t.Errorf("second Save = %+v; want version 2, first seq 3", saved)
	}
	// A turn without messages still moves the version; FirstSeq is where the next would go.
	saved = mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, State: conversation.State{Turns: 3}})
	if saved.Version != 3 || saved.FirstSeq != 6 {
		t.Errorf("Save without messages = %+v; want version 3, first seq 6", saved)
	}
	saved = mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, State: conversation.State{Turns: 4}, Append: []conversation.Message{user("6")}})
	if saved.FirstSeq != 6 {
		t.Errorf("Save after an empty turn: first seq %d; want 6", saved.FirstSeq)
	}

	cp := mustLoad(t, s, key, 100)
	if got, want := seqs(cp.Messages), []int64{1, 2, 3, 4, 5, 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("seqs = %v; want %v", got, want)
	}
	if got, want := texts(cp.Messages), []string{"1", "2", "3", "4", "5", "6"}; !reflect.DeepEqual(got, want) {
		t.Errorf("texts = %v; want %v", got, want)
	}
	if cp.Conversation.Version != 4 || cp.Conversation.LastSeq != 6 || cp.Conversation.State.Turns != 4 {
		t.Errorf("conversation = version %d, last seq %d, turns %d; want 4, 6, 4",
			cp.Conversation.Version, cp.Conversation.LastSeq, cp.Conversation.State.Turns)
	}
	// Each conversation numbers its own messages.
	other := mustSave(t, s, conversation.Turn{Key: otherKey(1), Append: []conversation.Message{user("a")}})
	if other.FirstSeq != 1 || other.ConversationID == saved.ConversationID {
		t.Errorf("other conversation's Save = %+v; want its own id and first seq 1", other)
	}
}

func testRecentWindow(t *testing.T, s conversation.Store) {
	var msgs []conversation.Message
	for i := 1; i <= 25; i++ {
		msgs = append(msgs, user(fmt.Sprint(i)))
	}
	saved := mustSave(t, s, conversation.Turn{Key: key, Append: msgs[:20]})
	mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, Append: msgs[20:]})

	for _, tc := range []struct {
		recent int
		want   []int64
	}{
		{10, []int64{16, 17, 18, 19, 20, 21, 22, 23, 24, 25}},
		{1, []int64{25}},
		{0, []int64{}},
		{-1, []int64{}},
	} {
		cp := mustLoad(t, s, key, tc.recent)
		if got := seqs(cp.Messages); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Load(recent %d) seqs = %v; want %v", tc.recent, got, tc.want)
		}
	}
	if cp := mustLoad(t, s, key, 1000); len(cp.Messages) != 25 || cp.Messages[0].Seq != 1 || cp.Messages[24].Text != "25" {
		t.Errorf("Load(recent 1000) = %d messages, from seq %v; want all 25, oldest first", len(cp.Messages), seqs(cp.Messages))
	}
}

func testConflict(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	if _, err := s.Save(ctx, conversation.Turn{Key: key, Version: 1, Append: []conversation.Message{user("x")}}); !errors.Is(err, conversation.ErrConflict) {
		t.Errorf("Save at version 1 of a missing conversation: %v; want ErrConflict", err)
	}
	mustSave(t, s, conversation.Turn{Key: key, State: conversation.State{Turns: 1}, Append: []conversation.Message{user("first")}})
	if _, err := s.Save(ctx, conversation.Turn{Key: key, State: conversation.State{Turns: 9}, Append: []conversation.Message{user("again")}}); !errors.Is(err, conversation.ErrConflict) {
		t.Errorf("second create: %v; want ErrConflict", err)
	}
	mustSave(t, s, conversation.Turn{Key: key, Version: 1, State: conversation.State{Turns: 2}, Append: []conversation.Message{user("second")}})
	for _, v := range []int64{1, 3} {
		_, err := s.Save(ctx, conversation.Turn{Key: key, Version: v, State: conversation.State{Turns: 9}, Append: []conversation.Message{user("stale")}})
		if !errors.Is(err, conversation.ErrConflict) {
			t.Errorf("Save at version %d of a conversation at version 2: %v; want ErrConflict", v, err)
		}
	}
	// Nothing of the failed saves was written.
	cp := mustLoad(t, s, key, 10)
	if c := cp.Conversation; c.Version != 2 || c.LastSeq != 2 || c.State.Turns != 2 {
		t.Errorf("after conflicts: version %d, last seq %d, turns %d; want 2, 2, 2", c.Version, c.LastSeq, c.State.Turns)
	}
	if got, want := texts(cp.Messages), []string{"first", "second"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after conflicts: messages %q; want %q", got, want)
	}
}

func testConcurrentSaves(t *testing.T, s conversation.Store) {
	const writers, versions = 8, 5
	mustSave(t, s, conversation.Turn{Key: key})
	for v := int64(1); v <= versions; v++ {
		wins, errs := race(writers, func(i int) error {
			_, err := s.Save(context.Background(), conversation.Turn{
				Key: key, Version: v, State: conversation.State{Turns: int(v)},
				Append: []conversation.Message{user(fmt.Sprintf("v%d w%d", v, i))},
			})
			return err
		})
		if wins != 1 {
			t.Fatalf("version %d: %d of %d concurrent saves won; want exactly 1 (errors: %v)", v, wins, writers, errs)
		}
		for _, err := range errs {
			if !errors.Is(err, conversation.ErrConflict) {
				t.Errorf("version %d: a losing save failed with %v; want ErrConflict", v, err)
			}
		}
	}
	cp := mustLoad(t, s, key, 100)
	if cp.Conversation.Version != versions+1 || cp.Conversation.LastSeq != versions {
		t.Errorf("after the races: version %d, last seq %d; want %d, %d", cp.Conversation.Version, cp.Conversation.LastSeq, versions+1, versions)
	}
	for i, m := range cp.Messages {
		if !strings.HasPrefix(m.Text, fmt.Sprintf("v%d ", i+1)) || m.Seq != int64(i+1) {
			t.Errorf("message %d = seq %d %q; want the winner of version %d", i, m.Seq, m.Text, i+1)
		}
	}
}

func testConcurrentCreates(t *testing.T, s conversation.Store) {
	const writers = 8
	wins, errs := race(writers, func(i int) error {
		_, err := s.Save(context.Background(), conversation.Turn{Key: key, Append: []conversation.Message{user(fmt.Sprint(i))}})
		return err
	})
	if wins != 1 {
		t.Fatalf("%d of %d concurrent creates won; want exactly 1 (errors: %v)", wins, writers, errs)
	}
	for _, err := range errs {
		if !errors.Is(err, conversation.ErrConflict) {
			t.Errorf("a losing create failed with %v; want ErrConflict", err)
		}
	}
	if cp := mustLoad(t, s, key, 10); cp.Conversation.Version != 1 || len(cp.Messages) != 1 {
		t.Errorf("after the race: version %d, %d messages; want 1, 1", cp.Conversation.Version, len(cp.Messages))
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

func testInvalidTurn(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	for name, turn := range map[string]conversation.Turn{
		"no thread":    {Key: conversation.Key{TeamID: "T1", ChannelID: "C1"}},
		"no role":      {Key: key, Append: []conversation.Message{{Text: "x"}}},
		"invalid meta": {Key: key, Append: []conversation.Message{{Role: conversation.RoleUser, Text: "x", Meta: json.RawMessage(`{"a":`)}}},
	} {
		if _, err := s.Save(ctx, turn); err == nil || errors.Is(err, conversation.ErrConflict) {
			t.Errorf("Save with %s: %v; want an error other than ErrConflict", name, err)
		}
	}
	if ok, err := s.Exists(ctx, key); ok || err != nil {
		t.Errorf("Exists after rejected saves = %v, %v; want false, nil", ok, err)
	}
}

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

// running returns a state whose workflow, name, was started by startedBy and is in
// status.
func running(name, startedBy string, status workflow.RunStatus) conversation.State {
	return conversation.State{
		Mode: conversation.ModeWorkflow, StartedBy: startedBy,
		Workflow: &workflow.State{Name: name, StartedBy: startedBy, Locale: "en", Status: status},
	}
}

// mustWorkflows returns the thread_ts of the running workflows Workflows lists, in its
// order, and checks each ref against the conversation it names.
func mustWorkflows(t testing.TB, s conversation.Store, teamID, channelID, startedBy string, limit int) []string {
	t.Helper()
	refs, err := s.Workflows(context.Background(), teamID, channelID, startedBy, limit)
	if err != nil {
		t.Fatalf("Workflows(%s, %s, %q, %d): %v", teamID, channelID, startedBy, limit, err)
	}
	out := []string{}
	for _, r := range refs {
		out = append(out, r.Key.ThreadTS)
		c := mustLoad(t, s, r.Key, 0).Conversation
		w := c.State.Workflow
		if w == nil || w.Status != workflow.RunRunning {
			t.Errorf("Workflows listed %s, whose workflow is %+v; want a running one", r.Key, w)
			continue
		}
		if r.Key.TeamID != teamID || r.Key.ChannelID != channelID {
			t.Errorf("Workflows(%s, %s) listed %s of another channel", teamID, channelID, r.Key)
		}
		if r.Name != w.Name || r.StartedBy != w.StartedBy || !r.UpdatedAt.Equal(c.UpdatedAt) || r.UpdatedAt.Location() != time.UTC {
			t.Errorf("ref %s = %q by %q, updated %v; want %q by %q, updated %v (UTC)",
				r.Key, r.Name, r.StartedBy, r.UpdatedAt, w.Name, w.StartedBy, c.UpdatedAt)
		}
	}
	return out
}

// tick waits until the clock has moved on, so that the next Save's updated_at is
// after the last one's.
func tick() { time.Sleep(2 * time.Millisecond) }

// testWorkflows checks that Workflows lists a channel's running workflows, and only
// those, as Save leaves them: newest update first, filtered by starter.
func testWorkflows(t *testing.T, s conversation.Store) {
	thread := func(ts string) conversation.Key {
		k := key
		k.ThreadTS = ts
		return k
	}
	versions := map[conversation.Key]int64{}
	save := func(k conversation.Key, state conversation.State) {
		t.Helper()
		saved := mustSave(t, s, conversation.Turn{Key: k, Version: versions[k], State: state, Append: []conversation.Message{user("turn")}})
		versions[k] = saved.Version
		tick()
	}
	if got := mustWorkflows(t, s, key.TeamID, key.ChannelID, "", 10); len(got) != 0 {
		t.Errorf("Workflows of an empty store = %v; want none", got)
	}

	save(thread("1.a"), running("proposal", "U1", workflow.RunRunning))
	save(thread("1.b"), running("retro", "U2", workflow.RunRunning))
	save(thread("1.c"), running("proposal", "U1", workflow.RunCompleted))
	save(thread("1.d"), running("proposal", "U1", workflow.RunCancelled))
	save(thread("1.e"), conversation.State{Mode: conversation.ModeAssistant, StartedBy: "U1"})
	save(thread("1.f"), running("proposal", "U1", workflow.RunRunning))
	// Running workflows of U1 in another channel, and in a channel of the same id in
	// another team.
	save(conversation.Key{TeamID: key.TeamID, ChannelID: "C0002", ThreadTS: "1.g"}, running("proposal", "U1", workflow.RunRunning))
	save(conversation.Key{TeamID: "T0002", ChannelID: key.ChannelID, ThreadTS: "1.h"}, running("proposal", "U1", workflow.RunRunning))

	check := func(when string, startedBy string, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if got := mustWorkflows(t, s, key.TeamID, key.ChannelID, startedBy, 10); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Workflows(started by %q) = %v; want %v", when, startedBy, got, want)
		}
	}
	check("created", "", "1.f", "1.b", "1.a")
	check("created", "U1", "1.f", "1.a")
	check("created", "U2", "1.b")
	check("created", "U3")
	if got := mustWorkflows(t, s, key.TeamID, "C0002", "", 10); !reflect.DeepEqual(got, []string{"1.g"}) {
		t.Errorf("Workflows of the other channel = %v; want [1.g]", got)
	}
	if got := mustWorkflows(t, s, "T0002", key.ChannelID, "U1", 10); !reflect.DeepEqual(got, []string{"1.h"}) {
		t.Errorf("Workflows of the other team = %v; want [1.h]", got)
	}

	// A turn moves its workflow to the front; a workflow started in an existing
	// conversation, or started again after it ended, joins the list.
	save(thread("1.a"), running("proposal", "U1", workflow.RunRunning))
	check("after a turn of 1.a", "", "1.a", "1.f", "1.b")
	save(thread("1.e"), running("retro", "U2", workflow.RunRunning))
	save(thread("1.c"), running("retro", "U1", workflow.RunRunning))
	check("after starts", "", "1.c", "1.e", "1.a", "1.f", "1.b")
	check("after starts", "U2", "1.e", "1.b")

	// Workflows that complete, are cancelled, or that the state drops leave it.
	save(thread("1.a"), running("proposal", "U1", workflow.RunCompleted))
	save(thread("1.b"), running("retro", "U2", workflow.RunCancelled))
	save(thread("1.c"), conversation.State{Mode: conversation.ModeAssistant, StartedBy: "U1"})
	check("after ends", "", "1.e", "1.f")
	check("after ends", "U1", "1.f")
	check("after ends", "U2", "1.e")
}

// testWorkflowsLimit checks that Workflows returns at most limit workflows, the most
// recently updated.
func testWorkflowsLimit(t *testing.T, s conversation.Store) {
	for i := range 5 {
		mustSave(t, s, conversation.Turn{Key: otherKey(i), State: running("proposal", fmt.Sprintf("U%d", i%2), workflow.RunRunning)})
		tick()
	}
	for _, tc := range []struct {
		startedBy string
		limit     int
		want      []string
	}{
		{"", 10, []string{otherKey(4).ThreadTS, otherKey(3).ThreadTS, otherKey(2).ThreadTS, otherKey(1).ThreadTS, otherKey(0).ThreadTS}},
		{"", 2, []string{otherKey(4).ThreadTS, otherKey(3).ThreadTS}},
		{"", 1, []string{otherKey(4).ThreadTS}},
		{"U1", 1, []string{otherKey(3).ThreadTS}},
		{"U0", 2, []string{otherKey(4).ThreadTS, otherKey(2).ThreadTS}},
		{"", 0, []string{}},
		{"", -1, []string{}},
	} {
		if got := mustWorkflows(t, s, key.TeamID, key.ChannelID, tc.startedBy, tc.limit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Workflows(started by %q, limit %d) = %v; want %v", tc.startedBy, tc.limit, got, tc.want)
		}
	}
}

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

func testLargeText(t *testing.T, s conversation.Store) {
	big := strings.Repeat("0123456789", 5000) // 50,000 characters
	summary := strings.Repeat("s", 10000)
	state := conversation.State{Summary: summary}
	saved := mustSave(t, s, conversation.Turn{Key: key, State: state, Append: []conversation.Message{user(big)}})
	mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, State: state, Append: []conversation.Message{assistant(big + "!")}})
	cp := mustLoad(t, s, key, 10)
	if len(cp.Messages) != 2 || cp.Messages[0].Text != big || cp.Messages[1].Text != big+"!" {
		t.Errorf("large texts did not round-trip (lengths %v)", lengths(cp.Messages))
	}
	if cp.Conversation.State.Summary != summary {
		t.Errorf("large summary did not round-trip (length %d)", len(cp.Conversation.State.Summary))
	}
}

func lengths(msgs []conversation.Message) []int {
	var out []int
	for _, m := range msgs {
		out = append(out, len(m.Text))
	}
	return out
}

func testUnicode(t *testing.T, s conversation.Store) {
	k := conversation.Key{TeamID: "T✓", ChannelID: "Cč", ThreadTS: "1700000000.000100"}
	text := "Grüße, 世界! 👋🏽 नमस्ते — שלום «quotes» \"double\" 'single' \\backslash\\ tab\there\nnew line e\u0301 \u200d"
	state := conversation.State{Mode: conversation.ModeAssistant, Summary: text}
	meta := json.RawMessage(`{"note": "日本語 🎉", "escaped": "\u00e9\n"}`)
	m := user(text)
	m.Meta = meta
	mustSave(t, s, conversation.Turn{Key: k, State: state, Append: []conversation.Message{m}})
	mustEnqueue(t, s, conversation.Input{ID: "msg:T✓:Cč:1", Key: k, Kind: conversation.KindUserMessage, Message: &conversation.UserMessage{Text: text}})

	cp := mustLoad(t, s, k, 1)
	if cp.Conversation.Key != k || cp.Conversation.State.Summary != text {
		t.Errorf("key %q, summary %q; want %q, %q", cp.Conversation.Key, cp.Conversation.State.Summary, k, text)
	}
	if len(cp.Messages) != 1 || cp.Messages[0].Text != text || !jsonEqual(t, cp.Messages[0].Meta, meta) {
		t.Errorf("messages = %+v; want text %q, meta %s", cp.Messages, text, meta)
	}
	if in := mustBeginID(t, s, mustAcquire(t, s, k, ownerA, liveTTL), "msg:T✓:Cč:1", 1); in.Message == nil || in.Message.Text != text {
		t.Errorf("begun input's message = %+v; want text %q", in.Message, text)
	}
}

func testPing(t *testing.T, s conversation.Store) {
	if err := s.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
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
