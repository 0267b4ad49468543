package turns

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// statusLog is a Messenger that records every status set, in order.
type statusLog struct {
	conversation.Messenger
	mu  sync.Mutex
	got []string
}

func (l *statusLog) SetStatus(ctx context.Context, _ conversation.Key, status string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, status)
	return ctx.Err()
}

func (l *statusLog) statuses() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// sessionAnswer is a Sessions whose SetSessionStatus answers err.
type sessionAnswer struct{ err error }

func (s sessionAnswer) SetSessionStatus(ctx context.Context, _ conversation.Key, _, _, _ string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.err
}

func (s sessionAnswer) RenameSession(ctx context.Context, _ conversation.Key, _ string) error {
	return ctx.Err()
}

// workingRun returns a Run of a person's message in a thread, with sessions (none when
// nil), the thread showing StatusQueued or not, and the
// session set as the turn's start sets it (sessionStart).
func workingRun(t *testing.T, sessions conversation.Sessions, queued bool) (*Run, *statusLog) {
	t.Helper()
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.0"}
	rec := &statusLog{}
	e := &env{cfg: Config{Messenger: rec, Sessions: sessions}, log: slog.New(slog.NewTextHandler(io.Discard, nil)), threads: newThreadSet()}
	th := &thread{key: key, queued: queued}
	r := &Run{In: conversation.Input{Key: key, Kind: conversation.KindUserMessage,
		Message: &conversation.UserMessage{UserID: "U1", Text: "what is new?"}}, Log: e.log, th: th, env: e}
	(&envelope{env: e}).sessionStart(context.Background(), r)
	return r, rec
}

// TestShowWorking: a turn sets "is thinking…" unless the thread's agent session shows
// that it works (set processing, with Slack's Stop or, where the app hears no Stop,
// the loading indicator alone); there it sets no status, only clearing "is waiting
// in line…" where its worker showed that. Either way the thread's queued mark is
// consumed, so a later turn does not clear it again.
func TestShowWorking(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sessions conversation.Sessions
		queued   bool
		want     []string
		shown    bool
	}{
		{"NoSessions", nil, false, []string{StatusThinking}, true},
		{"NoSessionsQueued", nil, true, []string{StatusThinking}, true},
		{"SessionsRefused", sessionAnswer{conversation.ErrSessionsOff}, false, []string{StatusThinking}, true},
		{"SessionNotSet", sessionAnswer{errors.New("internal_error")}, true, []string{StatusThinking}, true},
		{"Session", sessionAnswer{}, false, nil, false},
		{"SessionQueued", sessionAnswer{}, true, []string{""}, false},
		{"SessionWithoutStop", sessionAnswer{conversation.ErrNoNativeStop}, true, []string{""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, rec := workingRun(t, tc.sessions, tc.queued)
			if shown := r.ShowWorking(context.Background()); shown != tc.shown {
				t.Errorf("ShowWorking reported %t, want %t", shown, tc.shown)
			}
			if got := rec.statuses(); !slices.Equal(got, tc.want) {
				t.Errorf("statuses set %q, want %q", got, tc.want)
			}
			if r.takeQueued() {
				t.Error("the thread is still marked as showing StatusQueued")
			}
		})
	}
}

// finishStore is a Store whose Finish succeeds (unless ctx ended).
type finishStore struct{ conversation.Store }

func (finishStore) Finish(ctx context.Context, _ conversation.Lease, _ string, _ conversation.InputStatus) error {
	return ctx.Err()
}

// TestDropClearsQueued: an input dropped after it waited in line (an edit, a
// duplicate) clears the "is waiting in line…" no turn of it replaced, and only then.
func TestDropClearsQueued(t *testing.T) {
	for _, queued := range []bool{false, true} {
		r, rec := workingRun(t, sessionAnswer{}, queued)
		r.env.cfg.Store = finishStore{}
		r.env.cfg.FinalTimeout = time.Second
		r.Out = &Outbox{}
		if err := r.Drop(context.Background(), conversation.InputDone); err != nil {
			t.Fatal(err)
		}
		var want []string
		if queued {
			want = []string{""}
		}
		if got := rec.statuses(); !slices.Equal(got, want) {
			t.Errorf("queued %t: statuses set %q, want %q", queued, got, want)
		}
	}
}
