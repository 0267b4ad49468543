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
// channel, in order: the agent session set processing (and created, titled), which
// shows that the bot works (its loading indicator and Stop), the answer streamed, and
// its text sent with the stop (with the feedback buttons), which sets the session
// active (chat.stopStream's session_status, "active" by default). No status is set:
// the session shows the work (Run.ShowWorking); none is cleared after the answer, no
// chat.appendStream is needed for an answer the stop carries, no
// agents.sessions.setStatus for the session the stop set active, and the message is
// not read back for files (its event carries them).
var plainTurnCalls = []turnCall{
	{"agents.sessions.setStatus", "processing"},
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

// TestE2EPlainMentionCalls: a plain @mention's turn makes exactly plainTurnCalls, three
// Web API calls (it made nine: a chat.appendStream for the answer's text, a
// conversations.replies for files, in a burst an "is waiting in line…" status after
// the answer, an agents.sessions.setStatus to active after the stop, and an "is
// thinking…" status the session showed already), the thread shows the whole answer
// with no status left, and its session is active.
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
// shows "is waiting in line…" while the first is answered; once its turn set its
// session processing (which shows the work), the status is cleared, before the
// answer streams; where Slack refuses sessions, "is thinking…" replaces it. The first
// thread, whose worker waits for the slot again after its answer with nothing to run,
// sets no status after it (it used to show "is waiting in line…" under its answer).
// Each turn otherwise makes plainTurnCalls' calls.
func TestE2EQueuedStatusOnlyWhileWaiting(t *testing.T) {
	for _, tc := range []struct {
		name        string
		noSessions  bool
		first, last []string // the statuses set in the first and the second thread
	}{
		{"Session", false, nil, []string{turns.StatusQueued, ""}},
		{"NoSession", true, []string{turns.StatusThinking}, []string{turns.StatusQueued, turns.StatusThinking}},
	} {
		t.Run(tc.name, func(t *testing.T) { queuedStatusOnlyWhileWaiting(t, tc.noSessions, tc.first, tc.last) })
	}
}

// queuedStatusOnlyWhileWaiting is TestE2EQueuedStatusOnlyWhileWaiting with sessions
// refused or not, first and last the statuses the threads must show, in order.
func queuedStatusOnlyWhileWaiting(t *testing.T, noSessions bool, first, last []string) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.env["MAX_CONCURRENT_TURNS"] = "1"
	h.emu.RefuseSessions(noSessions)
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
	one := h.post(general, alice, "<@U0BOT> first question", "")
	<-asked
	two := h.post(general, alice, "<@U0BOT> second question", "")
	h.waitFor("the second thread to show it waits", func() bool { return h.emu.Status(general, two) == turns.StatusQueued })
	once.Do(func() { close(release) })
	h.streamedTurn(t, one, "Answered: first question")
	h.streamedTurn(t, two, "Answered: second question")
	// calls are the calls in the second thread, each with the status it set.
	var calls []turnCall
	for _, c := range h.emu.Calls("")[before:] {
		if c.Params.Get("thread_ts") == two {
			calls = append(calls, turnCall{c.Method, c.Params.Get("status")})
		}
	}
	statuses := func(ts string) []string {
		var out []string
		for _, c := range h.emu.Calls("assistant.threads.setStatus") {
			if c.Params.Get("thread_ts") == ts {
				out = append(out, c.Params.Get("status"))
			}
		}
		return out
	}
	if got := statuses(one); !slices.Equal(got, first) {
		t.Errorf("first thread's statuses %q, want %q", got, first)
	}
	if got := statuses(two); !slices.Equal(got, last) {
		t.Errorf("second thread's statuses %q, want %q", got, last)
	}
	if !noSessions {
		// The wait's status goes once the session shows the work, before the answer.
		want := []turnCall{{"assistant.threads.setStatus", turns.StatusQueued}, {"agents.sessions.setStatus", "processing"},
			{"assistant.threads.setStatus", ""}, {"chat.startStream", ""}}
		if len(calls) < len(want) || !slices.Equal(calls[:len(want)], want) {
			t.Errorf("the second thread's calls %v, want them to begin %v", calls, want)
		}
	}
	if n, want := len(h.emu.Calls(""))-before, 2*len(plainTurnCalls)+len(first)+len(last); !noSessions && n != want {
		t.Errorf("%d Web API calls for the two turns, want %d: %v", n, want, h.turnCalls(before))
	}
	for _, ts := range []string{one, two} {
		if s := h.emu.Status(general, ts); s != "" {
			t.Errorf("thread %s shows status %q after its answer", ts, s)
		}
	}
}

// TestE2EQueuedStatusClearedAtShutdown: a replica that shuts down while a thread's
// input waits for a turn slot clears the "is waiting in line…" it showed before it
// hands the thread over: the replica that takes the thread over does not know of it,
// and where the thread's agent session shows the work, it sets no status to replace
// it.
func TestE2EQueuedStatusClearedAtShutdown(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.env["MAX_CONCURRENT_TURNS"] = "1"
	h.env["SHUTDOWN_TIMEOUT"] = "1s"
	h.start()
	h.settle()
	h.idle()
	asked := make(chan struct{}, 1)
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-r.Done() // the first turn works until the shutdown cancels it
		return openaitest.Response{Text: "Never sent."}
	})
	h.post(general, alice, "<@U0BOT> first question", "")
	<-asked
	two := h.post(general, alice, "<@U0BOT> second question", "")
	h.waitFor("the second thread to show it waits", func() bool { return h.emu.Status(general, two) == turns.StatusQueued })
	h.stop()
	if s := h.emu.Status(general, two); s != "" {
		t.Errorf("the second thread shows %q after the replica that showed it shut down", s)
	}
}
