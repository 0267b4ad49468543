package bot_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// failOnce makes the recorder fail the first Submit of every input with err.
func (h *harness) failOnce(err error) {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	failed := map[string]bool{} // guarded by h.rec.mu, which Submit holds
	h.rec.fail = func(in conversation.Input) error {
		if failed[in.ID] {
			return nil
		}
		failed[in.ID] = true
		return err
	}
}

// acksOf returns the acks read for envelope id.
func acksOf(emu *emulator.Server, id string) []emulator.Ack {
	var out []emulator.Ack
	for _, a := range emu.Acks() {
		if a.EnvelopeID == id {
			out = append(out, a)
		}
	}
	return out
}

func TestEventAckedOnlyOnceStored(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"StoreDown", errors.New("database down")},
		{"ShuttingDown", conversation.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A short ack timeout, so that the emulator redelivers soon.
			h := startBotWith(t, emulator.Config{AckTimeout: 300 * time.Millisecond}, nil)
			h.failOnce(tc.err)
			ts, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> hello", "")
			if err != nil {
				t.Fatal(err)
			}
			first := h.next(t)  // refused
			second := h.next(t) // the redelivery, stored
			if first.ID != conversation.MessageInputID("T0TEAM", "C0GENERAL", ts) || second.ID != first.ID {
				t.Fatalf("inputs %s, %s", first.ID, second.ID)
			}
			env, ok := h.emu.EventEnvelope("app_mention", ts)
			if !ok {
				t.Fatal("no app_mention envelope")
			}
			env = h.waitAcked(t, env.ID)
			if env.Deliveries < 2 || env.RetryAttempt < 1 || env.RetryReason != "timeout" {
				t.Errorf("envelope %+v: want a redelivery", env)
			}
			acks := acksOf(h.emu, env.ID)
			if len(acks) == 0 || slices.ContainsFunc(acks, func(a emulator.Ack) bool { return a.RetryAttempt == 0 }) {
				t.Errorf("acks %+v: want none for the first delivery", acks)
			}
		})
	}
}

func TestInteractionAckedWhenNotStored(t *testing.T) {
	h := startBot(t)
	key, ts := h.thread(t, func(k conversation.Key) conversation.Card { return inThread(artifactCard(budgetText), k) })
	h.failOnce(errors.New("database down"))
	id, err := h.emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Approve")
	if err != nil {
		t.Fatal(err)
	}
	h.next(t)
	env := h.waitAcked(t, id)
	if env.RetryAttempt != 0 {
		t.Errorf("envelope %+v: acked only after a redelivery", env)
	}
	eph := waitEphemeral(t, h, "U0BOB", 1)
	if !strings.Contains(eph[0].Text, "could not take that") || eph[0].ThreadTS != key.ThreadTS {
		t.Errorf("ephemeral %+v", eph[0])
	}
}

// submitterFunc adapts a function to bot.Submitter.
type submitterFunc func(context.Context, conversation.Input) (bool, error)

func (f submitterFunc) Submit(ctx context.Context, in conversation.Input) (bool, error) {
	return f(ctx, in)
}

func TestSubmitGetsTheAckBudget(t *testing.T) {
	const budget = 700 * time.Millisecond
	budgets := make(chan time.Duration, 1)
	submit := submitterFunc(func(ctx context.Context, in conversation.Input) (bool, error) {
		deadline, ok := ctx.Deadline()
		if !ok {
			budgets <- -1
		} else {
			budgets <- time.Until(deadline)
		}
		return true, nil
	})
	h := startBotWith(t, emulator.Config{}, func(c *bot.Config) { c.Submitter, c.AckBudget = submit, budget })
	if _, err := h.emu.PostUserMessage("D0ALICE", "U0ALICE", "hello", ""); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-budgets:
		if got <= 0 || got > budget {
			t.Errorf("Submit's context ends in %v, want within %v", got, budget)
		}
	case <-testContext(t).Done():
		t.Fatal("no Submit")
	}
}

// logRecorder is a slog.Handler that keeps the records' messages and levels.
type logRecorder struct {
	mu    sync.Mutex
	lines []string // "LEVEL message"
	// changed is closed and replaced when a line is added.
	changed chan struct{}
}

func newLogRecorder() *logRecorder { return &logRecorder{changed: make(chan struct{})} }

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	l.lines = append(l.lines, line)
	close(l.changed)
	l.changed = make(chan struct{})
	return nil
}

// wait waits for the n-th line (from 1) that starts with prefix, and returns it.
func (l *logRecorder) wait(t *testing.T, prefix string, n int) string {
	t.Helper()
	ctx := testContext(t)
	for {
		l.mu.Lock()
		var found []string
		for _, line := range l.lines {
			if strings.HasPrefix(line, prefix) {
				found = append(found, line)
			}
		}
		changed := l.changed
		l.mu.Unlock()
		if len(found) >= n {
			return found[n-1]
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no log line %d %q; have %d", n, prefix, len(found))
		}
	}
}

func (l *logRecorder) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}

func TestConnectionLogs(t *testing.T) {
	logs := newLogRecorder()
	h := startBotWith(t, emulator.Config{}, func(c *bot.Config) { c.Logger = slog.New(logs) })
	logs.wait(t, "INFO connected to Slack in socket mode", 1)

	for i, drop := range []struct {
		name string
		do   func()
		// reason is what the warning must end with: Slack's reason, or what ended
		// the connection.
		reason *regexp.Regexp
	}{
		// The socket closed without a close frame: an end of file, or a reset
		// when the emulator closed with bytes unread.
		{"NetworkFailure", h.emu.CloseConnections, regexp.MustCompile(` cause=connection_lost reason=(connection closed without a close frame \(EOF\)|read failed: .+)$`)},
		// Slack closes at once: its disconnect message comes first on the connection.
		{"DisconnectAndClose", func() { h.emu.Disconnect("") }, regexp.MustCompile(` cause=slack_disconnect reason=refresh_requested$`)},
		{"DisconnectRequested", func() { h.emu.RequestDisconnect("") }, regexp.MustCompile(` cause=slack_disconnect reason=refresh_requested$`)},
		{"LinkDisabled", func() { h.emu.RequestDisconnect("link_disabled") }, regexp.MustCompile(` cause=slack_disconnect reason=link_disabled$`)},
	} {
		t.Run(drop.name, func(t *testing.T) {
			drop.do()
			lost := logs.wait(t, "WARN lost the connection to Slack; reconnecting", i+1)
			if !drop.reason.MatchString(lost) {
				t.Errorf("%q: want the reason, %s", lost, drop.reason)
			}
			logs.wait(t, "INFO connecting to Slack in socket mode", i+1)
			line := logs.wait(t, "WARN reconnected to Slack after ", i+1)
			took, _, _ := strings.Cut(strings.TrimPrefix(line, "WARN reconnected to Slack after "), " ")
			if _, err := time.ParseDuration(took); err != nil {
				t.Errorf("%q: %v", line, err)
			}
			// The bot works on the new connection.
			dm := fmt.Sprintf("hello %d", i)
			if _, err := h.emu.PostUserMessage("D0ALICE", "U0ALICE", dm, ""); err != nil {
				t.Fatal(err)
			}
			if in := h.next(t); in.Message == nil || in.Message.Text != dm {
				t.Errorf("input %+v", in)
			}
		})
	}
	if n := logs.count("INFO connected to Slack"); n != 1 {
		t.Errorf("%d info lines for the first connection", n)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	for _, line := range logs.lines {
		if strings.Contains(line, "xapp-") || strings.Contains(line, "xoxb-") || strings.Contains(line, "ticket") {
			t.Errorf("a log line shows a token or the connection's ticket: %q", line)
		}
	}
}

// TestInputsSubmittedOnce: a burst of direct messages (each a thread of its own) is
// submitted, every message once; envelopes of different threads are taken
// concurrently, so their order is not kept (a thread's is: TestBurstKeepsThreadOrder).
func TestInputsSubmittedOnce(t *testing.T) {
	h := startBot(t)
	var want []string
	for i := range 20 {
		ts, err := h.emu.PostUserMessage("D0ALICE", "U0ALICE", fmt.Sprintf("message %d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ts)
	}
	var got []string
	for range want {
		if in := h.next(t); in.Message != nil {
			got = append(got, in.Message.TS)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("inputs of the messages %v; want each of %v once", got, want)
	}
	h.noMoreInputs(t)
}
