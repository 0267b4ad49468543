package service_test

import (
	"context"
	"fmt"
	"path/filepath"
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

// notice is an ephemeral message as noticeMessenger records it.
type notice struct {
	key        conversation.Key
	user, text string
}

// noticeMessenger is a fakeMessenger that keeps the ephemeral messages apart.
type noticeMessenger struct {
	*fakeMessenger
	mu      sync.Mutex
	notices []notice
}

func (m *noticeMessenger) PostEphemeral(ctx context.Context, key conversation.Key, user, text string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notices = append(m.notices, notice{key, user, text})
	return nil
}

// to returns the notices of refused inputs sent to user.
func (m *noticeMessenger) to(user string) []notice {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []notice
	for _, n := range m.notices {
		if n.user == user && strings.Contains(n.text, "I skipped") {
			out = append(out, n)
		}
	}
	return out
}

// heldExecutor holds every turn until release is closed (or the turn is cancelled),
// counting its calls: the model calls a flood would cost.
type heldExecutor struct {
	calls   atomic.Int32
	release chan struct{}
}

func (e *heldExecutor) Execute(ctx context.Context, p conversation.Prompt, _ conversation.Progress) (conversation.Findings, error) {
	e.calls.Add(1)
	select {
	case <-ctx.Done():
		return conversation.Findings{}, ctx.Err()
	case <-e.release:
		return conversation.Findings{Answer: "re: " + p.Text}, nil
	}
}

// fakeClock is a settable clock for Config.Now.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func mentionBy(user string, k conversation.Key, ts, text string) conversation.Input {
	in := mention(k, ts, text)
	in.Message.UserID = user
	return in
}

func threadKey(n int) conversation.Key {
	return conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: fmt.Sprintf("200.%d", n)}
}

func click(k conversation.Key, id, user string) conversation.Input {
	return conversation.Input{ID: id, Key: k, Kind: conversation.KindAction, Action: &conversation.ActionInput{
		Action: conversation.Action{Name: "approve", Channel: k.ChannelID, ThreadTS: k.ThreadTS}, UserID: user}}
}

// waitNotices waits until user has been sent n notices and returns them.
func waitNotices(t *testing.T, m *noticeMessenger, user string, n int) []notice {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%d notices to %s", n, user), func() bool { return len(m.to(user)) >= n })
	return m.to(user)
}

// TestServiceBoundsQueuedInputsPerUser: one person's pending inputs across threads
// stop at MaxQueuedPerUser; the rest is not queued (no model call), the person gets
// one notice, at the channel's level for top-level messages, and others are
// answered. Once the queue drains, the person is taken again.
func TestServiceBoundsQueuedInputsPerUser(t *testing.T) {
	msgr := &noticeMessenger{fakeMessenger: newMessenger()}
	exec := &heldExecutor{release: make(chan struct{})}
	svc := newService(t, service.Config{Messenger: msgr, Executor: exec, MaxQueuedPerUser: 3})
	accepted := 0
	for i := range 10 {
		k := threadKey(i)
		if submit(t, svc, mentionBy("U1", k, k.ThreadTS, "flood")) {
			accepted++
		}
	}
	if accepted != 3 {
		t.Fatalf("%d of 10 accepted; want MaxQueuedPerUser 3", accepted)
	}
	if !submit(t, svc, mentionBy("U2", threadKey(50), "200.50", "a real question")) {
		t.Fatal("another person was refused")
	}
	notices := waitNotices(t, msgr, "U1", 1)
	if !strings.Contains(notices[0].text, "You already have 3 requests waiting for me") || notices[0].key.ThreadTS != "" {
		t.Errorf("notice %+v; want the count, in the channel", notices[0])
	}
	close(exec.release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := svc.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := exec.calls.Load(); n != 4 {
		t.Errorf("%d executor calls; want 4 (3 of U1's, 1 of U2's)", n)
	}
	if n := len(msgr.to("U1")); n != 1 {
		t.Errorf("%d notices to U1; want 1", n)
	}
	if !submit(t, svc, mentionBy("U1", threadKey(99), "200.99", "later")) {
		t.Error("U1 was refused after the queue drained")
	}
}

// TestServiceBoundsQueuedInputsPerThread: a thread takes MaxQueuedPerThread pending
// inputs whoever sends them; each person refused is told in the thread; a click and a
// Stop still get through. The one turn slot is taken by another thread, so that the
// thread's inputs wait (a person's message would stop a running turn of the thread).
func TestServiceBoundsQueuedInputsPerThread(t *testing.T) {
	msgr := &noticeMessenger{fakeMessenger: newMessenger()}
	exec := &heldExecutor{release: make(chan struct{})}
	svc := newService(t, service.Config{Messenger: msgr, Executor: exec, MaxQueuedPerThread: 4, MaxQueuedPerUser: 10, MaxConcurrentTurns: 1})
	busy := mentionBy("U9", threadKey(1), "200.1", "takes the slot")
	submit(t, svc, busy)
	waitUntil(t, "the other thread's turn to run", func() bool { return exec.calls.Load() == 1 })
	root := mentionBy("U0", key, key.ThreadTS, "start")
	submit(t, svc, root)
	for i, user := range []string{"U1", "U2", "U3", "U4", "U5"} {
		in := mentionBy(user, key, fmt.Sprintf("100.%d", i+1), "more")
		if got, want := submit(t, svc, in), i < 3; got != want {
			t.Errorf("message %d of %s accepted: %v; want %v", i+1, user, got, want)
		}
	}
	for _, user := range []string{"U4", "U5"} {
		n := waitNotices(t, msgr, user, 1)[0]
		if n.key != key || !strings.Contains(n.text, "This thread already has 4 requests waiting for me") {
			t.Errorf("notice to %s: %+v", user, n)
		}
	}
	if !submit(t, svc, click(key, "int:T1:approve1", "U5")) {
		t.Error("a click in the full thread was refused")
	}
	stop := conversation.Input{ID: "int:T1:stop1", Key: busy.Key, Kind: conversation.KindAction, Action: &conversation.ActionInput{
		Action: conversation.Action{Name: conversation.ActionStop, Channel: busy.Key.ChannelID, ThreadTS: busy.Key.ThreadTS, Arg: busy.ID}, UserID: "U9"}}
	for i := range 3 { // a flood of U9's messages elsewhere does not hold back U9's Stop
		k := threadKey(10 + i)
		submit(t, svc, mentionBy("U9", k, k.ThreadTS, "more"))
	}
	if !submit(t, svc, stop) {
		t.Error("a Stop click was refused or did not stop the running turn")
	}
	close(exec.release)
}

// TestServiceBoundsQueuedInputsOfLateSubmits: a Submit with less than a second left
// (its envelope waited long on its lane, as a flooded thread's do) still counts the
// thread's pending inputs in the store, with the time left: the bound holds.
func TestServiceBoundsQueuedInputsOfLateSubmits(t *testing.T) {
	exec := &heldExecutor{release: make(chan struct{})}
	defer close(exec.release)
	svc := newService(t, service.Config{Messenger: newMessenger(), Executor: exec, MaxQueuedPerThread: 4, MaxConcurrentTurns: 1})
	busy := mentionBy("U9", threadKey(1), "200.1", "takes the slot")
	submit(t, svc, busy)
	waitUntil(t, "the other thread's turn to run", func() bool { return exec.calls.Load() == 1 })
	for i := range 6 {
		ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
		ok, err := svc.Submit(ctx, mentionBy(fmt.Sprintf("U%d", i), key, fmt.Sprintf("100.%d", i+1), "more"))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if want := i < 4; ok != want {
			t.Errorf("late message %d accepted: %v; want %v", i+1, ok, want)
		}
	}
}

// TestServiceRateLimitsEachPerson: a person's messages are taken at UserRate per
// minute after a burst of UserBurst; the notice says when to try again, and a second
// comes only after NoticeInterval; clicks have a bucket of their own, four times as
// deep.
func TestServiceRateLimitsEachPerson(t *testing.T) {
	msgr := &noticeMessenger{fakeMessenger: newMessenger()}
	clock := newClock()
	svc := newService(t, service.Config{Messenger: msgr, Executor: &echo{}, UserRate: 6, UserBurst: 2, Now: clock.Now})
	n := 0
	send := func(user string) bool {
		n++
		k := threadKey(n)
		return submit(t, svc, mentionBy(user, k, k.ThreadTS, "hi"))
	}
	for range 2 {
		if !send("U1") {
			t.Fatal("the burst was refused")
		}
	}
	if send("U1") {
		t.Fatal("a message past the burst was accepted")
	}
	if got := waitNotices(t, msgr, "U1", 1)[0].text; !strings.Contains(got, "faster than I can answer") || !strings.Contains(got, "try again in 10 seconds") {
		t.Errorf("notice %q; want the wait of one token at 6 a minute", got)
	}
	if !send("U2") {
		t.Error("another person was refused")
	}
	// Clicks: a bucket of their own, four times as deep.
	for i := range 8 {
		if !submit(t, svc, click(threadKey(1), fmt.Sprintf("int:T1:click%d", i), "U1")) {
			t.Fatalf("click %d was refused; want 8 taken with the messages' bucket empty", i+1)
		}
	}
	if submit(t, svc, click(threadKey(1), "int:T1:click8", "U1")) {
		t.Error("a ninth click was taken; want the clicks' bucket of 4 × UserBurst")
	}
	clock.Advance(5 * time.Second)
	if send("U1") {
		t.Error("accepted before a token was back")
	}
	clock.Advance(5 * time.Second)
	if !send("U1") {
		t.Error("refused once a token was back")
	}
	if send("U1") {
		t.Error("accepted with the bucket empty")
	}
	if n := len(msgr.to("U1")); n != 1 {
		t.Errorf("%d notices within NoticeInterval; want 1: %+v", n, msgr.to("U1"))
	}
	clock.Advance(turns.DefaultNoticeInterval)
	send("U1") // a full bucket again: accepted
	send("U1")
	if send("U1") {
		t.Error("accepted past the burst")
	}
	waitNotices(t, msgr, "U1", 2)
}

// TestServiceSpoolBoundsQueuedInputs: while the store is down, inputs go to the spool,
// but no more than MaxQueuedPerUser of one person's.
func TestServiceSpoolBoundsQueuedInputs(t *testing.T) {
	dir := t.TempDir()
	sp, err := sqlite.OpenSpool(context.Background(), filepath.Join(dir, "spool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	msgr := &noticeMessenger{fakeMessenger: newMessenger()}
	svc := newService(t, service.Config{Store: downStore{openStore(t, dir)}, Spool: sp, Messenger: msgr, Executor: &echo{},
		MaxQueuedPerUser: 2, MaxQueuedPerThread: 20})
	accepted := 0
	for i := range 6 {
		k := threadKey(i)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ok, err := svc.Submit(ctx, mentionBy("U1", k, k.ThreadTS, "while down"))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			accepted++
		}
	}
	if n, _ := sp.Len(context.Background()); accepted != 2 || n != 2 {
		t.Errorf("%d accepted, %d spooled; want MaxQueuedPerUser 2 of each", accepted, n)
	}
	waitNotices(t, msgr, "U1", 1)
}

// TestServiceRedactsWhatItSends: Config.Redact scrubs the texts sent to the chat, an
// error's text shown to the user included.
func TestServiceRedactsWhatItSends(t *testing.T) {
	const secret = "sk-service-secret-1234"
	msgr := newMessenger()
	failing := executorFunc(func(context.Context, conversation.Prompt) (conversation.Findings, error) {
		return conversation.Findings{}, secretErr{"Incorrect API key provided: " + secret}
	})
	svc := newService(t, service.Config{Messenger: msgr, Executor: failing,
		Redact: strings.NewReplacer(secret, "[REDACTED]").Replace})
	submit(t, svc, mention(key, "100.0", "hello"))
	if got := msgr.wait(t); got != "Incorrect API key provided: [REDACTED] Retry answers this message again." {
		t.Errorf("reply %q", got)
	}
}

type secretErr struct{ msg string }

func (e secretErr) Error() string       { return e.msg }
func (e secretErr) UserMessage() string { return e.msg }

// countingPendingStore counts the calls of CountPending.
type countingPendingStore struct {
	conversation.Store
	counts atomic.Int32
}

func (s *countingPendingStore) CountPending(ctx context.Context, key conversation.Key, userID string, limit int) (conversation.PendingCounts, error) {
	s.counts.Add(1)
	return s.Store.CountPending(ctx, key, userID, limit)
}

// TestServiceLimitsAskTheStoreOnlyNearABound: an input costs no count of pending
// inputs in the store while this process's own counts are below half the bounds; near
// one, the store is asked, and the bound holds.
func TestServiceLimitsAskTheStoreOnlyNearABound(t *testing.T) {
	st := &countingPendingStore{Store: openStore(t, t.TempDir())}
	msgr := &noticeMessenger{fakeMessenger: newMessenger()}
	exec := &heldExecutor{release: make(chan struct{})}
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: exec, MaxQueuedPerThread: 20, MaxQueuedPerUser: 10})
	for i := range 8 {
		k := threadKey(i)
		if !submit(t, svc, mentionBy(fmt.Sprintf("U%d", i), k, k.ThreadTS, "hello")) {
			t.Fatalf("input %d refused", i)
		}
	}
	if n := st.counts.Load(); n != 0 {
		t.Errorf("%d counts in the store for 8 people's first inputs; want none", n)
	}
	accepted := 1 // U0's first
	for i := range 12 {
		k := threadKey(100 + i)
		if submit(t, svc, mentionBy("U0", k, k.ThreadTS, "more")) {
			accepted++
		}
	}
	if accepted != 10 {
		t.Errorf("%d of U0's inputs accepted; want MaxQueuedPerUser 10", accepted)
	}
	if n := st.counts.Load(); n == 0 || n > 12 {
		t.Errorf("%d counts in the store; want some, near U0's bound", n)
	}
	close(exec.release)
}
