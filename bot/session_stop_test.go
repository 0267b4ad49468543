package bot_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// TestSessionActiveAfterAStop: the Agent makes no agents.sessions.setStatus to set a
// session active that it set processing when the Messenger's chat.stopStream has set
// it active since (its session_status default); it does make one when no stream
// stopped, when the stop failed (the person's native Stop ended the stream), for
// another status, and for a session it did not set processing.
func TestSessionActiveAfterAStop(t *testing.T) {
	h := startMessenger(t)
	me, err := bot.Authenticate(h.ctx, h.api)
	if err != nil {
		t.Fatal(err)
	}
	a := bot.NewAgent(h.api, discard())
	h.msg = bot.NewMessenger(h.api, me, discard(), bot.WithSessions(a))
	calls := func() int { return len(h.emu.Calls("agents.sessions.setStatus")) }
	turn := func(t *testing.T, stop func(conversation.Key), end string) (conversation.Key, int) {
		t.Helper()
		parent := h.say(t, "C0GENERAL", "<@U0BOT> explain", "")
		key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}
		if err := a.SetSessionStatus(h.ctx, key, conversation.SessionProcessing, "explain", "U0ALICE"); err != nil {
			t.Fatal(err)
		}
		stop(key)
		before := calls()
		if err := a.SetSessionStatus(h.ctx, key, end, "", ""); err != nil {
			t.Fatal(err)
		}
		return key, calls() - before
	}
	streamed := func(key conversation.Key) {
		st, err := h.msg.StartStream(h.ctx, key, "U0ALICE", conversation.Tag{InputID: "in", Answer: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Stop(h.ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	history := func(key conversation.Key) string {
		s, _ := h.emu.Session(key.ChannelID, key.ThreadTS)
		return strings.Join(s.History, ",")
	}

	if key, n := turn(t, streamed, conversation.SessionActive); n != 0 || history(key) != "processing,active" {
		t.Errorf("active after a stop: %d calls, history %s; want none, processing,active", n, history(key))
	}
	if key, n := turn(t, func(conversation.Key) {}, conversation.SessionActive); n != 1 || history(key) != "processing,active" {
		t.Errorf("active without a stream: %d calls, history %s; want one", n, history(key))
	}
	if key, n := turn(t, streamed, conversation.SessionClosed); n != 1 || history(key) != "processing,active,closed" {
		t.Errorf("closed after a stop: %d calls, history %s; want one", n, history(key))
	}
	nativeStop := func(key conversation.Key) {
		st, err := h.msg.StartStream(h.ctx, key, "U0ALICE", conversation.Tag{InputID: "in", Answer: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.emu.StopSession(key.ChannelID, key.ThreadTS, "U0ALICE"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Stop(h.ctx, true); err == nil {
			t.Fatal("a stream the person stopped stopped again")
		}
	}
	if key, n := turn(t, nativeStop, conversation.SessionActive); n != 1 || history(key) != "processing,active" {
		t.Errorf("active after a failed stop: %d calls, history %s; want one", n, history(key))
	}
	// The last stream decides: one stopped, then one the person stopped.
	stoppedThenHalted := func(key conversation.Key) { streamed(key); nativeStop(key) }
	if key, n := turn(t, stoppedThenHalted, conversation.SessionActive); n != 1 || history(key) != "processing,active,active" {
		t.Errorf("active after a stop, then a failed one: %d calls, history %s; want one", n, history(key))
	}
	// A stream started after a stop and not stopped (a pipeline's stage still open).
	stoppedThenOpen := func(key conversation.Key) {
		streamed(key)
		if _, err := h.msg.StartStream(h.ctx, key, "U0ALICE", conversation.Tag{InputID: "in", Answer: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, n := turn(t, stoppedThenOpen, conversation.SessionActive); n != 1 {
		t.Errorf("active with a stream open after a stop: %d calls; want one", n)
	}

	// A session this Agent did not set processing: its stop proves nothing.
	parent := h.say(t, "C0GENERAL", "<@U0BOT> other", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}
	streamed(key)
	before := calls()
	if err := a.SetSessionStatus(h.ctx, key, conversation.SessionActive, "", ""); err != nil {
		t.Fatal(err)
	}
	if n := calls() - before; n != 1 {
		t.Errorf("active for a session not set processing here: %d calls; want one", n)
	}
}

// TestSessionsRefusedSaySo: once Slack refuses agent sessions, the refused call and
// every later one return conversation.ErrSessionsOff, the later ones with no call,
// so that a turn knows the thread shows no native Stop; a failure of another kind
// is not ErrSessionsOff; a session set processing for an app not subscribed to
// agent_session_stopped returns conversation.ErrNoNativeStop.
func TestSessionsRefusedSaySo(t *testing.T) {
	h := startMessenger(t)
	a := bot.NewAgent(h.api, discard())
	calls := func() int { return len(h.emu.Calls("agents.sessions.setStatus")) }
	parent := h.say(t, "C0GENERAL", "<@U0BOT> explain", "")
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}

	h.emu.FailNext("agents.sessions.setStatus", "internal_error")
	if err := a.SetSessionStatus(h.ctx, key, conversation.SessionProcessing, "explain", "U0ALICE"); err == nil || errors.Is(err, conversation.ErrSessionsOff) {
		t.Errorf("a failed call: %v, want Slack's error, not ErrSessionsOff", err)
	}
	h.emu.UnsubscribeSessionStop(true)
	if err := a.SetSessionStatus(h.ctx, key, conversation.SessionProcessing, "explain", "U0ALICE"); !errors.Is(err, conversation.ErrNoNativeStop) {
		t.Errorf("processing, not subscribed to agent_session_stopped: %v, want ErrNoNativeStop", err)
	}
	if err := a.SetSessionStatus(h.ctx, key, conversation.SessionActive, "", ""); err != nil {
		t.Errorf("active, not subscribed to agent_session_stopped: %v, want nil (no Stop to show)", err)
	}
	h.emu.UnsubscribeSessionStop(false)
	h.emu.RefuseSessions(true)
	if err := a.SetSessionStatus(h.ctx, key, conversation.SessionProcessing, "explain", "U0ALICE"); !errors.Is(err, conversation.ErrSessionsOff) {
		t.Errorf("the refused call: %v, want ErrSessionsOff", err)
	}
	before := calls()
	if err := a.SetSessionStatus(h.ctx, key, conversation.SessionActive, "", ""); !errors.Is(err, conversation.ErrSessionsOff) {
		t.Errorf("a call after the refusal: %v, want ErrSessionsOff", err)
	}
	if err := a.RenameSession(h.ctx, key, "title"); !errors.Is(err, conversation.ErrSessionsOff) {
		t.Errorf("a rename after the refusal: %v, want ErrSessionsOff", err)
	}
	if n := calls() - before; n != 0 {
		t.Errorf("%d calls after the refusal, want none", n)
	}
}

// TestSessionProcessingAgainAfterRotation: a stream that goes on in a fresh message
// (WithStreamRotation) sets the session the Agent set processing back to processing
// after the rotation's chat.stopStream set it active, so that Slack's Stop shows for
// the rest of the turn; not for a session whose turn set its end already, and not
// when the rotation comes with the stream's last text (StopWithText), which stops it
// at once.
func TestSessionProcessingAgainAfterRotation(t *testing.T) {
	clk := &clock{}
	h := startMessengerWith(t, emulator.Config{Now: clk.now})
	me, err := bot.Authenticate(h.ctx, h.api)
	if err != nil {
		t.Fatal(err)
	}
	a := bot.NewAgent(h.api, discard())
	msg := bot.NewMessenger(h.api, me, discard(), bot.WithSessions(a), bot.WithStreamRotation(time.Minute, clk.now))
	history := func(key conversation.Key) string {
		s, _ := h.emu.Session(key.ChannelID, key.ThreadTS)
		return strings.Join(s.History, ",")
	}
	thread := func(t *testing.T, status string) (conversation.Key, conversation.Stream) {
		t.Helper()
		parent := h.say(t, "C0GENERAL", "<@U0BOT> explain", "")
		key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}
		if err := a.SetSessionStatus(h.ctx, key, conversation.SessionProcessing, "explain", "U0ALICE"); err != nil {
			t.Fatal(err)
		}
		if status != conversation.SessionProcessing {
			if err := a.SetSessionStatus(h.ctx, key, status, "", ""); err != nil {
				t.Fatal(err)
			}
		}
		st, err := msg.StartStream(h.ctx, key, "U0ALICE", conversation.Tag{InputID: "in", Answer: true})
		if err != nil {
			t.Fatal(err)
		}
		clk.add(2 * time.Minute)
		return key, st
	}

	// A rotation sets the session processing again only while the turn runs (Running),
	// not once the turn set its end (Ended).
	for _, tc := range []struct{ name, status, want string }{
		{"Running", conversation.SessionProcessing, "processing,active,processing"},
		{"Ended", conversation.SessionActive, "processing,active,active"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, st := thread(t, tc.status)
			if err := st.Append(h.ctx, "more"); err != nil {
				t.Fatal(err)
			}
			if got := history(key); got != tc.want {
				t.Errorf("after the rotation: history %s, want %s", got, tc.want)
			}
			if _, err := st.Stop(h.ctx, true); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("LastText", func(t *testing.T) {
		key, st := thread(t, conversation.SessionProcessing)
		if _, err := st.(conversation.TextStopper).StopWithText(h.ctx, "the end", true); err != nil {
			t.Fatal(err)
		}
		if got := history(key); got != "processing,active,active" {
			t.Errorf("after the last text: history %s, want processing,active,active (no processing again)", got)
		}
	})
}
