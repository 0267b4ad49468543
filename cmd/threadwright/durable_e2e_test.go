package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// These tests hold threadwright to its durability promises (docs/durability.md, "Replicas, crashes
// and outages"; docs/architecture.md, "Durable turns"), running the real program
// against the emulated Slack, the fake model and real Postgres. They assert on the
// threads as Slack shows them: exactly one answer per input, in order.

// answerTo is what echoModel answers to text.
func answerTo(text string) string { return "answer to: " + text }

// echoModel answers every chat completion with answerTo(the last user message), after
// delay.
func (c *cluster) echoModel(delay time.Duration) {
	c.ai.Handle(func(r openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: answerTo(r.LastUserMessage()), Delay: delay}
	})
}

// stoppedAnswer is the answer of a turn that a newer message stopped.
const stoppedAnswer = "Stopped: a newer message arrived, so I'm answering that one instead."

// TestE2EReplicasAnswerEachInputOnceInOrder runs two replicas on one Postgres; the
// emulator hands each envelope to one of their Socket Mode connections, as Slack does.
// Twenty threads each get a mention and two follow-ups, each posted once the model has
// been asked about every thread's message before it (so it arrives mid-turn), against a
// model that takes 1.5 s: every input gets exactly one answer, in order (a turn that a
// newer message stopped answers that it stopped), and each follow-up's model request
// carries the thread's earlier messages.
func TestE2EReplicasAnswerEachInputOnceInOrder(t *testing.T) {
	c := newCluster(t, storetest.PostgresDSN(t))
	c.echoModel(1500 * time.Millisecond)
	c.startMain("a")
	c.startMain("b")

	const threads = 20
	roots := make([]string, threads)
	for i := range threads {
		roots[i] = c.post(general, alice, fmt.Sprintf("<@U0BOT> t%d m1", i), "")
	}
	// Each follow-up arrives while the turn before it calls the model.
	c.waitFor("every first message at the model", func() bool { return c.atModel("t%d m1", threads) })
	for i := range threads {
		c.post(general, alice, fmt.Sprintf("t%d m2", i), roots[i])
	}
	c.waitFor("every second message at the model", func() bool { return c.atModel("t%d m2", threads) })
	for i := range threads {
		c.post(general, alice, fmt.Sprintf("t%d m3", i), roots[i])
	}
	c.settle()

	for i, root := range roots {
		got := c.answers(general, root)
		if len(got) != 3 {
			t.Errorf("thread t%d shows %d answers for 3 inputs: %q", i, len(got), got)
			continue
		}
		for k, a := range got {
			want := answerTo(fmt.Sprintf("t%d m%d", i, k+1))
			if a != want && !(k < 2 && a == stoppedAnswer) {
				t.Errorf("thread t%d answer %d = %q; want %q (or, for an input a newer one stopped, that it stopped)", i, k+1, a, want)
			}
		}
	}
	for _, r := range c.ai.Requests() {
		last := r.LastUserMessage()
		var i int
		if _, err := fmt.Sscanf(last, "t%d m3", &i); err != nil {
			continue
		}
		var users []string
		for _, m := range r.Chat.Messages {
			if m.Role == "user" {
				users = append(users, m.Content)
			}
		}
		if !slices.Contains(users, fmt.Sprintf("t%d m1", i)) || !slices.Contains(users, fmt.Sprintf("t%d m2", i)) {
			t.Errorf("the model request for %q lacks the thread's earlier messages: %q", last, users)
		}
	}
}

// gatedModel answers with answerTo, holding the calls for which hold returns true
// until release is closed or their caller is gone (a killed replica); calls counts the
// calls.
type gatedModel struct {
	calls   atomic.Int32
	release chan struct{}
	once    sync.Once
}

func (c *cluster) gatedModel(hold func(n int32, r openaitest.Request) bool) *gatedModel {
	g := &gatedModel{release: make(chan struct{})}
	c.t.Cleanup(g.open)
	c.ai.Handle(func(r openaitest.Request) openaitest.Response {
		n := g.calls.Add(1)
		if hold(n, r) {
			select {
			case <-g.release:
			case <-r.Done():
			}
		}
		return openaitest.Response{Text: answerTo(r.LastUserMessage())}
	})
	return g
}

func (g *gatedModel) open() { g.once.Do(func() { close(g.release) }) }

// TestE2EKillMidTurnIsTakenOver kills -9 a replica while its turn waits for the model.
// Another replica takes the thread over once the dead one's lease expires, whatever
// TURN_TIMEOUT is, and answers the mention once; a follow-up sent meanwhile is
// answered after it, never before. The channel queues messages: under interrupt, a
// follow-up stored after b began the taken-over turn (b slow to start) would stop it.
func TestE2EKillMidTurnIsTakenOver(t *testing.T) {
	c := newCluster(t, storetest.PostgresDSN(t))
	c.env["TURN_TIMEOUT"] = "10m"
	c.env["DOUBLE_TEXTING"] = "queue"
	g := c.gatedModel(func(n int32, _ openaitest.Request) bool { return n == 1 })
	a := c.startProcess("a")
	root := c.post(general, alice, "<@U0BOT> first question", "")
	c.waitFor("a's turn to call the model", func() bool { return g.calls.Load() == 1 })
	killed := time.Now()
	a.kill()

	c.startMain("b")
	c.post(general, alice, "second question", root)
	c.waitAnswers(general, root, 1)
	t.Logf("thread taken over and answered %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	c.settle()
	got := c.answers(general, root)
	want := []string{answerTo("first question"), answerTo("second question")}
	if !slices.Equal(got, want) {
		t.Fatalf("thread shows %q; want %q", got, want)
	}
}

// TestE2EKillAfterPostAnswersOnce kills -9 a replica after it posted its answer and
// before it could save it (its database answers slowly). The replica that takes the
// thread over finds the answer in the thread and saves it: the thread shows it once,
// and the model is not asked again.
func TestE2EKillAfterPostAnswersOnce(t *testing.T) {
	c := newCluster(t, storetest.PostgresDSN(t))
	c.cuttable()
	g := c.gatedModel(func(n int32, _ openaitest.Request) bool {
		if n == 1 {
			c.slowDatabase(time.Minute) // the answer goes out; its save hangs
		}
		return false
	})
	a := c.startProcess("a")
	root := c.post(general, alice, "<@U0BOT> what is the plan?", "")
	c.waitAnswers(general, root, 1)
	a.kill()

	c.env["DATABASE_URL"] = c.direct
	c.startMain("b")
	c.settle()
	if got, want := c.answers(general, root), []string{answerTo("what is the plan?")}; !slices.Equal(got, want) {
		t.Fatalf("thread shows %q; want %q", got, want)
	}
	if n := g.calls.Load(); n != 1 {
		t.Fatalf("the model was called %d times; want once (the posted answer is reused)", n)
	}
	c.proxy.Toxics.ResetToxics(context.Background())
	c.post(general, alice, "and then?", root)
	c.waitAnswers(general, root, 2)
	last := c.ai.Requests()[len(c.ai.Requests())-1]
	if !strings.Contains(fmt.Sprint(last.Chat.Messages), answerTo("what is the plan?")) {
		t.Fatalf("the follow-up's model request lacks the reused answer: %v", last.Chat.Messages)
	}
}

// TestE2EDatabaseCut cuts the connection between the bot and Postgres with a proxy:
// mid-turn, for longer than a lease lives, and between turns, when a mention arrives.
// The turn's answer is posted once and saved when the database is back; the mention
// is acked while the database is unreachable (spooled on local disk) and answered once
// after.
func TestE2EDatabaseCut(t *testing.T) {
	c := newCluster(t, storetest.PostgresDSN(t))
	c.cuttable()
	g := c.gatedModel(func(n int32, _ openaitest.Request) bool { return n == 1 })
	c.startMain("a")

	root := c.post(general, alice, "<@U0BOT> first", "")
	c.waitFor("the turn to call the model", func() bool { return g.calls.Load() == 1 })
	c.cut()
	g.open()
	c.waitAnswers(general, root, 1) // posted while the database is cut off
	// The outage outlasts the thread's lease: it expires in the database (its clock).
	c.waitFor("the thread's lease to expire", func() bool { return c.liveLeases() == 0 })
	c.restore()
	c.post(general, alice, "second", root)
	c.waitAnswers(general, root, 2)
	c.settle()
	if got, want := c.answers(general, root), []string{answerTo("first"), answerTo("second")}; !slices.Equal(got, want) {
		t.Fatalf("thread shows %q; want %q", got, want)
	}
	last := c.ai.Requests()[len(c.ai.Requests())-1]
	if !strings.Contains(fmt.Sprint(last.Chat.Messages), answerTo("first")) {
		t.Fatalf("the follow-up's model request lacks the first turn: %v", last.Chat.Messages)
	}

	c.cut()
	other := c.post(general, alice, "<@U0BOT> asked during the outage", "")
	c.waitFor("the mention's ack", func() bool {
		env, ok := c.emu.EventEnvelope("app_mention", other)
		return ok && env.Acked
	})
	c.restore()
	c.waitAnswers(general, other, 1)
	c.settle()
	if got, want := c.answers(general, other), []string{answerTo("asked during the outage")}; !slices.Equal(got, want) {
		t.Fatalf("thread shows %q; want %q", got, want)
	}
}

// TestE2EDatabaseHangs: while the database answers nothing and resets nothing (a
// proxy drops what it sends and keeps the connections open), a mention is acked in
// time, once: Slack delivers it once (the intake stops waiting for the store and
// spools it), and it is answered once when the database is back.
func TestE2EDatabaseHangs(t *testing.T) {
	c := newCluster(t, storetest.PostgresDSN(t))
	c.cuttable()
	c.echoModel(0)
	c.startMain("a")
	root := c.post(general, alice, "<@U0BOT> before", "")
	c.waitAnswers(general, root, 1)
	c.settle()

	c.hangDatabase()
	other := c.post(general, alice, "<@U0BOT> asked while the database hangs", "")
	c.waitFor("the mention's ack", func() bool {
		env, ok := c.emu.EventEnvelope("app_mention", other)
		return ok && env.Acked
	})
	if env, _ := c.emu.EventEnvelope("app_mention", other); env.Deliveries != 1 {
		t.Errorf("the mention was delivered %d times; want once (acked within Slack's 3 s)", env.Deliveries)
	}
	c.unhangDatabase()
	c.waitAnswers(general, other, 1)
	c.settle()
	if got, want := c.answers(general, other), []string{answerTo("asked while the database hangs")}; !slices.Equal(got, want) {
		t.Fatalf("thread shows %q; want %q", got, want)
	}
}

// TestE2ENULText: a message with a NUL character and invalid UTF-8 is stored
// repaired and answered, on both stores.
func TestE2ENULText(t *testing.T) {
	for _, tt := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"SQLite", func(*testing.T) string { return "" }},
		{"Postgres", func(t *testing.T) string { return storetest.PostgresDSN(t) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, tt.dsn(t))
			c.echoModel(0)
			c.startMain("a")
			root := c.post(general, alice, "<@U0BOT> nul\x00here and \xffthere", "")
			c.waitAnswers(general, root, 1)
			c.settle()
			if got, want := c.answers(general, root), []string{answerTo("nulhere and \uFFFDthere")}; !slices.Equal(got, want) {
				t.Fatalf("thread shows %q; want %q", got, want)
			}
		})
	}
}

// TestE2ETurnTimeoutEndsCleanly: a turn past TURN_TIMEOUT tells the thread it took too
// long, saves, and finishes its input: nothing runs it again.
func TestE2ETurnTimeoutEndsCleanly(t *testing.T) {
	c := newCluster(t, "")
	c.env["TURN_TIMEOUT"] = "2s"
	c.echoModel(time.Minute)
	c.startMain("a")
	root := c.post(general, alice, "<@U0BOT> a very slow question", "")
	c.waitAnswers(general, root, 1)
	c.settle()
	if got := c.answers(general, root); len(got) != 1 || !strings.HasPrefix(got[0], "Sorry, that took too long") {
		t.Fatalf("thread shows %q; want one answer saying it took too long", got)
	}
	if n := len(c.ai.Requests()); n != 1 {
		t.Fatalf("the model was called %d times; want once", n)
	}
}

// TestE2EModel429Burst: a burst of four 429s (Retry-After: 1) and three 5xx is ridden
// out with the default retry settings: the answer comes, not an apology.
func TestE2EModel429Burst(t *testing.T) {
	c := newCluster(t, "")
	var n atomic.Int32
	c.ai.Handle(func(r openaitest.Request) openaitest.Response {
		switch k := n.Add(1); {
		case k <= 4:
			return openaitest.Response{Status: 429, ErrorMessage: "Rate limit reached", RetryAfter: time.Second}
		case k <= 7:
			return openaitest.Response{Status: 503, ErrorMessage: "overloaded"}
		}
		return openaitest.Response{Text: answerTo(r.LastUserMessage())}
	})
	c.startMain("a")
	root := c.post(general, alice, "<@U0BOT> busy model?", "")
	c.waitAnswers(general, root, 1)
	c.settle()
	if got, want := c.answers(general, root), []string{answerTo("busy model?")}; !slices.Equal(got, want) {
		t.Fatalf("thread shows %q; want %q", got, want)
	}
}
