package service_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/store/sqlite"
	"github.com/threadwright/threadwright/testkit/logtest"
)

// fakeMessenger records replies and statuses; thread history is scripted. It keeps
// the bot's messages with their tags, as Slack keeps metadata, so that Posted finds
// what a turn posted and Tag.Replace edits it.
type fakeMessenger struct {
	mu       sync.Mutex
	replies  map[conversation.Key][]string
	statuses []string
	// statusesOf are the statuses set in each thread, in order.
	statusesOf map[conversation.Key][]string
	history    []conversation.Message
	failPost   error
	posted     chan string
	// updates, when set, reports UpdateCard calls on posted too.
	updates bool
	// msgs are the bot's messages per thread, oldest first; cards the cards by ts,
	// as last posted or updated.
	msgs  map[conversation.Key][]*fakeMsg
	cards map[string]conversation.Card
}

type fakeMsg struct {
	ts, text string
	tag      conversation.Tag
	file     string
}

func newMessenger() *fakeMessenger {
	return &fakeMessenger{replies: map[conversation.Key][]string{}, msgs: map[conversation.Key][]*fakeMsg{},
		cards: map[string]conversation.Card{}, posted: make(chan string, 100)}
}

// put posts text (or replaces tag.Replace with it) and returns its ts; mu is held.
func (m *fakeMessenger) put(key conversation.Key, text string, tag conversation.Tag, file string) string {
	tag.Replace = nil
	m.replies[key] = append(m.replies[key], text)
	ts := fmt.Sprintf("99.%d", len(m.replies[key])) // as Slack's ts, it grows in the thread
	m.msgs[key] = append(m.msgs[key], &fakeMsg{ts: ts, text: text, tag: tag, file: file})
	return ts
}

// replace edits the messages of replace into text and deletes the extra ones; mu is
// held. It returns the ts edited.
func (m *fakeMessenger) replace(key conversation.Key, text string, tag conversation.Tag) string {
	first := tag.Replace[0]
	var keep []*fakeMsg
	for _, msg := range m.msgs[key] {
		switch {
		case msg.ts == first:
			msg.text, msg.tag = text, conversation.Tag{InputID: tag.InputID, N: tag.N, Answer: tag.Answer, Final: tag.Final}
			keep = append(keep, msg)
		case slices.Contains(tag.Replace[1:], msg.ts):
		default:
			keep = append(keep, msg)
		}
	}
	m.msgs[key] = keep
	return first
}

func (m *fakeMessenger) PostReply(ctx context.Context, key conversation.Key, text string, tag conversation.Tag) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failPost != nil {
		m.posted <- text
		return "", m.failPost
	}
	if len(tag.Replace) > 0 {
		m.posted <- "(replaced) " + text
		return m.replace(key, text, tag), nil
	}
	m.posted <- text
	return m.put(key, text, tag, ""), nil
}

func (m *fakeMessenger) SetStatus(ctx context.Context, key conversation.Key, status string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.statuses = append(m.statuses, status)
	if m.statusesOf == nil {
		m.statusesOf = map[conversation.Key][]string{}
	}
	m.statusesOf[key] = append(m.statusesOf[key], status)
	return nil
}

func (m *fakeMessenger) ThreadHistory(ctx context.Context, _ conversation.Key, _ string, _ int) ([]conversation.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]conversation.Message(nil), m.history...), nil
}

func (m *fakeMessenger) PostCard(ctx context.Context, key conversation.Key, c conversation.Card, tag conversation.Tag) (string, error) {
	ts, err := m.PostReply(ctx, key, c.Text, tag)
	if err == nil {
		m.mu.Lock()
		m.cards[ts] = c
		m.mu.Unlock()
	}
	return ts, err
}

// card returns the card last posted or updated at ts.
func (m *fakeMessenger) card(ts string) conversation.Card {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cards[ts]
}

// buttons returns the labels of the card at ts's buttons.
func (m *fakeMessenger) buttons(ts string) []string {
	var out []string
	for _, b := range m.card(ts).Blocks {
		for _, btn := range b.Buttons {
			out = append(out, btn.Label)
		}
	}
	return out
}

// cardText returns the texts of the card at ts's blocks, joined.
func (m *fakeMessenger) cardText(ts string) string {
	var out []string
	for _, b := range m.card(ts).Blocks {
		out = append(out, b.Text)
	}
	return strings.Join(out, "\n")
}

func (m *fakeMessenger) UpdateCard(ctx context.Context, key conversation.Key, ts string, c conversation.Card) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, msg := range m.msgs[key] {
		if msg.ts == ts {
			msg.text = c.Text
		}
	}
	m.cards[ts] = c
	if m.updates {
		m.posted <- "(update " + ts + ") " + c.Text
	}
	return nil
}

func (m *fakeMessenger) Delete(ctx context.Context, key conversation.Key, ts string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs[key] = slices.DeleteFunc(m.msgs[key], func(msg *fakeMsg) bool { return msg.ts == ts })
	m.posted <- "(deleted " + ts + ")"
	return nil
}

func (m *fakeMessenger) PostEphemeral(ctx context.Context, _ conversation.Key, _ string, text string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.posted <- "(ephemeral) " + text
	return nil
}

func (m *fakeMessenger) PostEphemeralCard(ctx context.Context, _ conversation.Key, _ string, c conversation.Card) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.posted <- "(ephemeral) " + c.Text
	return nil
}

func (m *fakeMessenger) Upload(ctx context.Context, key conversation.Key, f conversation.File, tag conversation.Tag) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(tag.Replace) > 0 {
		m.posted <- "(file kept) " + f.Name
		return nil
	}
	m.mu.Lock()
	m.put(key, f.Comment, conversation.Tag{}, f.Name)
	m.mu.Unlock()
	m.posted <- "(file) " + f.Name
	return nil
}

func (m *fakeMessenger) UserLocale(ctx context.Context, _ string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return "en-US", nil
}

// Posted returns the thread's messages tagged with inputID, and its untagged ones
// newer than after.
func (m *fakeMessenger) Posted(ctx context.Context, key conversation.Key, inputID, after string) ([]conversation.Posted, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []conversation.Posted
	for _, msg := range m.msgs[key] {
		if msg.tag.InputID == inputID || msg.tag.InputID == "" && msg.ts > after {
			out = append(out, conversation.Posted{TS: msg.ts, Tag: msg.tag, Of: 1, Text: msg.text, File: msg.file})
		}
	}
	return out, nil
}

// thread returns the texts of the bot's messages in the thread of key, oldest first.
func (m *fakeMessenger) thread(key conversation.Key) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, msg := range m.msgs[key] {
		out = append(out, msg.text)
	}
	return out
}

func (m *fakeMessenger) wait(t *testing.T) string {
	t.Helper()
	select {
	case text := <-m.posted:
		return text
	case <-time.After(10 * time.Second):
		t.Fatal("no reply posted")
		return ""
	}
}

// executorFunc adapts a function to conversation.Executor.
type executorFunc func(ctx context.Context, p conversation.Prompt) (conversation.Findings, error)

func (f executorFunc) Execute(ctx context.Context, p conversation.Prompt, _ conversation.Progress) (conversation.Findings, error) {
	return f(ctx, p)
}

// echo answers "re: <text>" and records the prompts it saw.
type echo struct {
	mu      sync.Mutex
	prompts []conversation.Prompt
}

func (e *echo) Execute(ctx context.Context, p conversation.Prompt, _ conversation.Progress) (conversation.Findings, error) {
	if err := ctx.Err(); err != nil {
		return conversation.Findings{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.prompts = append(e.prompts, p)
	return conversation.Findings{Answer: "re: " + p.Text, Usage: conversation.Usage{PromptTokens: 10, CompletionTokens: 2}}, nil
}

type plainSynth struct{}

func (plainSynth) Synthesize(ctx context.Context, _ conversation.Prompt, f conversation.Findings) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return f.Answer, nil
}

type scopeFunc func(p conversation.Prompt) conversation.Verdict

func (f scopeFunc) CheckScope(ctx context.Context, p conversation.Prompt) (conversation.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return conversation.Verdict{}, err
	}
	return f(p), nil
}

func openStore(t testing.TB, dir string) conversation.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "tw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newService(t testing.TB, cfg service.Config) *service.Service {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = openStore(t, t.TempDir())
	}
	if cfg.Synthesizer == nil {
		cfg.Synthesizer = plainSynth{}
	}
	if cfg.LeaseTTL == 0 {
		cfg.LeaseTTL = testLeaseTTL
	}
	if cfg.DoubleTexting == nil {
		// The tests of a newer message stopping a turn; those of merge set it.
		cfg.DoubleTexting = func(conversation.Key) conversation.DoubleTexting { return conversation.DoubleTextingInterrupt }
	}
	svc, err := service.NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
	})
	return svc
}

// testLeaseTTL is the lease TTL of the tests' services: short, so that a thread a
// stopped service held is taken over quickly, yet long against a loaded machine's
// scheduling delays (leases are renewed every tenth of it).
const testLeaseTTL = 2 * time.Second

var key = conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "100.0"}

func mention(k conversation.Key, ts, text string) conversation.Input {
	return conversation.Input{
		ID: conversation.MessageInputID(k.TeamID, k.ChannelID, ts), EventID: "Ev" + ts, Key: k, Kind: conversation.KindUserMessage,
		Message: &conversation.UserMessage{UserID: "U1", Text: text, TS: ts, ThreadTS: k.ThreadTS, Mentioned: true},
	}
}

func reply(k conversation.Key, ts, text string) conversation.Input {
	in := mention(k, ts, text)
	in.Message.Mentioned = false
	return in
}

func submit(t *testing.T, svc *service.Service, in conversation.Input) bool {
	t.Helper()
	ok, err := svc.Submit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestServiceFollowUpCarriesHistory(t *testing.T) {
	msgr, exec := newMessenger(), &echo{}
	svc := newService(t, service.Config{Messenger: msgr, Executor: exec})
	submit(t, svc, mention(key, "100.0", "first question"))
	if got := msgr.wait(t); got != "re: first question" {
		t.Fatalf("reply %q", got)
	}
	submit(t, svc, reply(key, "100.5", "follow-up"))
	msgr.wait(t)
	p := exec.prompts[1]
	if len(p.History) != 2 || p.History[0].Text != "first question" || p.History[1].Text != "re: first question" {
		t.Fatalf("follow-up history: %+v", p.History)
	}
}

func TestServiceDeduplicates(t *testing.T) {
	msgr, exec := newMessenger(), &echo{}
	svc := newService(t, service.Config{Messenger: msgr, Executor: exec})
	in := mention(key, "100.0", "hello")
	if !submit(t, svc, in) {
		t.Fatal("first submit not accepted")
	}
	if submit(t, svc, in) {
		t.Fatal("duplicate accepted")
	}
	msgr.wait(t)
	select {
	case text := <-msgr.posted:
		t.Fatalf("second reply %q", text)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestServiceIgnoresThreadsItIsNotPartOf(t *testing.T) {
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: newMessenger(), Executor: &echo{}})
	if submit(t, svc, reply(key, "100.5", "chatter")) {
		t.Fatal("a reply in a thread the bot is not part of was accepted")
	}
	orphans, err := st.Orphans(context.Background(), 10)
	if err != nil || len(orphans) != 0 {
		t.Fatalf("threads with pending inputs = %v, %v; want nothing stored", orphans, err)
	}
	if ok, err := st.Exists(context.Background(), key); ok || err != nil {
		t.Fatalf("Exists = %v, %v; want false", ok, err)
	}
}

func TestServiceOrdersInputsPerThread(t *testing.T) {
	var running, overlap atomic.Int32
	var mu sync.Mutex
	var order []string
	exec := executorFunc(func(_ context.Context, p conversation.Prompt) (conversation.Findings, error) {
		if running.Add(1) > 1 {
			overlap.Add(1)
		}
		defer running.Add(-1)
		time.Sleep(20 * time.Millisecond) // widen the window in which overlap would show
		mu.Lock()
		order = append(order, p.Text)
		mu.Unlock()
		return conversation.Findings{Answer: "ok"}, nil
	})
	msgr := newMessenger()
	svc := newService(t, service.Config{Messenger: msgr, Executor: exec, MaxConcurrentTurns: 4})
	submit(t, svc, mention(key, "100.0", "m1"))
	for i := 2; i <= 5; i++ {
		submit(t, svc, mention(key, fmt.Sprintf("100.%d", i), fmt.Sprintf("m%d", i)))
	}
	for range 5 {
		msgr.wait(t)
	}
	if overlap.Load() != 0 {
		t.Fatal("two turns of one thread ran at once")
	}
	if got := strings.Join(order, ","); got != "m1,m2,m3,m4,m5" {
		t.Fatalf("order %s", got)
	}
}

func TestServiceBoundsConcurrency(t *testing.T) {
	const bound, threads = 2, 5
	var running, peak atomic.Int32
	release := make(chan struct{})
	exec := executorFunc(func(ctx context.Context, p conversation.Prompt) (conversation.Findings, error) {
		n := running.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		defer running.Add(-1)
		<-release
		return conversation.Findings{Answer: "ok"}, nil
	})
	msgr := newMessenger()
	svc := newService(t, service.Config{Messenger: msgr, Executor: exec, MaxConcurrentTurns: bound})
	for i := range threads {
		k := key
		k.ThreadTS = fmt.Sprintf("%d.0", 200+i)
		submit(t, svc, mention(k, k.ThreadTS, "q"))
	}
	deadline := time.Now().Add(5 * time.Second)
	for running.Load() < bound && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if running.Load() != bound {
		t.Fatalf("%d turns running, want %d", running.Load(), bound)
	}
	close(release)
	for range threads {
		msgr.wait(t)
	}
	if peak.Load() != bound {
		t.Fatalf("peak concurrency %d, want %d", peak.Load(), bound)
	}
}

func TestServiceThreadContextOnFirstMention(t *testing.T) {
	msgr, exec := newMessenger(), &echo{}
	msgr.history = []conversation.Message{{UserID: "U2", Text: "the build is red", SlackTS: "100.0"}, {UserID: "U3", Text: "since noon", SlackTS: "100.1"}}
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: exec})
	submit(t, svc, mention(key, "100.2", "any idea why?"))
	msgr.wait(t)
	h := exec.prompts[0].History
	if len(h) != 2 || h[0].Role != conversation.RoleContext || h[1].Text != "since noon" {
		t.Fatalf("history %+v", h)
	}
	cp := waitSaved(t, st, key, 4)
	roles := []string{}
	for _, m := range cp.Messages {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, ","); got != "context,context,user,assistant" {
		t.Fatalf("stored roles %s", got)
	}
}

func TestServiceScopeRefusal(t *testing.T) {
	msgr := newMessenger()
	var executed atomic.Bool
	exec := executorFunc(func(context.Context, conversation.Prompt) (conversation.Findings, error) {
		executed.Store(true)
		return conversation.Findings{Answer: "ok"}, nil
	})
	scope := scopeFunc(func(p conversation.Prompt) conversation.Verdict {
		return conversation.Verdict{InScope: false, Reply: "I only help with billing.", Reason: "weather"}
	})
	svc := newService(t, service.Config{Messenger: msgr, Executor: exec, Scope: scope})
	submit(t, svc, mention(key, "100.0", "weather?"))
	if got := msgr.wait(t); got != "I only help with billing." {
		t.Fatalf("reply %q", got)
	}
	if executed.Load() {
		t.Fatal("executor ran for an out-of-scope request")
	}
}

type userFacingErr struct{}

func (userFacingErr) Error() string       { return "model returned nothing" }
func (userFacingErr) UserMessage() string { return "The model gave an empty answer." }

func TestServiceExecutorErrorIsToldAndSaved(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"Generic", errors.New("boom: secret details"), "Sorry, something went wrong"},
		{"UserFacing", fmt.Errorf("execute: %w", userFacingErr{}), "The model gave an empty answer."},
		{"Timeout", context.DeadlineExceeded, "Sorry, that took too long"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msgr := newMessenger()
			st := openStore(t, t.TempDir())
			exec := executorFunc(func(context.Context, conversation.Prompt) (conversation.Findings, error) {
				return conversation.Findings{}, tt.err
			})
			svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: exec})
			submit(t, svc, mention(key, "100.0", "hello"))
			if got := msgr.wait(t); !strings.HasPrefix(got, tt.want) || strings.Contains(got, "secret") {
				t.Fatalf("reply %q, want prefix %q", got, tt.want)
			}
			waitSaved(t, st, key, 2)
		})
	}
}

func TestServicePostFailureStillSaves(t *testing.T) {
	msgr := newMessenger()
	msgr.failPost = errors.New("slack: ratelimited")
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: &echo{}})
	submit(t, svc, mention(key, "100.0", "hello"))
	msgr.wait(t)
	cp := waitSaved(t, st, key, 2)
	if cp.Messages[1].Text != "re: hello" || cp.Messages[1].SlackTS != "" {
		t.Fatalf("saved reply %+v", cp.Messages[1])
	}
}

func TestServiceClipsHugeMessagesInThePromptOnly(t *testing.T) {
	msgr, exec := newMessenger(), &echo{}
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: exec, MaxPromptChars: 1000})
	huge := strings.Repeat("x", 50000)
	submit(t, svc, mention(key, "100.0", huge))
	msgr.wait(t)
	if p := exec.prompts[0].Text; len(p) > 1200 || !strings.Contains(p, "first 1000 of 50000 characters") {
		t.Fatalf("prompt text %d bytes: %q", len(p), p[len(p)-80:])
	}
	cp := waitSaved(t, st, key, 2)
	if cp.Messages[0].Text != huge {
		t.Fatalf("stored text has %d characters, want 50000", len(cp.Messages[0].Text))
	}
}

// TestServiceShutdownLeavesPendingForResume cancels a turn stuck in the model at
// shutdown and checks that a new service on the same store answers it once the
// stopped one's lease has expired.
func TestServiceShutdownLeavesPendingForResume(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	started := make(chan struct{})
	stuck := executorFunc(func(ctx context.Context, p conversation.Prompt) (conversation.Findings, error) {
		close(started)
		<-ctx.Done()
		return conversation.Findings{}, ctx.Err()
	})
	msgr := newMessenger()
	svc, err := service.NewService(service.Config{Store: st, Messenger: msgr, Executor: stuck, Synthesizer: plainSynth{}, LeaseTTL: testLeaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	submit(t, svc, mention(key, "100.0", "slow one"))
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := svc.Shutdown(ctx); err == nil {
		t.Fatal("shutdown reported no cancellation")
	}
	if _, err := svc.Submit(context.Background(), mention(key, "100.1", "late")); !errors.Is(err, conversation.ErrClosed) {
		t.Fatalf("submit after shutdown: %v", err)
	}
	select {
	case text := <-msgr.posted:
		t.Fatalf("a cancelled turn posted %q", text)
	default:
	}

	exec := &echo{}
	newService(t, service.Config{Store: st, Messenger: msgr, Executor: exec})
	if got := msgr.wait(t); got != "re: slow one" {
		t.Fatalf("resumed reply %q", got)
	}
}

// TestServiceShutdownClosesTheProgressMessage: a turn cut by a shutdown leaves its
// progress message saying it was interrupted, with no live Stop button.
func TestServiceShutdownClosesTheProgressMessage(t *testing.T) {
	msgr, st := newMessenger(), openStore(t, t.TempDir())
	exec := &blockingExecutor{started: make(chan string, 4), release: make(chan struct{})}
	svc, err := service.NewService(service.Config{Store: st, Messenger: msgr, Executor: exec, Synthesizer: plainSynth{}, LeaseTTL: testLeaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	submit(t, svc, mention(key, "100.0", "long question"))
	<-exec.started
	if got := msgr.wait(t); got != "Running slow_tool…" {
		t.Fatalf("progress message %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_ = svc.Shutdown(ctx) // returns once the cancelled turn has returned
	if text, labels := msgr.cardText("99.1"), msgr.buttons("99.1"); !strings.Contains(text, "Interrupted by a restart") || len(labels) != 0 {
		t.Fatalf("progress message after a shutdown: %q, buttons %q", text, labels)
	}
}

// waitSaved waits until the conversation has n messages and returns its checkpoint.
func waitSaved(t *testing.T, st conversation.Store, k conversation.Key, n int) *conversation.Checkpoint {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		cp, err := st.Load(context.Background(), k, 100)
		if err == nil && len(cp.Messages) >= n {
			return cp
		}
		if time.Now().After(deadline) {
			t.Fatalf("conversation not saved with %d messages: %v", n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServiceTwoReplicasOneThread runs two services on one store, as two replicas,
// and hands a thread's inputs to both: a follow-up that B receives while A runs the
// thread's turn waits for that turn (B does not run it beside A) and is answered after
// it, by A, with the first turn in its history; B answers nothing.
func TestServiceTwoReplicasOneThread(t *testing.T) {
	st := openStore(t, t.TempDir())
	msgrA, msgrB := newMessenger(), newMessenger()
	release := make(chan struct{})
	var running, overlap atomic.Int32
	var mu sync.Mutex
	var prompts []conversation.Prompt
	exec := func(name string) executorFunc {
		return func(ctx context.Context, p conversation.Prompt) (conversation.Findings, error) {
			if running.Add(1) > 1 {
				overlap.Add(1)
			}
			defer running.Add(-1)
			mu.Lock()
			prompts = append(prompts, p)
			mu.Unlock()
			if p.Text == "first" {
				<-release
			}
			return conversation.Findings{Answer: name + ": " + p.Text}, nil
		}
	}
	// The default policy, merge: B's follow-up, sent while A's turn runs, waits for
	// it rather than stopping it (docs/architecture.md, "Double texting").
	merge := func(conversation.Key) conversation.DoubleTexting { return conversation.DoubleTextingMerge }
	a := newService(t, service.Config{Store: st, Messenger: msgrA, Executor: exec("A"), Owner: "A", DoubleTexting: merge, MergeWindow: time.Millisecond})
	submit(t, a, mention(key, "100.0", "first"))
	waitUntil(t, "A runs the first turn", func() bool { return running.Load() == 1 })
	// B starts once A holds the thread (earlier, B's sweep could take it first).
	b := newService(t, service.Config{Store: st, Messenger: msgrB, Executor: exec("B"), Owner: "B", DoubleTexting: merge, MergeWindow: time.Millisecond})
	// The thread's first turn is not saved yet: B accepts the follow-up all the same.
	if !submit(t, b, reply(key, "100.1", "second")) {
		t.Fatal("B refused a follow-up in a thread whose first turn runs on A")
	}
	close(release)
	if got := msgrA.wait(t); got != "A: first" {
		t.Fatalf("A answered %q", got)
	}
	if got := msgrA.wait(t); got != "A: second" {
		t.Fatalf("A answered %q next", got)
	}
	settleService(t, a)
	settleService(t, b)
	if overlap.Load() != 0 {
		t.Fatal("two turns of one thread ran at once")
	}
	if n := len(msgrB.thread(key)); n != 0 {
		t.Fatalf("B posted %d messages", n)
	}
	last := prompts[len(prompts)-1]
	if len(last.History) != 2 || last.History[1].Text != "A: first" {
		t.Fatalf("the follow-up's history %+v lacks the first turn", last.History)
	}
}

// TestServiceNewMessageOnAnotherReplicaStops: a newer message that replica B receives
// stops the turn replica A runs for the thread (through the lease, at A's next
// renewal), and A answers it next.
func TestServiceNewMessageOnAnotherReplicaStops(t *testing.T) {
	st := openStore(t, t.TempDir())
	msgrA := newMessenger()
	execA := &blockingExecutor{started: make(chan string, 4), release: make(chan struct{})}
	a := newService(t, service.Config{Store: st, Messenger: msgrA, Executor: execA, Owner: "A"})
	submit(t, a, mention(key, "100.0", "first"))
	<-execA.started
	msgrA.wait(t) // progress message
	// B starts once A holds the thread (earlier, B's sweep could take it first).
	b := newService(t, service.Config{Store: st, Messenger: newMessenger(), Executor: &echo{}, Owner: "B"})
	submit(t, b, reply(key, "100.1", "actually, second"))
	if got := msgrA.wait(t); !strings.HasPrefix(got, "Stopped: a newer message arrived") {
		t.Fatalf("A replied %q", got)
	}
	if got := <-execA.started; got != "actually, second" {
		t.Fatalf("A's next turn ran %q", got)
	}
	close(execA.release)
}

// TestServiceLateOlderMessageOnAnotherReplicaWaits: under interrupt, a late first
// copy of a message sent before the one whose turn runs on replica A, stored by
// replica B, does not stop that turn: A looks it up at its renewal and lets the turn
// run; a message sent after it does stop it. The older message is answered in its
// turn, after the stopped one, then the newer.
func TestServiceLateOlderMessageOnAnotherReplicaWaits(t *testing.T) {
	st := openStore(t, t.TempDir())
	msgrA, logs := newMessenger(), &logtest.Buffer{}
	execA := &blockingExecutor{started: make(chan string, 4), release: make(chan struct{})}
	a := newService(t, service.Config{Store: st, Messenger: msgrA, Executor: execA, Owner: "A", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	submit(t, a, mention(key, "100.2", "the question"))
	<-execA.started
	msgrA.wait(t) // progress message
	b := newService(t, service.Config{Store: st, Messenger: newMessenger(), Executor: &echo{}, Owner: "B"})
	submit(t, b, reply(key, "100.1", "an older question, delivered late"))
	waitUntil(t, "A looked the older message up", func() bool {
		return strings.Contains(logs.String(), "an older message, delivered late, waits for the running turn")
	})
	submit(t, b, reply(key, "100.3", "a newer question"))
	if got := msgrA.wait(t); !strings.HasPrefix(got, "Stopped: a newer message arrived") {
		t.Fatalf("A replied %q, want the running turn stopped by the newer message, not before", got)
	}
	for _, want := range []string{"an older question, delivered late", "a newer question"} {
		if got := <-execA.started; got != want {
			t.Fatalf("A's next turn ran %q, want %q", got, want)
		}
	}
	close(execA.release)
}

// TestServiceTakesOverExpiredLeases: a thread whose lease expired (its worker died) is
// taken over and answered; a thread under a live lease of another worker is not.
func TestServiceTakesOverExpiredLeases(t *testing.T) {
	st := openStore(t, t.TempDir())
	ctx := context.Background()
	liveKey := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "400.0"}
	crashed, live := mention(key, "100.0", "orphaned"), mention(liveKey, "400.0", "in progress")
	for _, in := range []conversation.Input{crashed, live} {
		if _, err := st.Enqueue(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, ok, err := st.Acquire(ctx, key, "dead", time.Nanosecond); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	if _, _, ok, err := st.Acquire(ctx, liveKey, "alive", time.Hour); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	msgr := newMessenger()
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: &echo{}})
	if got := msgr.wait(t); got != "re: orphaned" {
		t.Fatalf("reply %q", got)
	}
	if err := svc.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(msgr.thread(liveKey)); n != 0 {
		t.Fatalf("the thread under a live lease got %d answers", n)
	}
}

// waitUntil waits for cond, polling.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// settleService waits until svc has no queued or running input, by shutting it down.
func settleService(t *testing.T, svc *service.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := svc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// foldSummarizer folds messages into "summary of: <texts>".
type foldSummarizer struct {
	mu       sync.Mutex
	requests []conversation.SummaryRequest
}

func (f *foldSummarizer) Summarize(ctx context.Context, r conversation.SummaryRequest) (string, conversation.Usage, error) {
	if err := ctx.Err(); err != nil {
		return "", conversation.Usage{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	var texts []string
	for _, m := range r.Messages {
		texts = append(texts, m.Text)
	}
	return strings.TrimSpace(r.Previous + " | " + strings.Join(texts, ",")), conversation.Usage{PromptTokens: 5}, nil
}

// TestServiceSummarizesLongHistory checks that the prompt stays bounded as a thread
// grows: older messages are folded into the summary, which the prompt carries, and the
// store still holds every message.
func TestServiceSummarizesLongHistory(t *testing.T) {
	msgr, exec, sum := newMessenger(), &echo{}, &foldSummarizer{}
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: exec, Summarizer: sum, HistoryMessages: 8})
	submit(t, svc, mention(key, "100.000", "q0"))
	msgr.wait(t)
	for i := 1; i < 12; i++ {
		submit(t, svc, reply(key, fmt.Sprintf("100.%03d", i), fmt.Sprintf("q%d", i)))
		msgr.wait(t)
	}
	settleService(t, svc)
	if len(sum.requests) == 0 {
		t.Fatal("never summarized")
	}
	last := exec.prompts[len(exec.prompts)-1]
	if !strings.Contains(last.Summary, "q0") || len(last.History) > 6 {
		t.Fatalf("last prompt: summary %q, %d history messages", last.Summary, len(last.History))
	}
	for _, m := range last.History {
		if strings.Contains(last.Summary, m.Text+",") {
			t.Errorf("%q is both summarized and in the history", m.Text)
		}
	}
	cp, err := st.Load(context.Background(), key, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Messages) != 24 || cp.Conversation.State.SummaryThroughSeq == 0 || cp.Conversation.State.Summary == "" {
		t.Fatalf("store: %d messages, summary through %d", len(cp.Messages), cp.Conversation.State.SummaryThroughSeq)
	}
}

// blockingExecutor reports progress, then waits until its turn is cancelled (a safe
// point) or released.
type blockingExecutor struct {
	started chan string
	release chan struct{}
}

func (b *blockingExecutor) Execute(ctx context.Context, p conversation.Prompt, progress conversation.Progress) (conversation.Findings, error) {
	progress("Running slow_tool…")
	b.started <- p.Text
	select {
	case <-ctx.Done():
		return conversation.Findings{Steps: 1}, fmt.Errorf("executor: %w", ctx.Err())
	case <-b.release:
		return conversation.Findings{Answer: "done: " + p.Text}, nil
	}
}

func TestServiceStopButton(t *testing.T) {
	msgr, st := newMessenger(), openStore(t, t.TempDir())
	exec := &blockingExecutor{started: make(chan string, 4), release: make(chan struct{})}
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: exec})
	in := mention(key, "100.0", "long question")
	submit(t, svc, in)
	<-exec.started
	if got := msgr.wait(t); got != "Running slow_tool…" {
		t.Fatalf("progress message %q", got)
	}
	stop := conversation.Input{ID: "int:T1:stop1", Key: key, Kind: conversation.KindAction, Action: &conversation.ActionInput{
		Action: conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: in.ID}, UserID: "U2"}}
	if !submit(t, svc, stop) {
		t.Fatal("the Stop click did not stop the turn")
	}
	if got := msgr.wait(t); got != "Stopped at <@U2>'s request. Nothing else was done; ask again when you're ready." {
		t.Fatalf("reply %q", got)
	}
	cp := waitSaved(t, st, key, 2)
	// The thread says who stopped it once; the progress message only that it stopped,
	// without its Stop button.
	thread := msgr.thread(key)
	if n := strings.Count(strings.Join(thread, "\n"), "Stopped at"); n != 1 {
		t.Fatalf("the stop is told %d times: %q", n, thread)
	}
	if text, labels := msgr.cardText("99.1"), msgr.buttons("99.1"); text != "⏹ Stopped." || len(labels) != 0 {
		t.Fatalf("progress message after the stop: %q, buttons %q", text, labels)
	}
	if cp.Messages[0].Text != "long question" || !strings.HasPrefix(cp.Messages[1].Text, "Stopped") {
		t.Fatalf("checkpoint %+v", cp.Messages)
	}
	// A second click, or a click on an old progress message, stops nothing.
	if submit(t, svc, stop) {
		t.Fatal("a Stop click without a running turn reported a stop")
	}
}

func TestServiceNewMessageStopsTheRunningTurn(t *testing.T) {
	msgr, st := newMessenger(), openStore(t, t.TempDir())
	exec := &blockingExecutor{started: make(chan string, 4), release: make(chan struct{})}
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: exec})
	submit(t, svc, mention(key, "100.0", "first"))
	<-exec.started
	msgr.wait(t) // progress message
	submit(t, svc, reply(key, "100.1", "actually, second"))
	if got := msgr.wait(t); !strings.HasPrefix(got, "Stopped: a newer message arrived") {
		t.Fatalf("reply %q", got)
	}
	if got := <-exec.started; got != "actually, second" {
		t.Fatalf("the next turn ran %q", got)
	}
	close(exec.release)
	for {
		if got := msgr.wait(t); got == "done: actually, second" {
			break
		}
	}
	cp := waitSaved(t, st, key, 4)
	var texts []string
	for _, m := range cp.Messages {
		texts = append(texts, m.Text)
	}
	if got := strings.Join(texts, " | "); !strings.HasPrefix(got, "first | Stopped: a newer message arrived") || !strings.HasSuffix(got, "actually, second | done: actually, second") {
		t.Fatalf("checkpoint: %s", got)
	}
}
