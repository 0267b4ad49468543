package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EStatusOnlyWhenItChanges: a streamed turn with two rounds of tool calls sets
// the thread's status (assistant.threads.setStatus) only where it changes: "is
// thinking…" once before the answer's stream starts, no status while the stream is
// open (its task cards show the tools working), and no clear at the end, since the
// streamed answer cleared the status already, as in Slack. It used to set the tool's
// status at every step, during the stream, and clear it after.
func TestE2EStatusOnlyWhenItChanges(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "Service status: green")
	}))
	defer page.Close()
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.env["FETCH_ALLOW_PRIVATE"] = "true"
	h.start()
	const answer = "The service is green."
	fetch := func(id string) openaitest.Response {
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{ID: id, Name: "fetch_url", Arguments: fmt.Sprintf(`{"url":%q}`, page.URL)}}}
	}
	h.ai.Push(fetch("call_1"), fetch("call_2"), openaitest.Response{Text: answer})
	ts := h.post(general, alice, "<@U0BOT> is the service up?", "")
	m := h.streamedTurn(t, ts, answer)

	var statuses []string
	streaming := false
	for _, c := range h.emu.Calls("") {
		switch {
		case c.Method == "chat.startStream" && c.Params.Get("thread_ts") == ts:
			streaming = true
		case c.Method == "chat.stopStream" && c.Params.Get("ts") == m.TS:
			streaming = false
		case c.Method == "assistant.threads.setStatus" && c.Params.Get("thread_ts") == ts:
			if streaming {
				t.Errorf("status %q set while the answer streamed", c.Params.Get("status"))
			}
			statuses = append(statuses, c.Params.Get("status"))
		}
	}
	if len(statuses) != 1 || statuses[0] != turns.StatusThinking {
		t.Errorf("setStatus calls %q, want only %q", statuses, turns.StatusThinking)
	}
	if s := h.emu.Status(general, ts); s != "" {
		t.Errorf("the thread shows status %q after the answer", s)
	}
}
