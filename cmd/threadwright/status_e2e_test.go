package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// toolTurnAnswer is the answer of startToolTurn's turn.
const toolTurnAnswer = "The service is green."

// startToolTurn starts the bot, its answers streamed or not, with agent sessions
// refused or not, and mentions it in a new thread with a question its model answers
// after two rounds of fetch_url calls (to a page of the test's); it returns the
// thread's ts.
func startToolTurn(t *testing.T, stream, noSessions bool) (*harness, string) {
	t.Helper()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "Service status: green")
	}))
	t.Cleanup(page.Close)
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = fmt.Sprint(stream)
	h.env["FETCH_ALLOW_PRIVATE"] = "true"
	h.emu.RefuseSessions(noSessions)
	h.start()
	fetch := func(id string) openaitest.Response {
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{ID: id, Name: "fetch_url", Arguments: fmt.Sprintf(`{"url":%q}`, page.URL)}}}
	}
	h.ai.Push(fetch("call_1"), fetch("call_2"), openaitest.Response{Text: toolTurnAnswer})
	return h, h.post(general, alice, "<@U0BOT> is the service up?", "")
}

// TestE2EStatusOnlyWhenItChanges: a streamed turn with two rounds of tool calls sets
// the thread's status (assistant.threads.setStatus) only where it changes: where Slack
// refuses agent sessions, "is thinking…" once before the answer's stream starts, no
// status while the stream is open (its task cards show the tools working), and no
// clear at the end, since the streamed answer cleared the status already, as in Slack.
// Where the turn set its session processing, no status at all: the session shows that
// the bot works (Run.ShowWorking). It used to set the tool's status at every step,
// during the stream, and clear it after.
func TestE2EStatusOnlyWhenItChanges(t *testing.T) {
	for _, tc := range []struct {
		name       string
		noSessions bool
		want       []string
	}{{"Session", false, nil}, {"NoSession", true, []string{turns.StatusThinking}}} {
		t.Run(tc.name, func(t *testing.T) {
			h, ts := startToolTurn(t, true, tc.noSessions)
			m := h.streamedTurn(t, ts, toolTurnAnswer)

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
			h.statusCallsChange(t, ts)
			if !slices.Equal(statuses, tc.want) {
				t.Errorf("setStatus calls %q, want %q", statuses, tc.want)
			}
			if s := h.emu.Status(general, ts); s != "" {
				t.Errorf("the thread shows status %q after the answer", s)
			}
			if s, ok := h.emu.Session(general, ts); ok == tc.noSessions || !tc.noSessions && s.Status != conversation.SessionActive {
				t.Errorf("session %+v (%t) after the answer; want one, active, unless refused", s, ok)
			}
		})
	}
}

// TestE2EStatusOnlyWhenItChangesPosted: the same with the answer posted, not streamed,
// and no agent session: every status set changes what the thread shows, the last ends
// when the progress message or the answer is posted, and the turn sends no clear
// after the answer.
func TestE2EStatusOnlyWhenItChangesPosted(t *testing.T) {
	h, ts := startToolTurn(t, false, true)
	h.waitFor("the answer", func() bool {
		for _, m := range h.emu.BotMessages(general, ts) {
			if strings.HasPrefix(m.Text, toolTurnAnswer) {
				return true
			}
		}
		return false
	})
	h.idle()
	if n := h.statusCallsChange(t, ts); n < 2 {
		t.Errorf("%d setStatus calls, want is thinking… and the tool's status", n)
	}
	if s := h.emu.Status(general, ts); s != "" {
		t.Errorf("the thread shows status %q after the answer", s)
	}
}

// statusCallsChange checks that every assistant.threads.setStatus call in the thread
// ts changed the status it showed, as Slack keeps it (a post of the bot in the thread,
// chat.postMessage or chat.startStream, clears it), and returns the number of calls.
func (h *harness) statusCallsChange(t *testing.T, ts string) int {
	t.Helper()
	shown, n := "", 0
	for _, c := range h.emu.Calls("") {
		if c.Params.Get("thread_ts") != ts || c.Error != "" {
			continue
		}
		switch c.Method {
		case "chat.postMessage", "chat.startStream":
			shown = ""
		case "assistant.threads.setStatus":
			n++
			if s := c.Params.Get("status"); s == shown {
				t.Errorf("setStatus %q while the thread showed it already", s)
			} else {
				shown = s
			}
		}
	}
	return n
}
