package bot_test

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// startTwoConnections starts a Bot with two Socket Mode connections, its log and the
// emulator's in the recorders, and waits until both connections are up.
func startTwoConnections(t *testing.T, emuLogs, logs *logRecorder, configure func(*bot.Config)) *harness {
	t.Helper()
	h := startBotWith(t, emulator.Config{Logger: slog.New(emuLogs)}, func(c *bot.Config) {
		c.Connections, c.Logger = 2, slog.New(logs)
		if configure != nil {
			configure(c)
		}
	})
	if err := h.emu.WaitForConnections(testContext(t), 2); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, "INFO connected to Slack in socket mode", 2)
	if n := h.emu.NumConnections(); n != 2 {
		t.Fatalf("%d connections open; want 2", n)
	}
	return h
}

// threadSubmitter holds the Submit of a thread's first input until release is
// closed, and records the order of the thread's inputs and whether two of them were
// ever submitted at once.
type threadSubmitter struct {
	release chan struct{}
	mu      sync.Mutex
	order   []string
	counts  map[string]int
	busy    bool
	overlap bool
	changed chan struct{}
}

func (s *threadSubmitter) Submit(_ context.Context, in conversation.Input) (bool, error) {
	if in.Message == nil {
		return false, nil
	}
	s.mu.Lock()
	s.overlap = s.overlap || s.busy
	s.busy = true
	first := len(s.order) == 0
	s.counts[in.ID]++
	if s.counts[in.ID] == 1 {
		s.order = append(s.order, in.Message.TS)
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	if first {
		<-s.release
	}
	s.mu.Lock()
	s.busy = false
	s.mu.Unlock()
	return true, nil
}

// TestTwoConnectionsShareTheLanes: with two connections, the emulator hands the
// envelopes to both in turn; each is acked once, on the connection it came on (the
// emulator sees no ack of an envelope it does not know, and none twice), and a
// thread's inputs are submitted one at a time in the order the process read them,
// although they came on both connections: each reply is posted once the bot has read
// everything before it (a message dropped at once after it, on each connection, is
// acked), while the thread's first input is still being stored.
func TestTwoConnectionsShareTheLanes(t *testing.T) {
	emuLogs, logs := newLogRecorder(), newLogRecorder()
	sub := &threadSubmitter{release: make(chan struct{}), counts: map[string]int{}, changed: make(chan struct{})}
	h := startTwoConnections(t, emuLogs, logs, func(c *bot.Config) { c.Submitter = sub })
	root, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> start", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{root}
	for i := range 6 {
		ts, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", fmt.Sprintf("<@U0BOT> reply %d", i), root)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ts)
		// Messages not for the bot after the reply's two envelopes (its app_mention
		// and message twin), on each connection: once they are acked, the reply has
		// been read. Three, so that the next reply's app_mention comes on the other
		// connection (the emulator hands envelopes to the connections in turn).
		for j := range 3 {
			filler, err := h.emu.PostUserMessage("C0GENERAL", "U0BOB", fmt.Sprintf("chatter %d.%d", i, j), "")
			if err != nil {
				t.Fatal(err)
			}
			env, ok := h.emu.EventEnvelope("message", filler)
			if !ok {
				t.Fatalf("no envelope of %s", filler)
			}
			h.waitAcked(t, env.ID)
		}
	}
	close(sub.release)
	if err := h.emu.WaitFor(testContext(t), func() bool {
		envs := h.emu.Envelopes()
		return len(envs) > 0 && !slices.ContainsFunc(envs, func(e emulator.Envelope) bool { return !e.Acked })
	}); err != nil {
		t.Fatal("not every envelope acked")
	}
	sub.mu.Lock()
	if !slices.Equal(sub.order, want) || sub.overlap {
		t.Errorf("inputs submitted in the order %v (two at once: %v); want %v, one at a time", sub.order, sub.overlap, want)
	}
	sub.mu.Unlock()
	for _, a := range h.emu.Acks() {
		if a.Duplicate {
			t.Errorf("envelope %s acked twice", a.EnvelopeID)
		}
	}
	for _, e := range h.emu.Envelopes() {
		if e.Deliveries != 1 {
			t.Errorf("envelope %s delivered %d times", e.ID, e.Deliveries)
		}
	}
	if n := emuLogs.count("WARN emulator: ack for an unknown envelope"); n != 0 {
		t.Errorf("%d acks of unknown envelopes", n)
	}
	if n := logs.count("WARN "); n != 0 {
		t.Errorf("%d warnings in the bot's log", n)
	}
}

// TestOneOfTwoConnectionsDrops: Slack asks one connection to go (a disconnect
// message on it alone): the log says so for that connection only, with its number and
// cause, and it comes back; then Slack drops both, and each says so once.
func TestOneOfTwoConnectionsDrops(t *testing.T) {
	emuLogs, logs := newLogRecorder(), newLogRecorder()
	h := startTwoConnections(t, emuLogs, logs, nil)
	lostLine := regexp.MustCompile(`^WARN lost the connection to Slack; reconnecting connection=([12]) cause=slack_disconnect reason=(\w+)$`)
	if err := h.emu.SendRaw([]byte(`{"type":"disconnect","reason":"link_disabled"}`)); err != nil {
		t.Fatal(err)
	}
	m := lostLine.FindStringSubmatch(logs.wait(t, "WARN lost the connection to Slack", 1))
	if m == nil || m[2] != "link_disabled" {
		t.Fatalf("lost line %v: want a connection's number, and link_disabled", m)
	}
	dropped := m[1]
	back := logs.wait(t, "WARN reconnected to Slack after ", 1)
	if !regexp.MustCompile(` connection=` + dropped + ` `).MatchString(back) {
		t.Errorf("%q: want connection=%s", back, dropped)
	}
	if !h.bot.Connected() {
		t.Error("not connected")
	}
	if err := h.emu.WaitForConnections(testContext(t), 2); err != nil {
		t.Fatal(err)
	}
	// Both work: two messages, one on each connection.
	for i := range 2 {
		if _, err := h.emu.PostUserMessage("D0ALICE", "U0ALICE", fmt.Sprintf("hello %d", i), ""); err != nil {
			t.Fatal(err)
		}
		h.next(t)
	}
	if n := logs.count("WARN lost the connection"); n != 1 {
		t.Errorf("%d lost lines; want 1, for connection %s", n, dropped)
	}

	h.emu.Disconnect("")
	seen := map[string]bool{}
	for i := 2; i <= 3; i++ {
		m := lostLine.FindStringSubmatch(logs.wait(t, "WARN lost the connection to Slack", i))
		if m == nil || m[2] != "refresh_requested" {
			t.Fatalf("lost line %v: want refresh_requested", m)
		}
		seen[m[1]] = true
	}
	logs.wait(t, "WARN reconnected to Slack after ", 3)
	if !seen["1"] || !seen["2"] {
		t.Errorf("connections that said they were lost: %v; want 1 and 2", seen)
	}
	if n := logs.count("INFO connected to Slack"); n != 2 {
		t.Errorf("%d info lines for the first connections; want 2", n)
	}
}

// TestConnectionsBounded: Slack allows an app 10 Socket Mode connections.
func TestConnectionsBounded(t *testing.T) {
	h := startBot(t)
	_, err := bot.New(bot.Config{API: h.api, Identity: h.me, Submitter: h.rec, Signer: h.signer, Connections: bot.MaxConnections + 1})
	if err == nil {
		t.Fatal("New took 11 connections")
	}
}
