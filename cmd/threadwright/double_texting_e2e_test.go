package main

import (
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// testClock is real time plus an offset the test sets forward (Hooks.Now).
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time      { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *testClock) add(d time.Duration) { c.offset.Add(int64(d)) }

// TestE2EDoubleTexting holds each double-texting policy (docs/architecture.md, "Double
// texting") to its promise, through the real slack-go client against the emulator,
// the real go-openai client against the fake model, two replicas on one Postgres: a
// person sends "hey" · "can you check" · "the deploy of api-7?", 300 ms apart on the
// replicas' clock. interrupt answers two "Stopped" and the last message; queue answers
// each message in order; merge (DOUBLE_TEXTING_WINDOW 1h, the clock set forward once
// the three are stored) answers the burst once, as one question. No input is left
// pending, and none is answered twice.
func TestE2EDoubleTexting(t *testing.T) {
	burst := []string{"hey", "can you check", "the deploy of api-7?"}
	for _, tc := range []struct {
		policy string
		// hold says which model calls wait for the gate (or for their turn to stop).
		hold func(r openaitest.Request) bool
		want []string
	}{
		{"interrupt", func(r openaitest.Request) bool { return r.LastUserMessage() != burst[2] },
			[]string{stoppedAnswer, stoppedAnswer, answerTo(burst[2])}},
		{"queue", func(r openaitest.Request) bool { return r.LastUserMessage() == burst[0] },
			[]string{answerTo(burst[0]), answerTo(burst[1]), answerTo(burst[2])}},
		{"merge", func(openaitest.Request) bool { return false },
			[]string{answerTo(strings.Join(burst, "\n"))}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			c := newCluster(t, storetest.PostgresDSN(t))
			clock := &testClock{}
			c.now = clock.now
			c.env["DOUBLE_TEXTING_CHANNELS"] = general + ":" + tc.policy // the harness's default is interrupt
			c.env["DOUBLE_TEXTING_WINDOW"] = "1h"
			g := c.gatedModel(func(_ int32, r openaitest.Request) bool { return tc.hold(r) })
			c.startMain("a")
			c.startMain("b")
			asked := func(text string) func() bool {
				return func() bool {
					return slices.ContainsFunc(c.ai.Requests(), func(r openaitest.Request) bool { return r.LastUserMessage() == text })
				}
			}

			root := c.post(general, alice, "<@U0BOT> "+burst[0], "")
			// postRest sends the other two messages, 300 ms apart on the replicas' clock,
			// each once the one before it is stored, as a person's would be (the
			// replicas' Socket Mode connections could otherwise store them out of order).
			postRest := func() {
				for i, text := range burst[1:] {
					clock.add(300 * time.Millisecond)
					c.post(general, alice, text, root)
					c.waitFor("the message stored", func() bool { return c.pendingInputs() == i+2 })
				}
			}
			switch tc.policy {
			case "interrupt":
				// Each message arrives while the turn of the one before it asks the model.
				c.waitFor("the first message at the model", asked(burst[0]))
				clock.add(300 * time.Millisecond)
				c.post(general, alice, burst[1], root)
				c.waitFor("the second message at the model", asked(burst[1]))
				clock.add(300 * time.Millisecond)
				c.post(general, alice, burst[2], root)
			case "queue":
				c.waitFor("the first message at the model", asked(burst[0]))
				postRest()
				g.open()
			case "merge":
				// A reply without a mention is the bot's once the mention is stored.
				c.waitFor("the first message stored", func() bool { return c.pendingInputs() == 1 })
				postRest()
				if n := len(c.ai.Requests()); n != 0 {
					t.Fatalf("the model was asked %d times within the merge window", n)
				}
				clock.add(time.Hour)
			}
			c.waitAnswers(general, root, len(tc.want))
			c.settle()
			if got := c.answers(general, root); !slices.Equal(got, tc.want) {
				t.Fatalf("the thread shows %q; want %q", got, tc.want)
			}
			if n := c.pendingInputs(); n != 0 {
				t.Fatalf("%d inputs left pending", n)
			}
		})
	}
}
