package service_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/store/sqlite"
)

// TestServiceDuplicateTakesNoToken: an input submitted again (a file_share message
// and its app_mention, one input; Slack's redelivery of an envelope) is a duplicate:
// it costs its author no token of the flood limits, stored or spooled, and a
// duplicate the limits refuse is never noticed.
func TestServiceDuplicateTakesNoToken(t *testing.T) {
	k1, k2 := threadKey(1), threadKey(2)
	again := func(in conversation.Input) conversation.Input {
		in.EventID += "-again"
		return in
	}
	t.Run("Stored", func(t *testing.T) {
		msgr := &noticeMessenger{fakeMessenger: newMessenger()}
		exec := &heldExecutor{release: make(chan struct{})}
		svc := newService(t, service.Config{Messenger: msgr, Executor: exec, UserRate: 6, UserBurst: 2, Now: newClock().Now})
		first := mentionBy("U1", k1, k1.ThreadTS, "a question with a file")
		if !submit(t, svc, first) {
			t.Fatal("the first message was refused")
		}
		if submit(t, svc, again(first)) {
			t.Fatal("the duplicate was accepted")
		}
		if !submit(t, svc, mentionBy("U1", k2, k2.ThreadTS, "another question")) {
			t.Error("a new message was refused: the duplicate took a token")
		}
		close(exec.release)
		shutdown(t, svc)
		if n := msgr.to("U1"); len(n) != 0 {
			t.Errorf("notices %+v, want none", n)
		}
	})
	t.Run("Spooled", func(t *testing.T) {
		sp, err := sqlite.OpenSpool(context.Background(), filepath.Join(t.TempDir(), "spool.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sp.Close() })
		st := &poisonStore{Store: openStore(t, t.TempDir())}
		st.down.Store(true)
		msgr := &noticeMessenger{fakeMessenger: newMessenger()}
		svc := newService(t, service.Config{Store: st, Spool: sp, Messenger: msgr, Executor: &echo{}, UserRate: 6, UserBurst: 2, Now: newClock().Now})
		sub := func(in conversation.Input) bool {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			ok, err := svc.Submit(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		first, second := mentionBy("U1", k1, k1.ThreadTS, "a question"), mentionBy("U1", k2, k2.ThreadTS, "another question")
		if !sub(first) {
			t.Fatal("the first message was not spooled")
		}
		if sub(again(first)) {
			t.Fatal("the duplicate was spooled again")
		}
		if !sub(second) {
			t.Error("a new message was refused: the duplicate took a token")
		}
		// The bucket is empty now: the limits refuse a copy of the spooled message,
		// which is a duplicate all the same, and its author is not told it was skipped.
		if sub(again(second)) {
			t.Error("the duplicate was spooled again")
		}
		st.down.Store(false)
		shutdown(t, svc)
		if n := msgr.to("U1"); len(n) != 0 {
			t.Errorf("notices %+v, want none: the duplicates were refused", n)
		}
	})
}
