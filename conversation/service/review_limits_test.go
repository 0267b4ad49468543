package service_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/store/sqlite"
)

// TestServiceRedeliveredInputIsNeverRefused: Slack delivers an envelope again when
// its ack came late, though its input was stored. The copy is a duplicate: it is
// neither refused nor noticed, whatever the limits say now (the stored input itself
// fills the thread's bound, or the person's bucket is empty).
func TestServiceRedeliveredInputIsNeverRefused(t *testing.T) {
	t.Run("ThreadBound", func(t *testing.T) {
		msgr := &noticeMessenger{fakeMessenger: newMessenger()}
		exec := &heldExecutor{release: make(chan struct{})}
		svc := newService(t, service.Config{Messenger: msgr, Executor: exec, MaxQueuedPerThread: 1})
		in := mentionBy("U1", key, key.ThreadTS, "hello")
		if !submit(t, svc, in) {
			t.Fatal("the first delivery was not accepted")
		}
		if submit(t, svc, in) {
			t.Error("the redelivered copy was accepted again")
		}
		close(exec.release)
		shutdown(t, svc) // and so the notices posted in the background are in
		if n := msgr.to("U1"); len(n) != 0 {
			t.Errorf("the author of a stored input was told it was skipped: %+v", n)
		}
	})
	t.Run("RateLimit", func(t *testing.T) {
		msgr := &noticeMessenger{fakeMessenger: newMessenger()}
		exec := &heldExecutor{release: make(chan struct{})}
		svc := newService(t, service.Config{Messenger: msgr, Executor: exec, UserRate: 1, UserBurst: 1})
		in := mentionBy("U1", key, key.ThreadTS, "hello")
		if !submit(t, svc, in) {
			t.Fatal("the first delivery was not accepted")
		}
		submit(t, svc, in)
		close(exec.release)
		shutdown(t, svc) // and so the notices posted in the background are in
		if n := msgr.to("U1"); len(n) != 0 {
			t.Errorf("the author of a stored input was told it was skipped: %+v", n)
		}
	})
}

// shutdown shuts svc down, waiting for its turns and background work.
func shutdown(t *testing.T, svc *service.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := svc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestServicePipelineStopIsNeverRefused: a person who used up their clicks' bucket
// can still stop a pipeline: its Stop click is stored for the pipeline's next turn,
// not refused (docs/operations.md, "Limits and secrets": a Stop click is never refused).
func TestServicePipelineStopIsNeverRefused(t *testing.T) {
	msgr := &noticeMessenger{fakeMessenger: newMessenger()}
	clock := newClock()
	svc := newService(t, service.Config{Messenger: msgr, Executor: &echo{}, UserRate: 6, UserBurst: 1, Now: clock.Now})
	for i := range 4 { // the clicks' bucket: 4 × UserBurst
		if !submit(t, svc, click(threadKey(1), fmt.Sprintf("int:T1:click%d", i), "U1")) {
			t.Fatalf("click %d refused", i+1)
		}
	}
	stop := conversation.Input{ID: "int:T1:stop", Key: key, Kind: conversation.KindAction, Action: &conversation.ActionInput{
		Action: conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: "run:p1"}, UserID: "U1"}}
	if !submit(t, svc, stop) {
		t.Error("a pipeline's Stop click was refused")
	}
}

// poisonStore is down (Enqueue fails as unavailable) while down is set, and never
// takes the input poison (a permanent error), as a store refuses an input it cannot
// hold.
type poisonStore struct {
	conversation.Store
	down   atomic.Bool
	poison string
}

func (s *poisonStore) Enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	switch {
	case s.down.Load():
		return false, errUnavailable
	case in.ID == s.poison:
		return false, errors.New("value too long for type character varying")
	}
	return s.Store.Enqueue(ctx, in)
}

func (s *poisonStore) EnqueueBatch(ctx context.Context, ins []conversation.Input) ([]bool, error) {
	for _, in := range ins {
		switch {
		case s.down.Load():
			return nil, errUnavailable
		case in.ID == s.poison:
			return nil, errors.New("value too long for type character varying")
		}
	}
	return s.Store.EnqueueBatch(ctx, ins)
}

// TestServiceDroppedSpooledInputIsNotCountedForever: an input spooled during an
// outage that the store never takes is dropped from the spool; it no longer counts
// against its author's bound, who is taken again once the spool is empty.
func TestServiceDroppedSpooledInputIsNotCountedForever(t *testing.T) {
	dir := t.TempDir()
	sp, err := sqlite.OpenSpool(context.Background(), filepath.Join(dir, "spool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	k1, k2 := threadKey(1), threadKey(2)
	bad := mentionBy("U1", k1, k1.ThreadTS, "never stored")
	st := &poisonStore{Store: openStore(t, dir), poison: bad.ID}
	st.down.Store(true)
	msgr := &noticeMessenger{fakeMessenger: newMessenger()}
	svc := newService(t, service.Config{Store: st, Spool: sp, Messenger: msgr, Executor: &echo{}, MaxQueuedPerUser: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	ok, err := svc.Submit(ctx, bad)
	cancel()
	if err != nil || !ok {
		t.Fatalf("the input was not spooled: %v, %v", ok, err)
	}
	st.down.Store(false)
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if err := svc.Wait(wctx); err != nil { // the spool drains: the poison is dropped
		t.Fatal(err)
	}
	if n, _ := sp.Len(context.Background()); n != 0 {
		t.Fatalf("%d inputs still spooled", n)
	}
	if !submit(t, svc, mentionBy("U1", k2, k2.ThreadTS, "a new question")) {
		t.Error("U1 was refused: the dropped input still counts against MaxQueuedPerUser")
	}
}
