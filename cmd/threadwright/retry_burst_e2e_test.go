package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2ERetryMergedBurst: under DOUBLE_TEXTING merge, a person's three messages are
// answered as one burst; the model is down, so the burst's answer fails with Retry.
// The model recovers, and Retry answers the whole burst, all three messages as one
// question, once, from the history before the first; no input is left pending.
func TestE2ERetryMergedBurst(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["MODEL_MAX_RETRIES"] = "1"
	h.env["DOUBLE_TEXTING"] = "merge"
	h.env["DOUBLE_TEXTING_WINDOW"] = "2s" // the feature's window: the three messages arrive well within it
	model := &outage{down: true}
	const answer = "The deploy of api-7 went out at noon."
	h.ai.Handle(model.handler(nil, openaitest.Response{Status: http.StatusServiceUnavailable}, replies(answer)))
	h.start()
	burst := []string{"hey", "can you check", "the deploy of api-7?"}
	thread := h.post(general, alice, "<@U0BOT> "+burst[0], "")
	h.post(general, alice, burst[1], thread)
	h.post(general, alice, burst[2], thread)
	h.latest(thread, "Retry", "")
	h.idle()
	asked := strings.Join(burst, "\n")
	if reqs := h.ai.Requests(); reqs[len(reqs)-1].LastUserMessage() != asked {
		t.Fatalf("the failed turn asked %q; want the burst merged, %q", reqs[len(reqs)-1].LastUserMessage(), asked)
	}
	before := model.set(false)

	h.click(thread, alice, "Retry", "")
	h.waitFor("the answer", func() bool { return strings.Contains(h.transcript(thread), answer) })
	h.idle()
	if calls := model.count(); calls != before+1 {
		t.Errorf("Retry made %d model calls; want 1", calls-before)
	}
	req := h.ai.Requests()[len(h.ai.Requests())-1]
	if got := req.LastUserMessage(); got != asked {
		t.Errorf("Retry asked %q; want the whole burst, %q", got, asked)
	}
	var users []string
	for _, m := range req.Chat.Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if len(users) != 1 {
		t.Errorf("Retry's request holds the person's messages %q; want the burst once, as one question", users)
	}
	if n := strings.Count(h.transcript(thread), answer); n != 1 {
		t.Errorf("the answer shown %d times:\n%s", n, h.transcript(thread))
	}
}
