package turns

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/sqlite"
)

// lostEnqueueReplyStore stores each input it is given and fails the first call as a
// connection lost before the commit's reply would (ErrUnavailable).
type lostEnqueueReplyStore struct {
	conversation.Store
	mu     sync.Mutex
	calls  int
	stored map[string]bool
}

func (s *lostEnqueueReplyStore) Enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	inserted := !s.stored[in.ID]
	s.stored[in.ID] = true
	if s.calls == 1 {
		return false, fmt.Errorf("commit: connection reset: %w", conversation.ErrUnavailable)
	}
	return inserted, nil
}

// TestDrainLostReplyStartsTheThread: a spooled input that the drain's first attempt
// stored, its reply lost (the retry finds it stored), leaves the spool and starts
// work on its thread, stopping no turn there; one the first attempt stores is
// announced as new (notify).
func TestDrainLostReplyStartsTheThread(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sp, err := sqlite.OpenSpool(ctx, filepath.Join(t.TempDir(), "spool.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	st := &lostEnqueueReplyStore{stored: map[string]bool{}}
	in := testIntake(st, Config{Spool: sp}, func(conversation.Key) {})
	kicked, notified := make(chan conversation.Key, 2), make(chan string, 2)
	s := in.spool
	s.kick = func(k conversation.Key) { kicked <- k }
	s.notify = func(in conversation.Input) { notified <- in.ID }
	lost, fresh := personMention("m1", "U1", "1000.000100"), personMention("m2", "U2", "2000.000100")
	for _, m := range []conversation.Input{lost, fresh} {
		if _, err := sp.Put(ctx, m); err != nil {
			t.Fatal(err)
		}
		if err := s.unspool(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if len(kicked) != 1 || <-kicked != lost.Key {
		t.Error("the spooled input stored by an attempt whose reply was lost started no work on its thread")
	}
	if len(notified) != 1 || <-notified != fresh.ID {
		t.Error("the spooled input stored at the first attempt was not announced as new, alone")
	}
	if n, err := sp.Len(ctx); err != nil || n != 0 {
		t.Errorf("%d inputs left in the spool (%v); want none", n, err)
	}
}
