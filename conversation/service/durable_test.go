package service_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/store/sqlite"
)

// errUnavailable is a store error that may go away, as the stores report it.
var errUnavailable = fmt.Errorf("dial tcp 127.0.0.1:5432: connection refused: %w", conversation.ErrUnavailable)

// flakyStore fails what its switches say, and reports the inputs begun.
type flakyStore struct {
	conversation.Store
	// saveDown fails every Save that finishes an input with errUnavailable while set;
	// begun2 clears it when an input is begun a second time.
	saveDown atomic.Bool
	// enqueueDown fails Enqueue with errUnavailable while set.
	enqueueDown atomic.Bool
	// loadErr, when set, fails every Load with it.
	loadErr atomic.Pointer[error]
	// workflowsErr, when set, fails every Workflows with it.
	workflowsErr atomic.Pointer[error]
	begun        atomic.Int32
}

func (s *flakyStore) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	if turn.InputID != "" && s.saveDown.Load() {
		return conversation.Saved{}, errUnavailable
	}
	return s.Store.Save(ctx, turn)
}

func (s *flakyStore) Enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	if s.enqueueDown.Load() {
		return false, errUnavailable
	}
	return s.Store.Enqueue(ctx, in)
}

func (s *flakyStore) EnqueueBatch(ctx context.Context, ins []conversation.Input) ([]bool, error) {
	if s.enqueueDown.Load() {
		return nil, errUnavailable
	}
	return s.Store.EnqueueBatch(ctx, ins)
}

func (s *flakyStore) AcquireBegin(ctx context.Context, k conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, *conversation.Input, bool, error) {
	l, prev, in, ok, err := s.Store.AcquireBegin(ctx, k, owner, ttl)
	s.counted(in)
	return l, prev, in, ok, err
}

func (s *flakyStore) Begin(ctx context.Context, l conversation.Lease) (*conversation.Input, error) {
	in, err := s.Store.Begin(ctx, l)
	s.counted(in)
	return in, err
}

func (s *flakyStore) Next(ctx context.Context, l conversation.Lease, call int64) (*conversation.Input, bool, error) {
	in, released, err := s.Store.Next(ctx, l, call)
	s.counted(in)
	return in, released, err
}

// counted counts in, an input begun (nil: none), and lets Save succeed from its
// second attempt on.
func (s *flakyStore) counted(in *conversation.Input) {
	if in != nil {
		s.begun.Add(1)
		if in.Attempts >= 2 {
			s.saveDown.Store(false)
		}
	}
}

func (s *flakyStore) Load(ctx context.Context, k conversation.Key, recent int) (*conversation.Checkpoint, error) {
	if err := s.loadErr.Load(); err != nil {
		return nil, *err
	}
	return s.Store.Load(ctx, k, recent)
}

func (s *flakyStore) Workflows(ctx context.Context, teamID, channelID, startedBy string, limit int) ([]conversation.WorkflowRef, error) {
	if err := s.workflowsErr.Load(); err != nil {
		return nil, *err
	}
	return s.Store.Workflows(ctx, teamID, channelID, startedBy, limit)
}

// countingExecutor answers "re: <text>" and counts its calls.
type countingExecutor struct{ calls atomic.Int32 }

func (e *countingExecutor) Execute(ctx context.Context, p conversation.Prompt, _ conversation.Progress) (conversation.Findings, error) {
	if err := ctx.Err(); err != nil {
		return conversation.Findings{}, err
	}
	e.calls.Add(1)
	return conversation.Findings{Answer: "re: " + p.Text}, nil
}

// TestServiceReRunSavesThePostedAnswer: the answer was posted but its save failed for
// longer than the final writes may take, so the input stays pending and runs again.
// The re-run finds the whole answer in the thread and saves it: the model is not asked
// again and the thread shows one answer.
func TestServiceReRunSavesThePostedAnswer(t *testing.T) {
	st := &flakyStore{Store: openStore(t, t.TempDir())}
	st.saveDown.Store(true)
	msgr, exec := newMessenger(), &countingExecutor{}
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: exec, FinalTimeout: 300 * time.Millisecond})
	submit(t, svc, mention(key, "100.0", "what is up?"))
	if got := msgr.wait(t); got != "re: what is up?" {
		t.Fatalf("reply %q", got)
	}
	cp := waitSaved(t, st, key, 2)
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := st.begun.Load(); n != 2 {
		t.Fatalf("the input was begun %d times; want 2 (the re-run)", n)
	}
	if n := exec.calls.Load(); n != 1 {
		t.Fatalf("the executor ran %d times; want once", n)
	}
	if got := msgr.thread(key); !slices.Equal(got, []string{"re: what is up?"}) {
		t.Fatalf("thread shows %q; want the answer once", got)
	}
	if cp.Messages[1].Text != "re: what is up?" || cp.Messages[1].SlackTS == "" {
		t.Fatalf("saved answer %+v", cp.Messages[1])
	}
}

// TestServiceReRunReplacesWorkflowCards: a workflow step posted its cards, then could
// not save. The re-run posts its cards in place of the earlier ones (chat.update), so
// the thread shows each card once.
func TestServiceReRunReplacesWorkflowCards(t *testing.T) {
	st := &flakyStore{Store: openStore(t, t.TempDir())}
	st.saveDown.Store(true)
	msgr := newMessenger()
	agent := &scriptedAgent{fail: map[string]error{}}
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: &echo{}, Workflows: builtins(t), Agent: agent,
		FinalTimeout: 300 * time.Millisecond})
	submit(t, svc, mention(key, "100.0", "start product-brief"))
	waitSaved(t, st, key, 1)
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := msgr.thread(key)
	if len(got) != 2 {
		t.Fatalf("thread shows %d messages, want the start card and the options once: %q", len(got), got)
	}
	replaced := 0
	for _, p := range drainPosted(msgr) {
		if strings.HasPrefix(p, "(replaced) ") {
			replaced++
		}
	}
	if replaced != 2 {
		t.Fatalf("%d posts replaced an earlier run's; want 2", replaced)
	}
}

func drainPosted(m *fakeMessenger) []string {
	var out []string
	for {
		select {
		case s := <-m.posted:
			out = append(out, s)
		default:
			return out
		}
	}
}

// TestServiceSpoolsWhileTheStoreIsDown: while the store does not answer, inputs are
// kept in the spool (Submit succeeds, so the event may be acked); once it answers,
// they are moved into it and answered, in order. The channel queues a person's
// messages: under interrupt, a sweep that begins the first's turn before the drain
// stores the second lets the second stop it, as a newer message does
// (docs/architecture.md, "Double texting"; turns.TestDrainStopsNoTurnOfItsOwn tests
// that the drain itself starts no turn before both are in).
func TestServiceSpoolsWhileTheStoreIsDown(t *testing.T) {
	st := &flakyStore{Store: openStore(t, t.TempDir())}
	spool, err := sqlite.OpenSpool(context.Background(), filepath.Join(t.TempDir(), "spool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { spool.Close() })
	msgr, exec := newMessenger(), &echo{}
	queue := func(conversation.Key) conversation.DoubleTexting { return conversation.DoubleTextingQueue }
	svc := newService(t, service.Config{Store: st, Spool: spool, Messenger: msgr, Executor: exec, DoubleTexting: queue})
	st.enqueueDown.Store(true)
	for _, in := range []conversation.Input{mention(key, "100.0", "first"), reply(key, "100.1", "second")} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ok, err := svc.Submit(ctx, in)
		cancel()
		if err != nil || !ok {
			t.Fatalf("Submit while the store is down = %v, %v; want the input spooled", ok, err)
		}
	}
	if n, err := spool.Len(context.Background()); err != nil || n != 2 {
		t.Fatalf("spooled %d, %v; want 2", n, err)
	}
	st.enqueueDown.Store(false)
	if got := msgr.wait(t); got != "re: first" {
		t.Fatalf("first reply %q", got)
	}
	if got := msgr.wait(t); got != "re: second" {
		t.Fatalf("second reply %q", got)
	}
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := spool.Len(context.Background()); n != 0 {
		t.Fatalf("%d inputs left in the spool", n)
	}
	if h := exec.prompts[1].History; len(h) != 2 || h[0].Text != "first" {
		t.Fatalf("the second turn's history %+v lacks the first", h)
	}
}

// TestServiceWithoutSpoolFailsSubmit: without a spool, an input the store cannot take
// is refused, so that the event is not acked and Slack delivers it again.
func TestServiceWithoutSpoolFailsSubmit(t *testing.T) {
	st := &flakyStore{Store: openStore(t, t.TempDir())}
	st.enqueueDown.Store(true)
	svc := newService(t, service.Config{Store: st, Messenger: newMessenger(), Executor: &echo{}})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := svc.Submit(ctx, mention(key, "100.0", "hello")); !errors.Is(err, conversation.ErrUnavailable) {
		t.Fatalf("Submit = %v; want ErrUnavailable", err)
	}
}

// TestServiceGivesUpAfterMaxAttempts: a click whose turns keep failing is tried
// MaxAttempts times, then given up: the person is told and the input finishes.
func TestServiceGivesUpAfterMaxAttempts(t *testing.T) {
	st := &flakyStore{Store: openStore(t, t.TempDir())}
	broken := errors.New("checkpoint unreadable")
	st.loadErr.Store(&broken)
	msgr := newMessenger()
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: &echo{}, Workflows: builtins(t),
		Agent: &scriptedAgent{fail: map[string]error{}}, MaxAttempts: 2})
	click := conversation.Input{ID: "int:T1:click", Key: key, Kind: conversation.KindAction, Action: &conversation.ActionInput{
		Action: conversation.Action{Name: conversation.ActionApprove, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: "problem"}, UserID: "U2"}}
	submit(t, svc, click)
	if got := msgr.wait(t); !strings.HasPrefix(got, "(ephemeral) Sorry, I could not finish this after 2 attempts") {
		t.Fatalf("posted %q", got)
	}
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := st.begun.Load(); n != 3 {
		t.Fatalf("begun %d times; want 3 (2 attempts, then the one that gives up)", n)
	}
	if orphans, err := st.Orphans(context.Background(), 10); err != nil || len(orphans) != 0 {
		t.Fatalf("pending threads %v, %v; want the input finished", orphans, err)
	}
}

// TestServiceTurnTimeoutSaysSoAndSaves: a turn past TurnTimeout says it took too long,
// saves, and finishes its input (it is not run again).
func TestServiceTurnTimeoutSaysSoAndSaves(t *testing.T) {
	st := &flakyStore{Store: openStore(t, t.TempDir())}
	var calls atomic.Int32
	slow := executorFunc(func(ctx context.Context, p conversation.Prompt) (conversation.Findings, error) {
		calls.Add(1)
		<-ctx.Done()
		return conversation.Findings{}, fmt.Errorf("model: %w", ctx.Err())
	})
	msgr := newMessenger()
	// The deadline covers the turn's work before the model too (Load, the status): 2 s
	// leaves a loaded machine's stall there out of it, so the model is what times out.
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: slow, TurnTimeout: 2 * time.Second})
	submit(t, svc, mention(key, "100.0", "slow"))
	if got := msgr.wait(t); !strings.HasPrefix(got, "Sorry, that took too long") {
		t.Fatalf("reply %q", got)
	}
	cp := waitSaved(t, st, key, 2)
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cp.Messages[1].Text, "Sorry, that took too long") || calls.Load() != 1 || st.begun.Load() != 1 {
		t.Fatalf("saved %q after %d model calls and %d attempts; want the timeout reply, once", cp.Messages[1].Text, calls.Load(), st.begun.Load())
	}
}

// TestServiceShowsQueued: a thread whose input waits for a turn slot shows it in its
// status.
func TestServiceShowsQueued(t *testing.T) {
	exec := &blockingExecutor{started: make(chan string, 4), release: make(chan struct{})}
	msgr := newMessenger()
	svc := newService(t, service.Config{Messenger: msgr, Executor: exec, MaxConcurrentTurns: 1})
	submit(t, svc, mention(key, "100.0", "first"))
	<-exec.started
	other := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "500.0"}
	submit(t, svc, mention(other, "500.0", "second"))
	waitUntil(t, "the second thread to show it is queued", func() bool {
		msgr.mu.Lock()
		defer msgr.mu.Unlock()
		return slices.Contains(msgr.statuses, turns.StatusQueued)
	})
	close(exec.release)
	if got := <-exec.started; got != "second" {
		t.Fatalf("next turn %q", got)
	}
}

// TestServiceQueuedOnlyWithAnInputWaiting: with one turn slot, the second thread's
// input shows that it is queued, and the first thread, whose worker waits for the
// slot again after its turn only to find nothing pending, never does: it used to show
// "is waiting in line…" after its answer.
func TestServiceQueuedOnlyWithAnInputWaiting(t *testing.T) {
	exec := &blockingExecutor{started: make(chan string, 4), release: make(chan struct{})}
	msgr := newMessenger()
	svc := newService(t, service.Config{Messenger: msgr, Executor: exec, MaxConcurrentTurns: 1})
	submit(t, svc, mention(key, "100.0", "first"))
	<-exec.started
	other := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "500.0"}
	submit(t, svc, mention(other, "500.0", "second"))
	queued := func(k conversation.Key) bool {
		msgr.mu.Lock()
		defer msgr.mu.Unlock()
		return slices.Contains(msgr.statusesOf[k], turns.StatusQueued)
	}
	waitUntil(t, "the second thread to show it is queued", func() bool { return queued(other) })
	exec.release <- struct{}{} // the first turn ends; the second takes the slot
	if got := <-exec.started; got != "second" {
		t.Fatalf("next turn %q", got)
	}
	exec.release <- struct{}{}
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if queued(key) {
		msgr.mu.Lock()
		defer msgr.mu.Unlock()
		t.Errorf("the first thread showed %q after its turn: statuses %q", turns.StatusQueued, msgr.statusesOf[key])
	}
}

// TestServiceChannelCommandFailureIsTold: a channel command that keeps failing is
// tried again, and after its last attempt the person is told.
func TestServiceChannelCommandFailureIsTold(t *testing.T) {
	st := &flakyStore{Store: openStore(t, t.TempDir())}
	broken := errors.New("index corrupt")
	st.workflowsErr.Store(&broken)
	msgr := newMessenger()
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: &echo{}, Workflows: builtins(t),
		Agent: &scriptedAgent{fail: map[string]error{}}, MaxAttempts: 2})
	cmd := conversation.Input{ID: "int:T1:cmd", Key: conversation.Key{TeamID: "T1", ChannelID: "C1"}, Kind: conversation.KindCommand,
		Command: &conversation.CommandInput{Source: conversation.SourceSlash, UserID: "U1", Line: "status"}}
	submit(t, svc, cmd)
	if got := msgr.wait(t); !strings.HasPrefix(got, "(ephemeral) Sorry, something went wrong") {
		t.Fatalf("posted %q", got)
	}
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := st.begun.Load(); n != 2 {
		t.Fatalf("begun %d times; want 2", n)
	}
}

// lostAnswerStore loses the answer of the first Acquire (or AcquireBegin) that
// succeeds: it commits, but the caller sees the connection drop (ErrUnavailable).
type lostAnswerStore struct {
	conversation.Store
	once sync.Once
}

func (s *lostAnswerStore) Acquire(ctx context.Context, k conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, bool, error) {
	l, prev, ok, err := s.Store.Acquire(ctx, k, owner, ttl)
	lost := false
	s.once.Do(func() { lost = err == nil && ok })
	if lost {
		return conversation.Lease{}, "", false, errUnavailable
	}
	return l, prev, ok, err
}

func (s *lostAnswerStore) AcquireBegin(ctx context.Context, k conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, *conversation.Input, bool, error) {
	l, prev, in, ok, err := s.Store.AcquireBegin(ctx, k, owner, ttl)
	lost := false
	s.once.Do(func() { lost = err == nil && ok })
	if lost {
		return conversation.Lease{}, "", nil, false, errUnavailable
	}
	return l, prev, in, ok, err
}

// TestServiceAcquireWhoseAnswerWasLost: an Acquire commits but its answer is lost; the
// retry takes the process's own lease again, and the input is answered (before, the
// lease stayed this process's, renewed for nobody, and the thread was stranded).
func TestServiceAcquireWhoseAnswerWasLost(t *testing.T) {
	st := &lostAnswerStore{Store: openStore(t, t.TempDir())}
	msgr := newMessenger()
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: &echo{}, LeaseTTL: time.Second})
	submit(t, svc, mention(key, "100.0", "hello"))
	if got := msgr.wait(t); got != "re: hello" {
		t.Fatalf("reply %q", got)
	}
}

// earlyRenewStore makes one Renew read the leases before the worker's first Acquire
// (or AcquireBegin) commits and return only after that Acquire returned (it waited on
// a lock, or its reply was slow).
type earlyRenewStore struct {
	conversation.Store
	acquiring, renewRead, acquired chan struct{}
	acqOnce, renewOnce             sync.Once
}

func (s *earlyRenewStore) Acquire(ctx context.Context, k conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, bool, error) {
	first := false
	s.acqOnce.Do(func() { first = true })
	if !first {
		return s.Store.Acquire(ctx, k, owner, ttl)
	}
	close(s.acquiring)
	<-s.renewRead
	defer close(s.acquired)
	return s.Store.Acquire(ctx, k, owner, ttl)
}

func (s *earlyRenewStore) AcquireBegin(ctx context.Context, k conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, *conversation.Input, bool, error) {
	first := false
	s.acqOnce.Do(func() { first = true })
	if !first {
		return s.Store.AcquireBegin(ctx, k, owner, ttl)
	}
	close(s.acquiring)
	<-s.renewRead
	defer close(s.acquired)
	return s.Store.AcquireBegin(ctx, k, owner, ttl)
}

func (s *earlyRenewStore) Renew(ctx context.Context, owner string, ttl time.Duration) ([]conversation.LeaseState, error) {
	select {
	case <-s.acquiring:
	default:
		return s.Store.Renew(ctx, owner, ttl)
	}
	mine := false
	s.renewOnce.Do(func() { mine = true })
	if !mine {
		return s.Store.Renew(ctx, owner, ttl)
	}
	states, err := s.Store.Renew(ctx, owner, ttl)
	close(s.renewRead)
	<-s.acquired
	return states, err
}

// TestServiceRenewThatOverlapsAcquire: a Renew that read the leases before an Acquire
// committed, and returned after it, does not make the new lease look taken over.
func TestServiceRenewThatOverlapsAcquire(t *testing.T) {
	st := &earlyRenewStore{Store: openStore(t, t.TempDir()),
		acquiring: make(chan struct{}), renewRead: make(chan struct{}), acquired: make(chan struct{})}
	msgr := newMessenger()
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: &echo{}, LeaseTTL: time.Second})
	submit(t, svc, mention(key, "100.0", "hello"))
	if got := msgr.wait(t); got != "re: hello" {
		t.Fatalf("reply %q", got)
	}
}

// downStore does not answer at all: every call fails as a refused connection.
type downStore struct{ conversation.Store }

func (downStore) Enqueue(context.Context, conversation.Input) (bool, error) {
	return false, errUnavailable
}
func (downStore) EnqueueBatch(context.Context, []conversation.Input) ([]bool, error) {
	return nil, errUnavailable
}
func (downStore) Exists(context.Context, conversation.Key) (bool, error) {
	return false, errUnavailable
}

// TestServiceShutdownWhileTheSpoolCannotDrain: Shutdown returns although the store is
// down and inputs wait in the spool (they drain at the next start).
func TestServiceShutdownWhileTheSpoolCannotDrain(t *testing.T) {
	dir := t.TempDir()
	sp, err := sqlite.OpenSpool(context.Background(), filepath.Join(dir, "spool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	svc, err := service.NewService(service.Config{Store: downStore{openStore(t, dir)}, Messenger: newMessenger(),
		Executor: &echo{}, Synthesizer: plainSynth{}, Spool: sp, LeaseTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	if ok, err := svc.Submit(ctx, mention(key, "100.0", "hello")); !ok || err != nil {
		t.Fatalf("Submit = %v, %v; want spooled", ok, err)
	}
	cancel()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		done <- svc.Shutdown(ctx)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown did not return while the spool could not drain")
	}
	if n, _ := sp.Len(context.Background()); n != 1 {
		t.Fatalf("%d inputs spooled after Shutdown; want the 1, for the next start", n)
	}
}

// hangingStore's Enqueue never answers: it returns when its context ends, with the
// context's error, as database/sql does for a black-holed host or a full pool.
type hangingStore struct{ conversation.Store }

func (hangingStore) Enqueue(ctx context.Context, _ conversation.Input) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}

func (hangingStore) EnqueueBatch(ctx context.Context, _ []conversation.Input) ([]bool, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestServiceSpoolsWhenTheStoreHangs: a store that does not answer within the ack
// budget is as good as down: the input is spooled.
func TestServiceSpoolsWhenTheStoreHangs(t *testing.T) {
	dir := t.TempDir()
	sp, err := sqlite.OpenSpool(context.Background(), filepath.Join(dir, "spool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	svc := newService(t, service.Config{Store: hangingStore{openStore(t, dir)}, Spool: sp, Messenger: newMessenger(), Executor: &echo{}})
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond) // the bot's ack budget
	defer cancel()
	if ok, err := svc.Submit(ctx, mention(key, "100.0", "hello")); !ok || err != nil {
		t.Fatalf("Submit = %v, %v; want spooled", ok, err)
	}
	if n, _ := sp.Len(context.Background()); n != 1 {
		t.Fatalf("spooled %d; want 1", n)
	}
}

// hangingThreadStore's Exists never answers either, as hangingStore's Enqueue.
type hangingThreadStore struct{ hangingStore }

func (hangingThreadStore) Exists(ctx context.Context, _ conversation.Key) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}

// deafThreadStore's Exists never answers, whatever its context (as a query on a
// connection that hangs, which lib/pq does not interrupt), until the test ends; its
// other calls answer. Each call sends on asked, if there is room.
type deafThreadStore struct {
	conversation.Store
	gone  <-chan struct{}
	asked chan<- struct{}
}

func (s deafThreadStore) Exists(context.Context, conversation.Key) (bool, error) {
	select {
	case s.asked <- struct{}{}:
	default:
	}
	<-s.gone
	return false, errors.New("the test ended")
}

// deafAmendStore's Amend never answers either, whatever its context.
type deafAmendStore struct{ deafThreadStore }

func (s deafAmendStore) Amend(context.Context, string, string, bool) (bool, error) {
	<-s.gone
	return false, errors.New("the test ended")
}

// TestServiceSpoolsAReplyWhenTheStoreHangs: a thread reply without a mention, in a
// thread this process does not hold, asks the store whether the thread is the bot's;
// a store that does not answer leaves the reply time to be spooled before the
// caller's deadline (the ack's), and the drain asks again. The reply is spooled, not
// stored unchecked, even where the store takes inputs (Exists alone hangs), and even
// where the store call ignores its context; the drain's own check, which hangs too,
// does not hold up Shutdown. An edit of a waiting message, whose thread is not
// checked, is spooled without trying to amend that message (Store.Amend).
func TestServiceSpoolsAReplyWhenTheStoreHangs(t *testing.T) {
	type hang struct{ gone, asked chan struct{} }
	deaf := func(st conversation.Store, h hang) conversation.Store { return deafThreadStore{st, h.gone, h.asked} }
	for _, c := range []struct {
		name  string
		store func(conversation.Store, hang) conversation.Store
		// asks is how often the store is asked whether the thread is the bot's, Submit
		// and the drain, before Shutdown, with a store that hangs whatever the context
		// (0: one that does not).
		asks   int
		edit   bool          // the reply is an edit
		budget time.Duration // Submit's time (0: the bot's ack budget, 2.5 s)
	}{
		{"Hangs", func(st conversation.Store, _ hang) conversation.Store { return hangingThreadStore{hangingStore{st}} }, 0, false, 0},
		{"OnlyExistsHangs", func(st conversation.Store, _ hang) conversation.Store { return hangingOnlyThreadStore{st} }, 0, false, 0},
		{"IgnoresItsContext", deaf, 2, false, 0},
		{"AnEditWhoseAmendHangs", func(st conversation.Store, h hang) conversation.Store {
			return deafAmendStore{deafThreadStore{st, h.gone, h.asked}}
		}, 2, true, 0},
		// Submit comes late, its envelope having waited on its lane: the check
		// takes what is left but the spool's reserve, or, with less than that
		// left, but the grace's.
		{"LateAndIgnoresItsContext", deaf, 2, false, 800 * time.Millisecond},
		// 475 ms: the middle of the 250 ms reserve's band (0.35 to 0.6 s left).
		{"VeryLate", func(st conversation.Store, _ hang) conversation.Store { return hangingOnlyThreadStore{st} }, 0, false, 475 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sp, err := sqlite.OpenSpool(context.Background(), filepath.Join(dir, "spool.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sp.Close() })
			st := openStore(t, dir)
			h := hang{make(chan struct{}), make(chan struct{}, 2)}
			svc := newService(t, service.Config{Store: c.store(st, h), Spool: sp, Messenger: newMessenger(), Executor: &echo{}})
			// Before newService's Shutdown, should shutdownOrHang fail.
			t.Cleanup(func() { close(h.gone) })
			budget := c.budget
			if budget == 0 {
				budget = 2500 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), budget)
			defer cancel()
			in := reply(key, "100.1", "and also")
			if c.edit {
				in.ID, in.Kind = conversation.EditInputID(key.TeamID, key.ChannelID, "100.1", "100.2"), conversation.KindEdit
			}
			if ok, err := submitOrHang(t, ctx, svc, in); !ok || err != nil {
				t.Fatalf("Submit = %v, %v; want spooled", ok, err)
			}
			if err := ctx.Err(); err != nil {
				t.Fatalf("Submit returned once its context had ended (%v): the ack would be late", err)
			}
			if n, _ := sp.Len(context.Background()); n != 1 {
				if ok, _ := st.Enqueued(context.Background(), in.ID); ok {
					t.Fatal("the reply was stored with its thread unchecked; want it spooled, for the drain to check")
				}
				t.Fatalf("spooled %d; want 1", n)
			}
			for i := range c.asks {
				select {
				case <-h.asked:
				case <-time.After(30 * time.Second):
					t.Fatalf("the store was asked %d times whether the thread is the bot's; want %d", i, c.asks)
				}
			}
			shutdownOrHang(t, svc)
		})
	}
}

// shutdownOrHang shuts svc down, failing the test when Shutdown does not return within
// 30 s (a bound on a failure: it waits for a store call that hangs).
func shutdownOrHang(t *testing.T, svc *service.Service) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown did not return: it waits for a store call that hangs")
	}
}

// submitOrHang returns Submit's outcome, failing the test when Submit does not return
// within 30 s (a bound on a failure: it waits for a store call that hangs).
func submitOrHang(t *testing.T, ctx context.Context, svc *service.Service, in conversation.Input) (bool, error) {
	t.Helper()
	type submitted struct {
		ok  bool
		err error
	}
	done := make(chan submitted, 1)
	go func() {
		ok, err := svc.Submit(ctx, in)
		done <- submitted{ok, err}
	}()
	select {
	case r := <-done:
		return r.ok, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("Submit did not return: it waits for a store call that hangs")
		return false, nil
	}
}

// hangingOnlyThreadStore's Exists never answers, as hangingThreadStore's; it takes
// inputs.
type hangingOnlyThreadStore struct{ conversation.Store }

func (hangingOnlyThreadStore) Exists(ctx context.Context, _ conversation.Key) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}

// hangingSignalStore's Signal never answers, as hangingStore's Enqueue; with gone
// set, it ignores its context too, until gone is closed.
type hangingSignalStore struct {
	conversation.Store
	gone <-chan struct{}
}

func (s hangingSignalStore) Signal(ctx context.Context, _ conversation.Key, _ conversation.StopRequest) error {
	if s.gone != nil {
		<-s.gone
		return errors.New("the test ended")
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestServiceStoresAPipelineStopWhenItsSignalHangs: a pipeline's Stop is passed on
// to the process running the run (Store.Signal) in one short try, and stored for the
// thread's next turn; a Signal that does not answer, even one that ignores its
// context, leaves the ack budget to the store.
func TestServiceStoresAPipelineStopWhenItsSignalHangs(t *testing.T) {
	gone := make(chan struct{})
	t.Cleanup(func() { close(gone) })
	for _, c := range []struct {
		name string
		gone <-chan struct{}
	}{{"Hangs", nil}, {"IgnoresItsContext", gone}} {
		t.Run(c.name, func(t *testing.T) {
			st := openStore(t, t.TempDir())
			svc := newService(t, service.Config{Store: hangingSignalStore{st, c.gone}, Messenger: newMessenger(), Executor: &echo{}})
			ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond) // the bot's ack budget
			defer cancel()
			stop := conversation.Input{ID: "int:T1:stop-run", Key: key, Kind: conversation.KindAction,
				Action: &conversation.ActionInput{Action: conversation.Action{Name: conversation.ActionStop, Arg: conversation.RunStopPrefix + "r1"}, UserID: "U1"}}
			if ok, err := submitOrHang(t, ctx, svc, stop); !ok || err != nil {
				t.Fatalf("Submit = %v, %v; want stored", ok, err)
			}
			if err := ctx.Err(); err != nil {
				t.Fatalf("Submit returned once its context had ended (%v): the ack would be late", err)
			}
			if ok, err := st.Enqueued(context.Background(), stop.ID); !ok || err != nil {
				t.Fatalf("Enqueued = %v, %v; want the Stop stored for the thread's next turn", ok, err)
			}
		})
	}
}

// deafCountStore's CountPending never answers, whatever its context.
type deafCountStore struct {
	conversation.Store
	gone <-chan struct{}
}

func (s deafCountStore) CountPending(context.Context, conversation.Key, string, int) (conversation.PendingCounts, error) {
	<-s.gone
	return conversation.PendingCounts{}, errors.New("the test ended")
}

// TestServiceChecksLeaveTheAckItsTime: Submit's store calls before it stores an
// input (an edit's amend of the message it edits, the count of a queue bound, the
// Stop of a turn passed on) end a second before the caller's deadline
// (checkReserve; the Stop, stored nowhere, half a second), even on a connection that
// ignores its context: the input is still stored, or the person told, before the ack
// is due. Submit may come late (its envelope waited on its lane): with 0.85 s left,
// the amend and the count end half a second before the deadline (0.85 s: the middle of
// that reserve's band, 0.6 to 1.1 s left, so that a stall before the check on a loaded
// machine does not move it to the next).
func TestServiceChecksLeaveTheAckItsTime(t *testing.T) {
	edit := mention(key, "100.1", "edited")
	edit.ID, edit.Kind = conversation.EditInputID(key.TeamID, key.ChannelID, "100.1", "100.2"), conversation.KindEdit
	stopTurn := conversation.Input{ID: "int:T1:stop-turn", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: conversation.Action{Name: conversation.ActionStop, Arg: "turn"}, UserID: "U1"}}
	for _, c := range []struct {
		name   string
		cfg    func(st conversation.Store, gone <-chan struct{}) service.Config
		in     conversation.Input
		budget time.Duration
		stored bool // else Submit fails: a turn's Stop is not stored
	}{
		{"AmendHangs", func(st conversation.Store, gone <-chan struct{}) service.Config {
			return service.Config{Store: deafAmendStore{deafThreadStore{st, gone, nil}}}
		}, edit, 850 * time.Millisecond, true},
		{"CountHangs", func(st conversation.Store, gone <-chan struct{}) service.Config {
			return service.Config{Store: deafCountStore{st, gone}, MaxQueuedPerThread: 1}
		}, mention(key, "100.1", "hi"), 850 * time.Millisecond, true},
		{"TurnStopSignalHangs", func(st conversation.Store, gone <-chan struct{}) service.Config {
			return service.Config{Store: hangingSignalStore{st, gone}}
		}, stopTurn, 2500 * time.Millisecond, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := openStore(t, t.TempDir())
			gone := make(chan struct{})
			cfg := c.cfg(st, gone)
			cfg.Messenger, cfg.Executor = newMessenger(), &echo{}
			svc := newService(t, cfg)
			// Before newService's Shutdown, should submitOrHang fail.
			t.Cleanup(func() { close(gone) })
			ctx, cancel := context.WithTimeout(context.Background(), c.budget)
			defer cancel()
			ok, err := submitOrHang(t, ctx, svc, c.in)
			if late := ctx.Err(); late != nil {
				t.Fatalf("Submit = %v, %v once its context had ended (%v): the ack would be late", ok, err, late)
			}
			switch {
			case c.stored && (!ok || err != nil):
				t.Fatalf("Submit = %v, %v; want stored", ok, err)
			case !c.stored && err == nil:
				t.Fatalf("Submit = %v, nil; want an error: the Stop was not passed on", ok)
			}
			if got, _ := st.Enqueued(context.Background(), c.in.ID); got != c.stored {
				t.Fatalf("stored: %v; want %v", got, c.stored)
			}
		})
	}
}

// TestServiceGivesUpMessagesWhoseCheckpointCannotLoad: a person's message whose turns
// fail before anything is saved (the checkpoint cannot be read) is given up after
// MaxAttempts, and the thread is free for the next input.
func TestServiceGivesUpMessagesWhoseCheckpointCannotLoad(t *testing.T) {
	st := &flakyStore{Store: openStore(t, t.TempDir())}
	msgr := newMessenger()
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: &echo{}, MaxAttempts: 2})
	bad := errors.New("decode state: invalid character")
	st.loadErr.Store(&bad)
	submit(t, svc, mention(key, "100.0", "first"))
	if got := msgr.wait(t); !strings.HasPrefix(got, "Sorry, I gave up on this message after 2 attempts") {
		t.Fatalf("posted %q", got)
	}
	if err := svc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := st.begun.Load(); n != 3 {
		t.Fatalf("begun %d times; want 3", n)
	}
}

// TestServiceClickReRunLeavesOtherMessagesAlone: a click that runs again does not take
// the bot's untagged messages after the clicked card for its own: they are not
// deleted.
func TestServiceClickReRunLeavesOtherMessagesAlone(t *testing.T) {
	st := openStore(t, t.TempDir())
	ctx := context.Background()
	msgr := newMessenger()
	msgr.mu.Lock()
	card := msgr.put(key, "a card with buttons", conversation.Tag{InputID: "older-input", N: 1}, "")
	msgr.put(key, "an answer posted untagged", conversation.Tag{}, "")
	msgr.mu.Unlock()
	click := conversation.Input{ID: "int:T1:click", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: conversation.Action{Name: conversation.ActionApprove, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: "a"},
			UserID: "U1", MessageTS: card}}
	if _, err := st.Enqueue(ctx, click); err != nil {
		t.Fatal(err)
	}
	l, _, ok, err := st.Acquire(ctx, key, "dead", time.Nanosecond) // its first run died
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, err := st.Begin(ctx, l); err != nil {
		t.Fatal(err)
	}
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: &echo{}})
	waitUntil(t, "the click to be finished", func() bool {
		orphans, err := st.Orphans(ctx, 10)
		return err == nil && len(orphans) == 0 && !svc.Holds(key)
	})
	if got := msgr.thread(key); !slices.Contains(got, "an answer posted untagged") {
		t.Fatalf("the re-run of a click deleted a message it never posted: thread now %q", got)
	}
}
