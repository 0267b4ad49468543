package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/sqlite"
	"github.com/threadwright/threadwright/store/storetest"
)

func mustOpenSpool(tb testing.TB, path string) *sqlite.Spool {
	tb.Helper()
	s, err := sqlite.OpenSpool(context.Background(), path)
	return storetest.Opened(tb, s, err)
}

// spoolIDs returns the ids of the inputs Peek returns.
func spoolIDs(t *testing.T, s *sqlite.Spool, limit int) []string {
	t.Helper()
	ins, err := s.Peek(context.Background(), limit)
	if err != nil {
		t.Fatalf("Peek(%d): %v", limit, err)
	}
	ids := []string{}
	for _, in := range ins {
		ids = append(ids, in.ID)
	}
	return ids
}

func mustLen(t *testing.T, s *sqlite.Spool, want int) {
	t.Helper()
	if n, err := s.Len(context.Background()); n != want || err != nil {
		t.Fatalf("Len = %d, %v; want %d, nil", n, err, want)
	}
}

// TestSpool checks the spool's order, deduplication and removal, and that what was
// put is there, whole, after the file is closed and opened again.
func TestSpool(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "spool", "spool.db")
	s, err := sqlite.OpenSpool(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	created := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	ins := []conversation.Input{
		{ID: "msg:T1:C1:1.2", EventID: "Ev1", Key: key, Kind: conversation.KindUserMessage, Status: conversation.InputPending, CreatedAt: created,
			Message: &conversation.UserMessage{UserID: "U1", Text: "hello 👋 \x00", TS: "1.2", ThreadTS: "1.1", Mentioned: true}},
		{ID: "int:T1:trigger", Key: key, Kind: conversation.KindAction, CreatedAt: created.Add(time.Second),
			Action: &conversation.ActionInput{Action: conversation.Action{Name: conversation.ActionStop, Arg: "x"}, UserID: "U2"}},
		{ID: "int:T1:cmd", Key: conversation.Key{TeamID: "T1", ChannelID: "C1"}, Kind: conversation.KindCommand,
			Command: &conversation.CommandInput{Source: conversation.SourceSlash, UserID: "U3", Line: "restart budget"}},
	}
	// Put in an order that is not the ids' order.
	for _, in := range ins {
		if ok, err := s.Put(ctx, in); !ok || err != nil {
			t.Fatalf("Put(%s) = %v, %v; want true, nil", in.ID, ok, err)
		}
	}
	again := ins[0]
	again.Message = &conversation.UserMessage{Text: "redelivered"}
	if ok, err := s.Put(ctx, again); ok || err != nil {
		t.Errorf("Put of a spooled id = %v, %v; want false, nil", ok, err)
	}
	if _, err := s.Put(ctx, conversation.Input{Kind: conversation.KindUserMessage}); err == nil {
		t.Error("Put of an input without an id succeeded")
	}
	mustLen(t, s, 3)
	for _, in := range ins {
		if got, ok, err := s.Get(ctx, in.ID); !ok || err != nil || !reflect.DeepEqual(got, in) {
			t.Errorf("Get(%s) = %+v, %v, %v; want the input put", in.ID, got, ok, err)
		}
	}
	if _, ok, err := s.Get(ctx, "missing"); ok || err != nil {
		t.Errorf("Get of an input not spooled = %v, %v; want false, nil", ok, err)
	}
	got, err := s.Peek(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ins) {
		t.Errorf("Peek = %+v; want %+v", got, ins)
	}
	for _, tc := range []struct {
		limit int
		want  []string
	}{{1, []string{ins[0].ID}}, {2, []string{ins[0].ID, ins[1].ID}}, {0, []string{}}, {-1, []string{}}} {
		if got := spoolIDs(t, s, tc.limit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Peek(%d) = %v; want %v", tc.limit, got, tc.want)
		}
	}

	// Removed, an input can be spooled again, after those still there.
	if err := s.Remove(ctx, ins[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, "missing"); err != nil {
		t.Errorf("Remove of an input not spooled: %v; want nil", err)
	}
	if ok, err := s.Put(ctx, ins[0]); !ok || err != nil {
		t.Fatalf("Put of a removed id = %v, %v; want true, nil", ok, err)
	}
	want := []string{ins[1].ID, ins[2].ID, ins[0].ID}
	if got := spoolIDs(t, s, 10); !reflect.DeepEqual(got, want) {
		t.Errorf("Peek after Remove and Put = %v; want %v", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Opened again, the spool holds the same inputs, in the same order.
	s = mustOpenSpool(t, path)
	mustLen(t, s, 3)
	if got := spoolIDs(t, s, 10); !reflect.DeepEqual(got, want) {
		t.Errorf("Peek after reopening = %v; want %v", got, want)
	}
	got, err = s.Peek(ctx, 10)
	if err != nil || !reflect.DeepEqual(got[2], ins[0]) {
		t.Errorf("Peek after reopening: %+v, %v; want %+v last", got, err, ins[0])
	}
	for _, id := range want {
		if err := s.Remove(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	mustLen(t, s, 0)
}

// TestSpoolConcurrentPuts checks that concurrent Puts all land, once each.
func TestSpoolConcurrentPuts(t *testing.T) {
	ctx := context.Background()
	s := mustOpenSpool(t, filepath.Join(t.TempDir(), "spool.db"))
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	const n = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		dups int
	)
	for i := range n {
		wg.Go(func() {
			for _, id := range []string{fmt.Sprintf("in-%d", i), "shared"} {
				ok, err := s.Put(ctx, conversation.Input{ID: id, Key: key, Kind: conversation.KindPipeline})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if !ok {
					dups++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if dups != n-1 {
		t.Errorf("%d Puts of the shared id were refused; want %d", dups, n-1)
	}
	mustLen(t, s, n+1)
}
