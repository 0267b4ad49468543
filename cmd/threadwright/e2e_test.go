package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/store"
	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// These end-to-end tests run the real program (Main) with the real slack-go client
// against playground/emulator, the real go-openai client against testkit/openaitest and the
// real embedded store.

const (
	general = "C0GENERAL"
	alice   = "U0ALICE"
	botUser = "U0BOT"
	dm      = "D0ALICE"
)

type harness struct {
	t       testing.TB
	emu     *emulator.Server
	ai      *openaitest.Server
	dataDir string
	env     map[string]string
	tools   func(*agents.Registry) error
	// model, when set, answers the model calls instead of the fake server (Main.Model).
	model agents.Completer
	// fetcher, when set, reads the sources phase's pages (Main.Fetcher).
	fetcher conversation.SourceFetcher
	// logs, when set, receives the program's log lines too.
	logs io.Writer
	// noMetrics runs the program without its instruments (Main.noMetrics).
	noMetrics bool

	cancel context.CancelFunc
	done   chan error
	main   *Main
}

func newHarness(t testing.TB, emuCfg emulator.Config) *harness {
	t.Helper()
	emuCfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	emu, err := emulator.NewServer(emuCfg)
	if err != nil {
		t.Fatal(err)
	}
	ai := openaitest.NewServer()
	h := &harness{t: t, emu: emu, ai: ai, dataDir: t.TempDir(), env: map[string]string{}}
	t.Cleanup(func() {
		h.stop()
		ai.Close()
		emu.Close()
	})
	return h
}

// start runs Main until stop, configured through the environment as in production.
func (h *harness) start() {
	h.t.Helper()
	env := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-emulator", "SLACK_APP_TOKEN": "xapp-emulator", "SLACK_API_URL": h.emu.URL(),
		"OPENAI_API_KEY": "sk-test-secret", "OPENAI_BASE_URL": h.ai.URL(), "OPENAI_MODEL": "gpt-test",
		"DATA_DIR": h.dataDir, "DATABASE_URL": "", "HTTP_ADDR": "127.0.0.1:0", "LOG_LEVEL": "debug",
		"TOOL_TIMEOUT": "2s", "MODEL_TIMEOUT": "20s", "SHUTDOWN_TIMEOUT": "5s",
		"SCOPE_DESCRIPTION": "", "SCOPE_ALLOW": "", "SCOPE_DENY": "",
		"WORKFLOWS_DIR": "", "APPROVER_USER_IDS": "",
		"STREAM_ANSWERS": "false",     // tests of streaming turn it on
		"DOUBLE_TEXTING": "interrupt", // the tests of the policies set theirs (double_texting_e2e_test.go)
		// Tests that send many inputs at once; the tests of the limits set them.
		"MAX_QUEUED_PER_THREAD": "0", "MAX_QUEUED_PER_USER": "0", "USER_RATE": "0",
		// One Socket Mode connection: a thread's messages posted a few ms apart are read
		// in the order posted (on two connections they may not be, as from Slack);
		// the tests of several connections set theirs (conns_e2e_test.go).
		"SOCKET_CONNECTIONS": "1",
	}
	for k, v := range h.env {
		env[k] = v
	}
	for k, v := range env {
		h.t.Setenv(k, v)
	}
	m := NewMain()
	if err := LoadConfig(&m.Config); err != nil {
		h.t.Fatal(err)
	}
	var logTo io.Writer = testWriter{h.t}
	if h.logs != nil {
		logTo = io.MultiWriter(logTo, h.logs)
	}
	m.Logger = slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m.RegisterTools = h.tools
	m.Model, m.Fetcher = h.model, h.fetcher
	m.noMetrics = h.noMetrics
	ctx, cancel := context.WithCancel(context.Background())
	h.main, h.cancel, h.done = m, cancel, make(chan error, 1)
	go func() { h.done <- m.Run(ctx) }()
	h.waitFor("the bot to be ready", func() bool { return m.Ready(context.Background()) })
}

// stop shuts Main down gracefully and waits for Run to return.
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
	case <-time.After(15 * time.Second):
		h.t.Error("Run did not return after cancel")
	}
	h.cancel = nil
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			h.t.Fatalf("timed out waiting for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// post posts a user message and returns its ts.
func (h *harness) post(channel, user, text, threadTS string) string {
	h.t.Helper()
	ts, err := h.emu.PostUserMessage(channel, user, text, threadTS)
	if err != nil {
		h.t.Fatal(err)
	}
	return ts
}

// replies waits until the bot has n messages in the thread and returns them.
func (h *harness) replies(channel, threadTS string, n int) []emulator.Message {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	msgs, err := h.emu.WaitForMessages(ctx, channel, threadTS, n)
	if err != nil {
		h.t.Fatal(err)
	}
	return msgs
}

// settle proves that every envelope sent so far has been handled: the dispatcher
// handles events in order, so once a fresh probe mention is answered, anything sent
// before it has been accepted or dropped.
func (h *harness) settle() {
	h.t.Helper()
	h.ai.Push(openaitest.Response{Text: "probe answer"})
	ts := h.post("C0RANDOM", alice, "<@U0BOT> probe", "")
	h.replies("C0RANDOM", ts, 1)
}

// idle waits until the bot has no input queued or running (every turn saved): every
// envelope sent so far is acked, so its input is stored (or dropped), and then the
// service has no thread left to work on.
func (h *harness) idle() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.emu.WaitForAcks(ctx); err != nil {
		h.t.Fatal(err)
	}
	if err := h.main.Wait(ctx); err != nil {
		h.t.Fatal(err)
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestE2EMentionAndFollowUp(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()

	h.ai.Push(openaitest.Response{Text: "**Paris** is the capital of France."})
	ts := h.post(general, alice, "<@U0BOT> what is the capital of France?", "")
	got := h.replies(general, ts, 1)
	if got[0].Text != "*Paris* is the capital of France." || got[0].ThreadTS != ts {
		t.Fatalf("reply %q in thread %q, want mrkdwn in thread %q", got[0].Text, got[0].ThreadTS, ts)
	}
	first := h.ai.Requests()[0]
	if first.LastUserMessage() != "what is the capital of France?" || first.Chat.Model != "gpt-test" {
		t.Fatalf("model request: model %q, user %q", first.Chat.Model, first.LastUserMessage())
	}
	if auth := first.Header.Get("Authorization"); auth != "Bearer sk-test-secret" {
		t.Fatalf("Authorization %q", auth)
	}
	// The thread's agent session shows the work, then waits for alice; no status is
	// set beside it (TestE2EStatusOnlyWhenItChanges has the status where sessions are
	// refused).
	h.waitFor("the session to show the work, then the answer", func() bool {
		s, ok := h.emu.Session(general, ts)
		return ok && strings.Join(s.History, ",") == "processing,active"
	})
	if hist := h.emu.StatusHistory(general, ts); len(hist) != 0 {
		t.Errorf("statuses %q set beside the session", hist)
	}

	// A follow-up without a mention continues the conversation.
	h.ai.Push(openaitest.Response{Text: "About 2.1 million people."})
	h.post(general, alice, "and its population?", ts)
	got = h.replies(general, ts, 2)
	if got[1].Text != "About 2.1 million people." {
		t.Fatalf("follow-up reply %q", got[1].Text)
	}
	second := h.ai.Requests()[1]
	if !carries(second, "what is the capital of France?", "Paris") || second.LastUserMessage() != "and its population?" {
		t.Fatalf("follow-up request lacks the earlier exchange: %s", second.Body)
	}
}

// carries reports whether the request's messages contain every text.
func carries(r openaitest.Request, texts ...string) bool {
	var all strings.Builder
	for _, m := range r.Chat.Messages {
		all.WriteString(m.Content)
		all.WriteString("\n")
	}
	for _, s := range texts {
		if !strings.Contains(all.String(), s) {
			return false
		}
	}
	return true
}

func TestE2EDirectMessage(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["AGENT_SURFACE"] = "assistant" // the agent view greets the Messages tab instead (TestE2EMessagesTabGreetsOnce)
	h.start()
	h.ai.Push(openaitest.Response{Text: "Hi Alice!"})
	ts := h.post(dm, alice, "hello", "")
	// The first DM is greeted (docs/tools.md, "Assistant view"); TestE2EDirectMessageIsVisible
	// covers the rest.
	got := h.replies(dm, ts, 2)
	if got[1].Text != "Hi Alice!" {
		t.Fatalf("reply %q", got[1].Text)
	}
	// A plain DM shows no suggestions, so its greeting points at none.
	if got[0].Text != "Hi! Ask me anything here. In a channel, mention me to bring me into a thread." {
		t.Errorf("greeting %q", got[0].Text)
	}
}

func TestE2EThreadContextOnFirstMention(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	root := h.post(general, "U0BOB", "The nightly build failed with exit code 137", "")
	h.post(general, alice, "it started after the upgrade", root)
	h.ai.Push(openaitest.Response{Text: "Exit code 137 usually means the process was killed for using too much memory."})
	h.post(general, alice, "<@U0BOT> any idea?", root)
	h.replies(general, root, 1)
	if r := h.ai.Requests()[0]; !carries(r, "exit code 137", "after the upgrade") {
		t.Fatalf("the earlier thread messages are not in the prompt: %s", r.Body)
	}
}

func TestE2ERedeliveryGetsNoSecondAnswer(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	h.ai.Push(openaitest.Response{Text: "once"})
	ts := h.post(general, alice, "<@U0BOT> answer once", "")
	h.replies(general, ts, 1)
	// The first deliveries are acked before they are delivered again: an ack read
	// after a redelivery was written counts as the redelivery's (Ack.RetryAttempt).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.emu.WaitForAcks(ctx); err != nil {
		t.Fatal(err)
	}

	var ids []string
	for _, typ := range []string{"app_mention", "message"} {
		env, ok := h.emu.EventEnvelope(typ, ts)
		if !ok {
			t.Fatalf("no %s envelope for %s", typ, ts)
		}
		if err := h.emu.Redeliver(env.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, env.ID)
	}
	h.settle()
	if n := len(h.emu.BotMessages(general, ts)); n != 1 {
		t.Fatalf("%d answers to one message", n)
	}
	if n := len(h.ai.Requests()); n != 2 { // the answer and the probe
		t.Fatalf("%d model calls, want 2", n)
	}
	// The emulator records an ack when it reads it from the socket, which can come
	// after the probe's answer arrived over the Web API.
	h.waitFor("both redelivered envelopes to be acked", func() bool {
		acked := map[string]bool{}
		for _, a := range h.emu.Acks() {
			if a.RetryAttempt == 1 {
				acked[a.EnvelopeID] = true
			}
		}
		return acked[ids[0]] && acked[ids[1]]
	})
}

func TestE2EIgnoresBotsAndOwnMessages(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	h.ai.Push(openaitest.Response{Text: "hello"})
	ts := h.post(general, alice, "<@U0BOT> hi", "")
	h.replies(general, ts, 1) // the bot's own reply produced a message event too

	if _, err := h.emu.PostBotMessage(general, "B0OTHER", "<@U0BOT> beep boop", ts); err != nil {
		t.Fatal(err)
	}
	if _, err := h.emu.PostBotMessage(general, "B0OTHER", "beep boop", ts); err != nil {
		t.Fatal(err)
	}
	h.post(general, alice, "lunch anyone?", "") // a channel message without a mention
	h.settle()
	if n := len(h.ai.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2 (the answer and the probe)", n)
	}
	if n := len(h.emu.BotMessages(general, ts)); n != 1 {
		t.Fatalf("%d bot messages in the thread, want 1", n)
	}
}

func TestE2ERestartKeepsTheConversation(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testRestart(t, "") })
	t.Run("Postgres", func(t *testing.T) { testRestart(t, storetest.PostgresDSN(t)) })
}

func testRestart(t *testing.T, databaseURL string) {
	h := newHarness(t, emulator.Config{})
	h.env["DATABASE_URL"] = databaseURL
	h.start()
	h.ai.Push(openaitest.Response{Text: "Noted: your favourite colour is teal."})
	ts := h.post(general, alice, "<@U0BOT> remember that my favourite colour is teal", "")
	h.replies(general, ts, 1)
	h.stop()

	h.start() // a new process on the same store
	h.ai.Push(openaitest.Response{Text: "Teal."})
	h.post(general, alice, "what is my favourite colour?", ts)
	h.replies(general, ts, 2)
	reqs := h.ai.Requests()
	if !carries(reqs[len(reqs)-1], "favourite colour is teal", "Noted") {
		t.Fatalf("after restart the request lacks the earlier exchange: %s", reqs[len(reqs)-1].Body)
	}
}

// TestE2EAcksWhileTheModelIsSlow checks that envelopes are acked within Slack's 3 s
// while every turn waits 6 s on the model.
func TestE2EAcksWhileTheModelIsSlow(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	h.ai.Handle(func(openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: "slow answer", Delay: 6 * time.Second}
	})
	var threads []string
	for i := range 5 {
		threads = append(threads, h.post(general, alice, fmt.Sprintf("<@U0BOT> slow question %d", i), ""))
	}
	for _, ts := range threads {
		h.replies(general, ts, 1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.emu.WaitForAcks(ctx); err != nil {
		t.Fatal(err)
	}
	for _, env := range h.emu.Envelopes() {
		if env.Deliveries != 1 || !env.Acked {
			t.Errorf("envelope %s (%s): %d deliveries, acked %v", env.ID, env.EventType, env.Deliveries, env.Acked)
		}
	}
	for _, a := range h.emu.Acks() {
		if a.Latency >= 3*time.Second {
			t.Errorf("envelope %s acked after %v", a.EnvelopeID, a.Latency)
		}
	}
}

// barrier lets n tool runs proceed only when all n are running at once.
type barrier struct {
	wg sync.WaitGroup
}

func newBarrier(n int) *barrier {
	b := &barrier{}
	b.wg.Add(n)
	return b
}

func (b *barrier) wait(ctx context.Context) error {
	b.wg.Done()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("the other tool never ran at the same time")
	}
}

func TestE2EParallelToolsAndFailures(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	both := newBarrier(2)
	h.tools = func(r *agents.Registry) error {
		params := json.RawMessage(`{"type":"object","properties":{}}`)
		for _, name := range []string{"weather", "traffic"} {
			result := name + ": all clear"
			r.MustRegister(agents.ToolSpec{Name: name, Description: "Reports " + name, Category: "Test", Parameters: params},
				agents.ToolFunc(func(ctx context.Context, _ json.RawMessage) (string, error) {
					if err := both.wait(ctx); err != nil {
						return "", err
					}
					return result, nil
				}))
		}
		r.MustRegister(agents.ToolSpec{Name: "broken", Description: "Always fails", Category: "Test", Parameters: params},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) {
				return "", errors.New("backend unavailable")
			}))
		r.MustRegister(agents.ToolSpec{Name: "sleepy", Description: "Never finishes", Category: "Test", Parameters: params},
			agents.ToolFunc(func(ctx context.Context, _ json.RawMessage) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}))
		return nil
	}
	h.start()

	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_w", Name: "weather", Arguments: `{}`}, {ID: "call_t", Name: "traffic", Arguments: `{}`}}},
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_b", Name: "broken", Arguments: `{}`}, {ID: "call_s", Name: "sleepy", Arguments: `{}`}}},
		openaitest.Response{Text: "Weather and traffic are clear; the other two sources failed."},
	)
	ts := h.post(general, alice, "<@U0BOT> can I drive to the beach?", "")
	// The progress message first, then the answer.
	if got := h.replies(general, ts, 2); got[1].Text != "Weather and traffic are clear; the other two sources failed." {
		t.Fatalf("reply %q", got[1].Text)
	}
	if m, _ := h.emu.Message(general, h.emu.BotMessages(general, ts)[0].TS); !strings.Contains(m.Text, "✓ Used weather, traffic, broken, sleepy") {
		t.Errorf("the progress message was not closed: %q", m.Text)
	}
	reqs := h.ai.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	results := map[string]string{}
	for _, m := range reqs[2].ToolResults() {
		results[m.ToolCallID] = m.Content
	}
	if !strings.Contains(results["call_w"], "\nweather: all clear\n</tool_output>") || !strings.Contains(results["call_t"], "\ntraffic: all clear\n</tool_output>") {
		t.Errorf("parallel tool results: %q", results)
	}
	if !strings.Contains(results["call_b"], "backend unavailable") {
		t.Errorf("failing tool's result %q does not report its error", results["call_b"])
	}
	if r := strings.ToLower(results["call_s"]); !strings.Contains(r, "timed out") && !strings.Contains(r, "deadline") {
		t.Errorf("timed-out tool's result %q does not say so", results["call_s"])
	}
}

func TestE2EBadInput(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()

	t.Run("MalformedAndIncompletePayloads", func(t *testing.T) {
		bad := []any{
			json.RawMessage(`{"type":"event_callback","event":{"type":"message","ts":123,"channel":["x"]}}`),
			json.RawMessage(`{"type":"event_callback","event_id":"EvX","event":{"type":"app_mention","text":"<@U0BOT> no user, no channel"}}`),
			json.RawMessage(`"just a string"`),
		}
		var ids []string
		for _, p := range bad {
			id, err := h.emu.SendEnvelope("events_api", p, 0)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		h.settle() // the bot still answers
		for _, id := range ids {
			if env, _ := h.emu.Envelope(id); !env.Acked {
				t.Errorf("malformed envelope %s not acked", id)
			}
		}
	})

	t.Run("HugeMessageAndHugeAnswer", func(t *testing.T) {
		huge := strings.Repeat("word ", 10000) // 50,000 characters
		answer := strings.Repeat("A long answer sentence. ", 2100)
		h.ai.Push(openaitest.Response{Text: answer})
		ts := h.post(general, alice, "<@U0BOT> "+huge, "")
		h.waitFor("the whole answer", func() bool {
			var total int
			for _, m := range h.emu.BotMessages(general, ts) {
				total += len(m.Text)
			}
			for _, f := range h.emu.Files() { // past MAX_REPLY_MESSAGES
				if f.ThreadTS == ts && f.Complete {
					total += len(f.Content)
				}
			}
			return total >= len(strings.TrimSpace(answer))-len(h.emu.BotMessages(general, ts))
		})
		msgs := h.emu.BotMessages(general, ts)
		if len(msgs) < 2 || len(msgs) > bot.DefaultMaxReplyMessages+1 {
			t.Fatalf("a %d-character answer came in %d message(s)", len(answer), len(msgs))
		}
		for _, m := range msgs {
			if n := utf8.RuneCountInString(m.Text); n > 4000 {
				t.Errorf("a message of %d characters", n)
			}
		}
		reqs := h.ai.Requests()
		if sent := reqs[len(reqs)-1].LastUserMessage(); len(sent) > 17000 || !strings.Contains(sent, "characters are shown") {
			t.Errorf("the model got %d characters of the 50,000", len(sent))
		}
		h.idle() // the turn is saved
		st, err := store.Open(context.Background(), store.Options{DataDir: h.dataDir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		cp, err := st.Load(context.Background(), conversation.Key{TeamID: "T0TEAM", ChannelID: general, ThreadTS: ts}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := cp.Messages[0].Text; got != strings.TrimSpace(huge) {
			t.Errorf("stored message has %d characters, want %d", len(got), len(strings.TrimSpace(huge)))
		}
	})

	t.Run("EmptyModelResponse", func(t *testing.T) {
		h.ai.Push(openaitest.Response{Empty: true}, openaitest.Response{Empty: true})
		ts := h.post(general, alice, "<@U0BOT> say nothing", "")
		got := h.replies(general, ts, 1)[0].Text
		if !strings.Contains(strings.ToLower(got), "empty") {
			t.Fatalf("reply to an empty model response: %q", got)
		}
	})

	t.Run("CutOffModelResponse", func(t *testing.T) {
		h.ai.Push(openaitest.Response{Text: "The first half of the answer", FinishReason: "length"})
		ts := h.post(general, alice, "<@U0BOT> long answer please", "")
		got := h.replies(general, ts, 1)[0].Text
		if !strings.HasPrefix(got, "The first half of the answer") || !strings.Contains(got, "incomplete") {
			t.Fatalf("reply to a cut-off response: %q", got)
		}
	})

	t.Run("SlackOkFalse", func(t *testing.T) {
		h.emu.FailNext("chat.postMessage", "channel_not_found")
		h.ai.Push(openaitest.Response{Text: "lost in transit"})
		ts := h.post(general, alice, "<@U0BOT> first try", "")
		h.waitFor("the failed post", func() bool {
			for _, c := range h.emu.Calls("chat.postMessage") {
				if c.Error == "channel_not_found" {
					return true
				}
			}
			return false
		})
		// The turn was saved: the next message in the thread carries it. (The
		// thread shows the failure, with Retry, then the second answer.)
		h.ai.Push(openaitest.Response{Text: "second answer"})
		h.post(general, alice, "<@U0BOT> again", ts)
		if got := h.replies(general, ts, 2); !strings.Contains(got[0].Text, "Slack refused the message or file (channel_not_found).") {
			t.Errorf("the failure message does not name Slack: %q", got[0].Text)
		}
		reqs := h.ai.Requests()
		if !carries(reqs[len(reqs)-1], "first try", "lost in transit") {
			t.Fatalf("the unposted reply was not kept: %s", reqs[len(reqs)-1].Body)
		}
	})

	t.Run("SlackRateLimited", func(t *testing.T) {
		h.emu.RateLimitNext("chat.postMessage", time.Second)
		h.ai.Push(openaitest.Response{Text: "after the rate limit"})
		ts := h.post(general, alice, "<@U0BOT> busy?", "")
		if got := h.replies(general, ts, 1); got[0].Text != "after the rate limit" {
			t.Fatalf("reply %q", got[0].Text)
		}
	})

	t.Run("ModelRateLimitedThenAnswers", func(t *testing.T) {
		h.ai.Push(openaitest.Response{Status: http.StatusTooManyRequests, RetryAfter: 100 * time.Millisecond}, openaitest.Response{Text: "retried"})
		ts := h.post(general, alice, "<@U0BOT> retry me", "")
		if got := h.replies(general, ts, 1); got[0].Text != "retried" {
			t.Fatalf("reply %q", got[0].Text)
		}
	})
}

func TestE2EScopeCheck(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["SCOPE_DESCRIPTION"] = "questions about the ACME billing system"
	h.env["SCOPE_DENY"] = "lottery"
	h.start()
	ts := h.post(general, alice, "<@U0BOT> pick my lottery numbers", "")
	got := h.replies(general, ts, 1)[0].Text
	if !strings.Contains(got, "ACME billing") {
		t.Fatalf("refusal %q does not say what the bot is for", got)
	}
	if n := len(h.ai.Requests()); n != 0 {
		t.Fatalf("%d model calls for a request denied by a rule", n)
	}
}

func TestE2EHealth(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200} {
		resp, err := http.Get("http://" + h.main.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
}

// TestE2EShutdownLetsRunningTurnsFinish cancels Main (as SIGTERM does) while a turn
// waits on the model; Run returns only after the answer is posted and saved.
func TestE2EShutdownLetsRunningTurnsFinish(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	h.ai.Push(openaitest.Response{Text: "finished before shutdown", Delay: time.Second})
	ts := h.post(general, alice, "<@U0BOT> take your time", "")
	h.waitFor("the model call", func() bool { return len(h.ai.Requests()) == 1 })
	h.stop()
	got := h.emu.BotMessages(general, ts)
	if len(got) != 1 || got[0].Text != "finished before shutdown" {
		t.Fatalf("after shutdown the thread has %+v", got)
	}

	h.start() // nothing is left pending: no second answer after a restart
	h.settle()
	if n := len(h.emu.BotMessages(general, ts)); n != 1 {
		t.Fatalf("%d answers after restart", n)
	}
}

// TestE2EStatusFallsBackToReaction: where assistant.threads.setStatus is refused (and
// no agent session shows that the bot works), the bot shows it is working with a
// reaction on the thread's parent and removes it after.
func TestE2EStatusFallsBackToReaction(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.emu.RefuseSessions(true)
	h.start()
	h.emu.FailNext("assistant.threads.setStatus", "not_allowed")
	h.ai.Push(openaitest.Response{Text: "done"})
	ts := h.post(general, alice, "<@U0BOT> hi", "")
	h.replies(general, ts, 1)
	h.waitFor("the reaction to be removed", func() bool { return len(h.emu.Calls("reactions.remove")) == 1 })
	adds := h.emu.Calls("reactions.add")
	if len(adds) != 1 || adds[0].Params.Get("name") != "hourglass_flowing_sand" || adds[0].Params.Get("timestamp") != ts {
		t.Fatalf("reactions.add calls: %+v", adds)
	}
	if m, _ := h.emu.Message(general, ts); len(m.Reactions) != 0 {
		t.Fatalf("reactions left on the message: %+v", m.Reactions)
	}
}

// TestE2EPromptStaysBoundedAsThreadGrows runs 16 turns in one thread with a small
// history window: older messages are summarized by the small model and the executor's
// prompt stops growing.
func TestE2EPromptStaysBoundedAsThreadGrows(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["HISTORY_MESSAGES"] = "6"
	h.env["OPENAI_SMALL_MODEL"] = "gpt-small"
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if r.Chat.Model == "gpt-small" {
			return openaitest.Response{Text: "Earlier, alice asked questions 0 to N about the roadmap."}
		}
		return openaitest.Response{Text: "Answer to " + r.LastUserMessage() + ". " + strings.Repeat("Some detail. ", 40)}
	})
	h.start()
	ts := h.post(general, alice, "<@U0BOT> roadmap question 0", "")
	h.replies(general, ts, 1)
	for i := 1; i < 16; i++ {
		h.post(general, alice, fmt.Sprintf("roadmap question %d", i), ts)
		h.replies(general, ts, i+1)
	}
	var sizes []int
	var summarized bool
	for _, r := range h.ai.Requests() {
		if r.Chat.Model == "gpt-small" {
			summarized = true
			continue
		}
		sizes = append(sizes, len(r.Body))
	}
	if !summarized {
		t.Fatal("the history was never summarized")
	}
	last := h.ai.Requests()[len(h.ai.Requests())-1]
	if !carries(last, "Earlier, alice asked questions") {
		t.Fatal("the last prompt does not carry the summary")
	}
	if max8, last8 := maxOf(sizes[:8]), maxOf(sizes[8:]); last8 > max8*3/2 {
		t.Fatalf("prompt sizes grow: %v", sizes)
	}
	t.Logf("executor request bytes per turn: %v", sizes)
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// TestE2EStop stops a running turn with the Stop button of its progress message, and
// another with a new message in the thread; each says so and keeps its checkpoint.
func TestE2EStop(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.tools = registerSlowReport
	h.start()
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if strings.Contains(r.LastUserMessage(), "report") && len(r.ToolResults()) == 0 {
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "slow_report", Arguments: "{}"}}}
		}
		return openaitest.Response{Text: "Here is the answer to: " + r.LastUserMessage()}
	})

	t.Run("StopButton", func(t *testing.T) {
		ts := h.post(general, alice, "<@U0BOT> build the quarterly report", "")
		progress := h.replies(general, ts, 1)[0]
		if !strings.Contains(progress.Text, "slow_report") {
			t.Fatalf("progress message %q", progress.Text)
		}
		if _, err := h.emu.ClickButtonByLabel(general, progress.TS, alice, "Stop"); err != nil {
			t.Fatal(err)
		}
		got := h.replies(general, ts, 2)
		if !strings.HasPrefix(got[1].Text, "Stopped at <@U0ALICE>'s request") {
			t.Fatalf("reply %q", got[1].Text)
		}
		h.waitFor("the progress message to say it stopped", func() bool {
			m, _ := h.emu.Message(general, progress.TS)
			return strings.Contains(m.Text, "Stopped") && !strings.Contains(string(m.Blocks), `"Stop"`)
		})
		// The thread goes on: the next question is answered with the stopped one in its history.
		h.post(general, alice, "never mind, what day is it?", ts)
		got = h.replies(general, ts, 3)
		if !strings.HasPrefix(got[2].Text, "Here is the answer to: never mind") {
			t.Fatalf("next reply %q", got[2].Text)
		}
		reqs := h.ai.Requests()
		if !carries(reqs[len(reqs)-1], "build the quarterly report", "Stopped at") {
			t.Fatal("the stopped turn is not in the checkpoint")
		}
	})

	t.Run("NewMessage", func(t *testing.T) {
		ts := h.post(general, alice, "<@U0BOT> build the yearly report", "")
		h.replies(general, ts, 1) // progress
		h.post(general, alice, "forget it, just say hi", ts)
		got := h.replies(general, ts, 3)
		if !strings.HasPrefix(got[1].Text, "Stopped: a newer message arrived") || !strings.HasPrefix(got[2].Text, "Here is the answer to: forget it") {
			t.Fatalf("replies %q / %q", got[1].Text, got[2].Text)
		}
	})
}

// TestE2EFetchURLRefusesLoopback: the model asks fetch_url for a page on 127.0.0.1 (a
// live server); the tool refuses before connecting and the model is told why.
func TestE2EFetchURLRefusesLoopback(t *testing.T) {
	var hits atomic.Int32
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "internal admin page")
	}))
	defer secret.Close()
	h := newHarness(t, emulator.Config{})
	h.start()
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_f", Name: "fetch_url", Arguments: fmt.Sprintf(`{"url":%q}`, secret.URL)}}},
		openaitest.Response{Text: "I can't open internal addresses."},
	)
	ts := h.post(general, alice, "<@U0BOT> summarize "+secret.URL, "")
	h.replies(general, ts, 2)
	reqs := h.ai.Requests()
	results := reqs[len(reqs)-1].ToolResults()
	if len(results) != 1 || !strings.Contains(results[0].Content, "fetch_url refuses 127.0.0.1") || !strings.Contains(results[0].Content, "loopback") {
		t.Fatalf("tool result %+v", results)
	}
	if hits.Load() != 0 {
		t.Fatal("the loopback server was reached")
	}
}

// TestE2EPlannerWithADependentTask runs the planner strategy through the real
// program: understand → plan (B depends on A) → tasks → reflect → answer. Task A calls
// two tools in parallel, one failing; B's task request carries A's result.
func TestE2EPlannerWithADependentTask(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STRATEGY"] = "planner"
	both := newBarrier(2)
	h.tools = func(r *agents.Registry) error {
		params := json.RawMessage(`{"type":"object","properties":{}}`)
		r.MustRegister(agents.ToolSpec{Name: "calendar", Description: "Reads the calendar", Category: "Test", Parameters: params},
			agents.ToolFunc(func(ctx context.Context, _ json.RawMessage) (string, error) {
				if err := both.wait(ctx); err != nil {
					return "", err
				}
				return "launch: March 3", nil
			}))
		r.MustRegister(agents.ToolSpec{Name: "wiki", Description: "Reads the wiki", Category: "Test", Parameters: params},
			agents.ToolFunc(func(ctx context.Context, _ json.RawMessage) (string, error) {
				if err := both.wait(ctx); err != nil {
					return "", err
				}
				return "", errors.New("wiki is down")
			}))
		return nil
	}
	var mu sync.Mutex
	var taskBSawA bool
	var taskAResults []string
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if resp, ok := launchPlan(r); ok {
			return resp
		}
		task := r.SystemPrompt() + r.LastUserMessage()
		switch {
		case strings.Contains(task, "## The task (b)"):
			mu.Lock()
			taskBSawA = strings.Contains(task, "RESULT-A: the launch is on March 3")
			mu.Unlock()
			return openaitest.Response{Text: "RESULT-B: 12 days"}
		case strings.Contains(task, "## The task (a)"):
			if results := r.ToolResults(); len(results) > 0 {
				mu.Lock()
				for _, m := range results {
					taskAResults = append(taskAResults, m.Content)
				}
				mu.Unlock()
				return openaitest.Response{Text: "RESULT-A: the launch is on March 3"}
			}
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "calendar", Arguments: "{}"}, {Name: "wiki", Arguments: "{}"}}}
		}
		return openaitest.Response{Text: "The launch is on March 3, in 12 days."}
	})
	h.start()
	ts := h.post(general, alice, "<@U0BOT> how many days until the launch?", "")
	h.waitFor("the answer", func() bool {
		for _, m := range h.emu.BotMessages(general, ts) {
			if m.Text == "The launch is on March 3, in 12 days." {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	if !taskBSawA {
		t.Fatal("task b ran without task a's result")
	}
	// Task a's two tools ran at once (the barrier), and the failing one's error went
	// back to the model as its result.
	if got := strings.Join(taskAResults, " | "); !strings.Contains(got, "launch: March 3") || !strings.Contains(got, "wiki is down") {
		t.Fatalf("task a's tool results: %s", got)
	}
}

// TestE2EMCPTool registers the tools of an MCP server (streamable HTTP, started by the
// test) from MCP_CONFIG and has the model call one.
func TestE2EMCPTool(t *testing.T) {
	type lookupArgs struct {
		Customer string `json:"customer" jsonschema:"the customer's name"`
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "crm", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "lookup", Description: "Look up a customer's plan.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a lookupArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Customer + " is on the Enterprise plan"}}}, nil, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer hs.Close()
	cfg := filepath.Join(t.TempDir(), "mcp.yaml")
	if err := os.WriteFile(cfg, []byte("servers:\n  - name: crm\n    url: "+hs.URL+"\n    timeout: 10s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, emulator.Config{})
	h.env["MCP_CONFIG"] = cfg
	h.start()
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_m", Name: "crm__lookup", Arguments: `{"customer":"Acme"}`}}},
		openaitest.Response{Text: "Acme is on the Enterprise plan."},
	)
	ts := h.post(general, alice, "<@U0BOT> which plan is Acme on?", "")
	h.replies(general, ts, 2)
	reqs := h.ai.Requests()
	if names := strings.Join(reqs[0].ToolNames(), ","); !strings.Contains(names, "crm__lookup") {
		t.Fatalf("tools offered: %s", names)
	}
	results := reqs[1].ToolResults()
	// The server is not marked trusted: its output is labelled untrusted.
	if len(results) != 1 || results[0].Content != agents.ToolOutput("crm__lookup", agents.TrustUntrusted, "Acme is on the Enterprise plan") {
		t.Fatalf("tool result %+v", results)
	}
}

// TestE2EOutOfScopeItemRejectedAndForgotten: a tool marks one of the items it found
// out of scope (secondary scope check); the reply rejects it by name, and the next
// turn's session context keeps the other items but not it.
func TestE2EOutOfScopeItemRejectedAndForgotten(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.tools = func(r *agents.Registry) error {
		r.MustRegister(agents.ToolSpec{Name: "find_records", Description: "Find records", Category: "Records",
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) {
				return `{"entities":[{"id":"INV-1","title":"Invoice March","type":"invoice"},{"id":"INV-2","title":"Invoice April","type":"invoice"}],` +
					`"out_of_scope":[{"id":"MED-7","title":"Medical leave note","reason":"medical records are outside billing"}]}`, nil
			}))
		return nil
	}
	h.start()
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "find_records", Arguments: "{}"}}},
		openaitest.Response{Text: "Here are the records."},
		openaitest.Response{Text: "The first one is the April invoice."},
	)
	ts := h.post(general, alice, "<@U0BOT> show me everything for Acme", "")
	got := h.replies(general, ts, 2)
	if !strings.Contains(got[1].Text, "outside what I'm set up for") || !strings.Contains(got[1].Text, "MED-7") || !strings.Contains(got[1].Text, "medical records are outside billing") {
		t.Fatalf("rejection %q", got[1].Text)
	}
	h.post(general, alice, "what about the first one?", ts)
	h.replies(general, ts, 3)
	reqs := h.ai.Requests()
	var session string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		if strings.Contains(m.Content, "Items recently discussed") {
			session = m.Content
		}
	}
	if !strings.Contains(session, "INV-2 — Invoice April") || !strings.Contains(session, "INV-1") || strings.Contains(session, "MED-7") {
		t.Fatalf("session context after the rejection: %q", session)
	}
}

// ingest writes file (Markdown content) in a new directory dir and ingests it with the
// CLI into the harness's embedded store, before start.
func (h *harness) ingest(dir, file, content string) {
	h.t.Helper()
	docs := filepath.Join(h.t.TempDir(), dir)
	if err := os.MkdirAll(docs, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, file), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.t.Setenv("DATA_DIR", h.dataDir)
	h.t.Setenv("DATABASE_URL", "")
	if out, err := runCLI(h.t, "ingest", docs); err != nil {
		h.t.Fatalf("ingest: %v\n%s", err, out)
	}
}

// TestE2EKnowledgeAnswerCitesSources ingests a document with `threadwright ingest`,
// then answers a question from it: search_knowledge returns the passage with its
// source, and the reply cites it.
func TestE2EKnowledgeAnswerCitesSources(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.ingest("handbook", "leave.md", "# Leave\n\n## Parental leave\n\nEmployees get 16 weeks of paid parental leave, to be taken within the first year.\n\n## Sick leave\n\nUp to 10 paid sick days a year.\n")
	h.start()
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if results := r.ToolResults(); len(results) > 0 {
			return openaitest.Response{Text: "You get **16 weeks** of paid parental leave [1].\n\nSources: [1] " + sourceOf(results[0].Content)}
		}
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "search_knowledge", Arguments: `{"query":"how long is parental leave"}`}}}
	})
	ts := h.post(general, alice, "<@U0BOT> how long is parental leave?", "")
	got := h.replies(general, ts, 2)
	reqs := h.ai.Requests()
	result := reqs[len(reqs)-1].ToolResults()[0].Content
	if !strings.Contains(result, "leave.md — Parental leave") || !strings.Contains(result, "16 weeks") {
		t.Fatalf("search_knowledge returned:\n%s", result)
	}
	if answer := got[1].Text; !strings.Contains(answer, "*16 weeks*") || !strings.Contains(answer, "leave.md") {
		t.Fatalf("answer %q", answer)
	}
}

// sourceOf returns the source path of the first passage in a search_knowledge result
// ("[1] path — heading").
func sourceOf(result string) string {
	for _, line := range strings.Split(result, "\n") {
		if strings.HasPrefix(line, "[1] ") {
			path, _, _ := strings.Cut(strings.TrimPrefix(line, "[1] "), " — ")
			return path
		}
	}
	return "?"
}
