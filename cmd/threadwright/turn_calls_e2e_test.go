package main

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// turnCall is one Web API call of a turn, as turnCalls reads it: its method and, for
// the statuses, the status set.
type turnCall struct{ method, status string }

// turnCalls returns the Web API calls the bot made from the call numbered from on,
// in order, each with the status it set (assistant.threads.setStatus,
// agents.sessions.setStatus).
func (h *harness) turnCalls(from int) []turnCall {
	var out []turnCall
	for _, c := range h.emu.Calls("")[from:] {
		out = append(out, turnCall{c.Method, c.Params.Get("status")})
	}
	return out
}

// plainTurnCalls are the Web API calls of a plain @mention's streamed turn in a
// channel, in order: the agent session set processing (and created, titled), the
// thread's status, the answer streamed (its Stop button), and its text sent with the
// stop (with the feedback buttons), which sets the session active (chat.stopStream's
// session_status, "active" by default). No status is set once the stream is open, nor
// cleared after it (the answer cleared it), no chat.appendStream is needed for an
// answer the stop carries, no agents.sessions.setStatus for the session the stop set
// active, and the message is not read back for files (its event carries them).
var plainTurnCalls = []turnCall{
	{"agents.sessions.setStatus", "processing"},
	{"assistant.threads.setStatus", turns.StatusThinking},
	{"chat.startStream", ""},
	{"chat.stopStream", ""},
}

// startCallsHarness starts the bot with its answers streamed, as by default, and waits
// until its start-up calls are done: a probe turn is answered and saved.
func startCallsHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	h.settle()
	h.idle()
	return h
}

// TestE2EPlainMentionCalls: a plain @mention's turn makes exactly plainTurnCalls, four
// Web API calls (it made nine: a chat.appendStream for the answer's text, a
// conversations.replies for files, in a burst an "is waiting in line…" status after
// the answer, and an agents.sessions.setStatus to active after the stop), the thread
// shows the whole answer with no status left, and its session is active.
func TestE2EPlainMentionCalls(t *testing.T) {
	h := startCallsHarness(t)
	const answer = "The deploy runs at **noon**, after the checks."
	before := len(h.emu.Calls(""))
	h.ai.Push(openaitest.Response{Text: answer})
	ts := h.post(general, alice, "<@U0BOT> when does the deploy run?", "")
	m := h.streamedTurn(t, ts, answer)
	if got := h.turnCalls(before); !slices.Equal(got, plainTurnCalls) {
		t.Errorf("calls of the turn:\n got %v\nwant %v", got, plainTurnCalls)
	}
	if m.Text != answer {
		t.Errorf("the answer reads %q, want %q", m.Text, answer)
	}
	stops := h.emu.Calls("chat.stopStream")
	if last := stops[len(stops)-1]; last.Params.Get("markdown_text") != answer {
		t.Errorf("chat.stopStream carried %q, want the answer", last.Params.Get("markdown_text"))
	}
	if s := h.emu.Status(general, ts); s != "" {
		t.Errorf("the thread shows status %q after the answer", s)
	}
	if s, _ := h.emu.Session(general, ts); s.Status != conversation.SessionActive || strings.Join(s.History, ",") != "processing,active" {
		t.Errorf("session %+v after the answer; want processing, then active", s)
	}
}

// TestE2EMentionWithFilesCalls: a mention with a file attached makes the same calls
// (the file comes with its event and is downloaded outside the Web API: no message is
// read back), and the model is given the file's text.
func TestE2EMentionWithFilesCalls(t *testing.T) {
	h := startCallsHarness(t)
	const answer = "The log says the disk is full."
	before := len(h.emu.Calls(""))
	requests := len(h.ai.Requests())
	h.ai.Push(openaitest.Response{Text: answer})
	ts, _, err := h.emu.PostUserFiles(general, alice, "<@U0BOT> what does this log say?", "",
		emulator.Upload{Name: "app.log", Content: []byte("ERROR: no space left on device\n"), Mimetype: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	h.streamedTurn(t, ts, answer)
	if got := h.turnCalls(before); !slices.Equal(got, plainTurnCalls) {
		t.Errorf("calls of the turn:\n got %v\nwant %v", got, plainTurnCalls)
	}
	reqs := h.ai.Requests()[requests:]
	if len(reqs) != 1 || !carries(reqs[0], "no space left on device") {
		t.Errorf("the model was not given the file's text")
	}
}

// TestE2EQueuedStatusOnlyWhileWaiting: with one turn slot, a second thread's mention
// shows "is waiting in line…" while the first is answered, then "is thinking…"; the
// first thread, whose worker waits for the slot again after its answer with nothing
// to run, sets no status after it (it used to show "is waiting in line…" under its
// answer). Each turn otherwise makes plainTurnCalls' calls.
func TestE2EQueuedStatusOnlyWhileWaiting(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.env["MAX_CONCURRENT_TURNS"] = "1"
	h.start()
	h.settle()
	h.idle()
	release, asked := make(chan struct{}), make(chan struct{}, 1)
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if strings.Contains(r.LastUserMessage(), "first") {
			select {
			case asked <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Done():
			}
		}
		return openaitest.Response{Text: "Answered: " + r.LastUserMessage()}
	})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	before := len(h.emu.Calls(""))
	first := h.post(general, alice, "<@U0BOT> first question", "")
	<-asked
	second := h.post(general, alice, "<@U0BOT> second question", "")
	h.waitFor("the second thread to show it waits", func() bool { return h.emu.Status(general, second) == turns.StatusQueued })
	once.Do(func() { close(release) })
	h.streamedTurn(t, first, "Answered: first question")
	h.streamedTurn(t, second, "Answered: second question")
	statuses := func(ts string) []string {
		var out []string
		for _, c := range h.emu.Calls("assistant.threads.setStatus")[0:] {
			if c.Params.Get("thread_ts") == ts {
				out = append(out, c.Params.Get("status"))
			}
		}
		return out
	}
	if got, want := statuses(first), []string{turns.StatusThinking}; !slices.Equal(got, want) {
		t.Errorf("first thread's statuses %q, want %q", got, want)
	}
	if got, want := statuses(second), []string{turns.StatusQueued, turns.StatusThinking}; !slices.Equal(got, want) {
		t.Errorf("second thread's statuses %q, want %q", got, want)
	}
	if n, want := len(h.emu.Calls(""))-before, 2*len(plainTurnCalls)+1; n != want {
		t.Errorf("%d Web API calls for the two turns, want %d: %v", n, want, h.turnCalls(before))
	}
	for _, ts := range []string{first, second} {
		if s := h.emu.Status(general, ts); s != "" {
			t.Errorf("thread %s shows status %q after its answer", ts, s)
		}
	}
}
