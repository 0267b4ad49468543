package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EBurstOnTwoConnections: with SOCKET_CONNECTIONS=2 the bot holds two Socket
// Mode connections, and the emulator hands the envelopes of a burst of 200 mentions
// (each from a person of its own, each a thread) to both in turn: every mention is
// answered once, and every envelope delivered once and acked once.
func TestE2EBurstOnTwoConnections(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["SOCKET_CONNECTIONS"] = "2"
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: answerTo(r.LastUserMessage())}
	})
	const n = 200
	users := make([]string, n)
	for i := range users {
		users[i] = fmt.Sprintf("U0BURST%03d", i)
		h.emu.AddUser(emulator.User{ID: users[i], Name: fmt.Sprintf("burst%d", i)})
	}
	h.start()
	h.waitFor("both connections", func() bool { return h.emu.NumConnections() == 2 })

	roots := make([]string, n)
	for i := range roots {
		roots[i] = h.post(general, users[i], fmt.Sprintf("<@U0BOT> burst question q%dq", i), "")
	}
	answered := 0 // roots[:answered] have their answer: each poll looks at one more
	h.waitFor("every thread's answer", func() bool {
		for answered < n && len(h.emu.BotMessages(general, roots[answered])) > 0 {
			answered++
		}
		return answered == n
	})
	h.idle()
	for i, root := range roots {
		msgs := h.emu.BotMessages(general, root)
		if len(msgs) != 1 || !strings.Contains(msgs[0].Text, fmt.Sprintf("q%dq", i)) {
			t.Errorf("thread %d answered %d times: %+v", i, len(msgs), msgs)
		}
	}
	for _, e := range h.emu.Envelopes() {
		if e.Deliveries != 1 || !e.Acked {
			t.Errorf("envelope %s (%s) delivered %d times, acked %v", e.ID, e.EventType, e.Deliveries, e.Acked)
		}
	}
	for _, a := range h.emu.Acks() {
		if a.Duplicate {
			t.Errorf("envelope %s acked twice", a.EnvelopeID)
		}
	}
	if h.emu.NumConnections() != 2 {
		t.Errorf("%d connections at the end; want 2", h.emu.NumConnections())
	}
}
