package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EFloodIsBounded: one person sends 100 mentions while the model is slow (each
// accepted one holds its model call). At most MAX_QUEUED_PER_USER of them are taken,
// so at most that many model calls are made; the person is told, in one ephemeral
// notice, and another person in the same channel is answered meanwhile. The limits
// are the defaults of the configuration.
func TestE2EFloodIsBounded(t *testing.T) {
	const mallory = "U0MALLORY"
	h := newHarness(t, emulator.Config{})
	h.emu.AddUser(emulator.User{ID: mallory, Name: "mallory"})
	h.env["MAX_QUEUED_PER_THREAD"], h.env["MAX_QUEUED_PER_USER"], h.env["USER_RATE"], h.env["USER_BURST"] = "20", "10", "20", "10"
	release := make(chan struct{})
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if strings.Contains(r.LastUserMessage(), "flood") {
			select {
			case <-release:
			case <-r.Done():
			}
			return openaitest.Response{Text: "an answer to the flood"}
		}
		return openaitest.Response{Text: "Hello Alice."}
	})
	h.start()

	roots := make([]string, 100)
	for i := range roots {
		roots[i] = h.post(general, mallory, fmt.Sprintf("<@U0BOT> flood %d", i), "")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.emu.WaitForAcks(ctx); err != nil { // every mention taken or refused
		t.Fatal(err)
	}
	ts := h.post(general, alice, "<@U0BOT> hello?", "")
	if got := h.replies(general, ts, 1); got[0].Text != "Hello Alice." {
		t.Fatalf("alice's reply %q", got[0].Text)
	}
	h.waitFor("mallory's notice", func() bool { return len(h.emu.Ephemerals(general, mallory)) > 0 })
	close(release)
	h.idle()

	answered := 0
	for _, root := range roots {
		if len(h.emu.BotMessages(general, root)) > 0 {
			answered++
		}
	}
	calls := 0
	for _, r := range h.ai.Requests() {
		if strings.Contains(r.LastUserMessage(), "flood") {
			calls++
		}
	}
	if answered == 0 || answered > 10 || calls != answered {
		t.Errorf("%d of 100 mentions answered with %d model calls; want 1 to MAX_QUEUED_PER_USER 10, one call each", answered, calls)
	}
	notices := h.emu.Ephemerals(general, mallory)
	if len(notices) != 1 || !strings.Contains(notices[0].Text, "I skipped this one") {
		var texts []string
		for _, n := range notices {
			texts = append(texts, n.Text)
		}
		t.Errorf("mallory got %d notices, want 1: %q", len(notices), texts)
	}
	if n := len(h.emu.Ephemerals(general, alice)); n != 0 {
		t.Errorf("alice got %d notices; want none", n)
	}
}
