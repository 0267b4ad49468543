package turns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// testIntake returns an intake of st and cfg, without a scheduler: kick is told of
// each thread it would start work on. Refused inputs post no notice.
func testIntake(st conversation.Store, cfg Config, kick func(conversation.Key)) *intake {
	cfg.Store = st
	cfg.Now = time.Now
	bg, stop := context.WithCancel(context.Background())
	stop()
	e := &env{cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil)), threads: newThreadSet(),
		ctx: context.Background(), bg: &sync.WaitGroup{}, bgCtx: bg}
	lim := newLimits(cfg.UserRate, cfg.UserBurst)
	return &intake{env: e, limits: lim, spool: &spooler{env: e, limits: lim}, commit: newGroupCommit(e),
		gate: newAdmission(realClock{}, intakeQuiet, burstWindow, burstSubmits, maxDeferral), kick: kick}
}

// personMention is a person's mention of the bot in a thread of its own.
func personMention(id, user, thread string) conversation.Input {
	return conversation.Input{ID: id, Kind: conversation.KindUserMessage,
		Key:     conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: thread},
		Message: &conversation.UserMessage{UserID: user, Text: "hello", Mentioned: true}}
}

// countingStore is a batchStore whose CountPending counts the inputs it stored as
// the person's (the test's are one person's, each in a thread of its own).
type countingStore struct{ *batchStore }

func (s countingStore) CountPending(context.Context, conversation.Key, string, int) (conversation.PendingCounts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return conversation.PendingCounts{User: len(s.seen)}, nil
}

func (s countingStore) Enqueued(_ context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[id], nil
}

// TestQueueBoundsCountInputsBeingStored: one person's mentions in several threads,
// submitted together while a batch is being stored, are held to MaxQueuedPerUser
// together: the bound counts those admitted and not yet stored, so that exactly the
// bound's number is kept and the rest are refused, though the store counts none yet.
func TestQueueBoundsCountInputsBeingStored(t *testing.T) {
	st := countingStore{newBatchStore()}
	const bound, sent = 3, 7
	s := testIntake(st, Config{MaxQueuedPerUser: bound}, func(conversation.Key) {})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type result struct {
		accepted bool
		err      error
	}
	results := make(chan result, sent)
	submit := func(i int) {
		ok, err := s.Submit(ctx, personMention(fmt.Sprintf("m%d", i), "U1", fmt.Sprintf("%d.000100", 1000+i)))
		results <- result{ok, err}
	}
	go submit(0)
	<-st.first // the first is being stored, and stays so until release
	refused := 0
	for i := 1; i < sent; i++ {
		// Each is either refused at once or queued behind the first.
		s.commit.mu.Lock()
		if s.commit.grew == nil {
			s.commit.grew = make(chan struct{})
		}
		grew := s.commit.grew
		s.commit.mu.Unlock()
		go submit(i)
		select {
		case r := <-results:
			if r.err != nil || r.accepted {
				t.Fatalf("mention %d returned before the store answered: accepted %v, error %v", i, r.accepted, r.err)
			}
			refused++
		case <-grew:
		case <-ctx.Done():
			t.Fatal("mention neither refused nor queued")
		}
	}
	close(st.release)
	accepted := 0
	for range sent - refused {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.accepted {
			accepted++
		}
	}
	if accepted != bound || refused != sent-bound {
		t.Errorf("%d of %d mentions kept, %d refused; want %d kept (MaxQueuedPerUser) and the others refused", accepted, sent, refused, bound)
	}
	if len(s.limits.admitting) != 0 || len(s.limits.admittingBy) != 0 {
		t.Errorf("admitted inputs still counted once kept or refused: %v, %v", s.limits.admitting, s.limits.admittingBy)
	}
}

// lostBatchReplyStore stores the first batch it is given and then fails it as a
// connection lost before the commit's reply would (ErrUnavailable): the retry finds
// every input stored.
type lostBatchReplyStore struct {
	conversation.Store
	mu     sync.Mutex
	calls  int
	stored map[string]bool
	// lost is the first call's error.
	lost error
}

func (s *lostBatchReplyStore) EnqueueBatch(ctx context.Context, ins []conversation.Input) ([]bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	out := make([]bool, len(ins))
	for i, in := range ins {
		out[i] = !s.stored[in.ID]
		s.stored[in.ID] = true
	}
	if s.calls == 1 {
		return nil, s.lost
	}
	return out, nil
}

// TestLostCommitReplyStartsTheThread: an input whose batch was stored by an attempt
// whose reply was lost (the retry reports it a duplicate) is accepted, and starts
// work on its thread, rather than waiting for the sweep, whether the batch retried it (the
// connection reset) or it queued again for another batch (the attempt ran out of
// time), and stops no running turn of the thread (it may be a copy Slack delivered
// again of an older input); a duplicate found at the first attempt starts nothing.
func TestLostCommitReplyStartsTheThread(t *testing.T) {
	for name, lost := range map[string]error{
		"reset":   fmt.Errorf("commit: connection reset: %w", conversation.ErrUnavailable),
		"timeout": fmt.Errorf("commit: %w", context.DeadlineExceeded),
	} {
		t.Run(name, func(t *testing.T) {
			st := &lostBatchReplyStore{stored: map[string]bool{}, lost: lost}
			kicked := make(chan conversation.Key, 4)
			s := testIntake(st, Config{}, func(k conversation.Key) { kicked <- k })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			in := personMention("m1", "U1", "1000.000100")
			// A newer input's turn runs in the thread: m1 may be a copy Slack delivered
			// again, so it must not stop that turn, as a new message would.
			turnCtx, stopTurn := context.WithCancelCause(context.Background())
			defer stopTurn(nil)
			s.threads.m[in.Key] = &thread{run: &active{inputID: "m2", stoppable: true, interruptible: true, cancel: stopTurn}}
			if ok, err := s.Submit(ctx, in); err != nil || !ok {
				t.Fatalf("accepted %v, error %v; want it accepted (an API caller would otherwise be told it was refused)", ok, err)
			}
			select {
			case k := <-kicked:
				if k != in.Key {
					t.Errorf("work started on thread %s; want %s", k, in.Key)
				}
			default:
				t.Error("the input stored by an attempt whose reply was lost started no work on its thread")
			}
			if context.Cause(turnCtx) != nil {
				t.Errorf("the input found stored after a failed attempt stopped the thread's running turn: %v", context.Cause(turnCtx))
			}
			if ok, err := s.Submit(ctx, in); err != nil || ok {
				t.Fatalf("the same input again: accepted %v, error %v; want a duplicate", ok, err)
			}
			if len(kicked) != 0 {
				t.Error("a duplicate found at the first attempt started work on its thread")
			}
		})
	}
}

// TestReservationBecomesPending: an admitted input counts once: as admitted until it
// is stored, then as pending, in one step (limits.stored), so that the store's count,
// which has it from its commit on, and the admitted inputs never count it twice; its
// release after that changes nothing.
func TestReservationBecomesPending(t *testing.T) {
	l := newLimits(0, 1)
	const bound = 2
	third := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "3.3"}
	// counted is a store's count of the person's pending inputs, taken at once.
	counted := func(n int) *countWatch {
		w := l.watch(third, "U1")
		w.store = &conversation.PendingCounts{User: n}
		return w
	}
	a, b := personMention("a", "U1", "1.1"), personMention("b", "U1", "2.2")
	_, ra := l.reserve(a.Key, "U1", nil, 0, bound)
	_, rb := l.reserve(b.Key, "U1", nil, 0, bound)
	if ra == nil || rb == nil {
		t.Fatal("inputs under the bound refused")
	}
	if r, _ := l.reserve(third, "U1", nil, 0, bound); r == nil {
		t.Fatal("a third input admitted while two are being stored, bound 2")
	}
	l.stored(a, ra) // a committed: the store counts it from now on
	ra.release()
	if r, _ := l.reserve(third, "U1", counted(1), 0, bound); r == nil {
		t.Fatal("admitted with a stored and b being stored, bound 2")
	}
	rb.release() // b was a duplicate
	r, rc := l.reserve(third, "U1", counted(1), 0, bound)
	if r != nil {
		t.Fatalf("refused (%d pending) with only a pending, bound 2; a counted twice", r.pending)
	}
	rc.release()
	if len(l.admitting) != 0 || len(l.admittingBy) != 0 || l.pendingBy["T1/U1"] != 1 || len(l.watches) != 0 {
		t.Errorf("admitting %v %v, pending %v, %d watches; want none admitting, a pending, no watch", l.admitting, l.admittingBy, l.pendingBy, len(l.watches))
	}
}

// TestInputStoredWhileCountedCounts: an input stored while the store counts its
// person's pending inputs (the count taken before its commit, its reservation ended
// since) still counts against the bound: it is counted nowhere else.
func TestInputStoredWhileCountedCounts(t *testing.T) {
	l := newLimits(0, 1)
	const bound = 4
	a, b := personMention("a", "U1", "1.1"), personMention("b", "U1", "2.2")
	_, ra := l.reserve(a.Key, "U1", nil, 0, bound)
	w := l.watch(b.Key, "U1")
	count := conversation.PendingCounts{User: 3} // 3 pending, a not among them yet
	l.stored(a, ra)                              // a commits while b's count is in flight
	w.store = &count
	if r, rb := l.reserve(b.Key, "U1", w, 0, bound); r == nil {
		rb.release()
		t.Fatal("b admitted with 3 pending and a stored during its count, bound 4")
	}
	if l.pendingBy["T1/U1"] != 4 {
		t.Errorf("the person's pending inputs estimated at %d; want 4 (the store's 3 and a)", l.pendingBy["T1/U1"])
	}
}

// failingStore refuses every batch, and every Signal, with an error of its own (not
// the store being unavailable).
type failingStore struct{ conversation.Store }

func (failingStore) EnqueueBatch(context.Context, []conversation.Input) ([]bool, error) {
	return nil, errors.New("disk I/O error")
}

func (failingStore) Signal(context.Context, conversation.Key, conversation.StopRequest) error {
	return errors.New("disk I/O error")
}

// TestInputNotKeptCostsNoToken: an input the store could not keep (Submit fails, and
// Slack delivers it again) gives its author's token back, so that the copy is not
// refused as over the person's rate.
func TestInputNotKeptCostsNoToken(t *testing.T) {
	s := testIntake(failingStore{}, Config{UserRate: 1, UserBurst: 1}, func(conversation.Key) {})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := personMention("m1", "U1", "1000.000100")
	if ok, err := s.Submit(ctx, m); ok || err == nil {
		t.Fatalf("Submit = %v, %v; want the store's error", ok, err)
	}
	if _, wait := s.limits.take("T1", "U1", false, time.Now()); wait > 0 {
		t.Errorf("the person's bucket is empty after an input that was not kept (next token in %v); want its token back", wait)
	}
}

// TestStopNotPassedOnIsAnError: a Stop of a turn that runs elsewhere, which the store
// could not pass on (Store.Signal), fails Submit, so that the person is told it was
// not taken, rather than being dropped as if done.
func TestStopNotPassedOnIsAnError(t *testing.T) {
	s := testIntake(failingStore{}, Config{}, func(conversation.Key) {})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stop := conversation.Input{ID: "stop1", Kind: conversation.KindAction, Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1000.000100"},
		Action: &conversation.ActionInput{UserID: "U1", Action: conversation.Action{Name: conversation.ActionStop, Arg: "msg:T1:C1:1000.000200"}}}
	if ok, err := s.Submit(ctx, stop); ok || err == nil {
		t.Errorf("Submit = %v, %v; want an error: the stop was not passed on", ok, err)
	}
}
