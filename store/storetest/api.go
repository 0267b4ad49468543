package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// APIStore is the part of a store the HTTP API reads beyond conversation.Store
// (package api's Store).
type APIStore interface {
	conversation.Store
	Runs(ctx context.Context, q conversation.RunQuery) ([]conversation.RunRef, error)
	Messages(ctx context.Context, key conversation.Key, before int64, limit int, role conversation.Role) ([]conversation.Message, error)
	Input(ctx context.Context, id string) (conversation.Input, error)
	Forwarded(ctx context.Context, id string) ([]conversation.Key, error)
}

// RunAPI runs the conformance suite of APIStore's queries against the stores open
// returns (each new and empty, closed in t.Cleanup).
func RunAPI(t *testing.T, open func(t *testing.T) APIStore) {
	suite[APIStore]{
		{"Runs", testRuns},
		{"Messages", testMessages},
		{"Input", testInput},
		{"Forwarded", testForwarded},
	}.run(t, open)
}

// testRuns checks that Runs lists the conversations with a workflow, filtered by
// channel and status, newest update first, bounded by the limit.
func testRuns(t *testing.T, s APIStore) {
	ctx := context.Background()
	at := func(channel, ts string) conversation.Key {
		return conversation.Key{TeamID: key.TeamID, ChannelID: channel, ThreadTS: ts}
	}
	mustSave(t, s, conversation.Turn{Key: at("C1", "1.1"), State: running("blog", "U1", workflow.RunCompleted)})
	tick()
	mustSave(t, s, conversation.Turn{Key: at("C1", "1.2"), State: running("brief", "api:ci-bot", workflow.RunRunning)})
	tick()
	mustSave(t, s, conversation.Turn{Key: at("C2", "1.3"), State: running("blog", "U2", workflow.RunRunning)})
	mustSave(t, s, conversation.Turn{Key: at("C1", "1.4"), State: conversation.State{Mode: conversation.ModeAssistant}})
	mustSave(t, s, conversation.Turn{Key: conversation.Key{TeamID: "T9", ChannelID: "C1", ThreadTS: "1.5"}, State: running("blog", "U1", workflow.RunRunning)})
	list := func(q conversation.RunQuery) []string {
		t.Helper()
		refs, err := s.Runs(ctx, q)
		if err != nil {
			t.Fatalf("Runs(%+v): %v", q, err)
		}
		out := []string{}
		for _, r := range refs {
			out = append(out, r.Key.ThreadTS)
			if r.UpdatedAt.IsZero() || r.Key.TeamID != q.TeamID {
				t.Errorf("Runs(%+v) listed %+v", q, r)
			}
		}
		return out
	}
	for _, c := range []struct {
		q    conversation.RunQuery
		want []string
	}{
		{conversation.RunQuery{TeamID: key.TeamID, Limit: 10}, []string{"1.3", "1.2", "1.1"}},
		{conversation.RunQuery{TeamID: key.TeamID, ChannelID: "C1", Limit: 10}, []string{"1.2", "1.1"}},
		{conversation.RunQuery{TeamID: key.TeamID, Status: workflow.RunRunning, Limit: 10}, []string{"1.3", "1.2"}},
		{conversation.RunQuery{TeamID: key.TeamID, ChannelID: "C1", Status: workflow.RunCompleted, Limit: 10}, []string{"1.1"}},
		{conversation.RunQuery{TeamID: key.TeamID, Limit: 1}, []string{"1.3"}},
		{conversation.RunQuery{TeamID: key.TeamID, Limit: 0}, []string{}},
	} {
		if got := list(c.q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Runs(%+v) = %v, want %v", c.q, got, c.want)
		}
	}
	refs, _ := s.Runs(ctx, conversation.RunQuery{TeamID: key.TeamID, ChannelID: "C1", Status: workflow.RunRunning, Limit: 10})
	if len(refs) != 1 || refs[0].Workflow != "brief" || refs[0].StartedBy != "api:ci-bot" || refs[0].Status != workflow.RunRunning {
		t.Errorf("the running run of C1: %+v", refs)
	}
}

// testMessages checks Messages' pages, order and role filter.
func testMessages(t *testing.T, s APIStore) {
	ctx := context.Background()
	if _, err := s.Messages(ctx, key, 0, 10, ""); !errors.Is(err, conversation.ErrNotFound) {
		t.Fatalf("Messages of no conversation: %v, want ErrNotFound", err)
	}
	rev := conversation.Message{Role: conversation.RoleRevision, UserID: "U1", Text: "v1", Meta: []byte(`{"artifact":"a","number":1}`)}
	mustSave(t, s, conversation.Turn{Key: key, State: conversation.State{Mode: conversation.ModeAssistant},
		Append: []conversation.Message{user("m1"), assistant("m2"), rev, user("m4"), assistant("m5")}})
	page := func(before int64, limit int, role conversation.Role) []int64 {
		t.Helper()
		msgs, err := s.Messages(ctx, key, before, limit, role)
		if err != nil {
			t.Fatalf("Messages(%d, %d, %q): %v", before, limit, role, err)
		}
		return seqs(msgs)
	}
	for _, c := range []struct {
		before int64
		limit  int
		role   conversation.Role
		want   []int64
	}{
		{0, 2, "", []int64{4, 5}},
		{4, 2, "", []int64{2, 3}},
		{2, 2, "", []int64{1}},
		{1, 2, "", []int64{}},
		{0, 10, conversation.RoleRevision, []int64{3}},
		{0, 0, "", []int64{}},
	} {
		if got := page(c.before, c.limit, c.role); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Messages(before %d, limit %d, role %q) = %v, want %v", c.before, c.limit, c.role, got, c.want)
		}
	}
	msgs, _ := s.Messages(ctx, key, 0, 10, conversation.RoleRevision)
	if len(msgs) != 1 || msgs[0].Text != "v1" || msgs[0].UserID != "U1" || !jsonEqual(t, msgs[0].Meta, rev.Meta) {
		t.Errorf("the revision message: %+v", msgs)
	}
}

// testInput checks Input through an input's life, and that it gives back a start's
// command as it was enqueued (the HTTP API compares a request reusing an
// Idempotency-Key with it).
func testInput(t *testing.T, s APIStore) {
	ctx := context.Background()
	if _, err := s.Input(ctx, "nope"); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("Input of no input: %v, want ErrNotFound", err)
	}
	mustEnqueue(t, s, input("i1"))
	if in, err := s.Input(ctx, "i1"); err != nil || in.Status != conversation.InputPending || in.Key != key || in.Message == nil {
		t.Errorf("Input = %+v, %v; want pending, of %s, with its message", in, err, key)
	}
	mustSave(t, s, conversation.Turn{Key: key, State: conversation.State{Mode: conversation.ModeAssistant}, InputID: "i1"})
	if in, err := s.Input(ctx, "i1"); err != nil || in.Status != conversation.InputDone {
		t.Errorf("Input after Save = %+v, %v; want done", in, err)
	}
	start := conversation.Input{ID: "api:start", Key: conversation.Key{TeamID: key.TeamID, ChannelID: "C7"}, Kind: conversation.KindCommand,
		Status: conversation.InputPending, CreatedAt: time.Now().UTC(),
		Command: &conversation.CommandInput{Source: conversation.SourceAPI, UserID: "api:ci-bot", Line: "start brief", Inputs: map[string]string{"topic": "tea"}}}
	mustEnqueue(t, s, start)
	got, err := s.Input(ctx, start.ID)
	if err != nil || got.Kind != conversation.KindCommand || got.Key != start.Key || !reflect.DeepEqual(got.Command, start.Command) {
		t.Errorf("Input of a start = %+v (command %+v), %v; want its key and command %+v", got, got.Command, err, start.Command)
	}
}

// testForwarded checks that Forwarded finds exactly the inputs id+">"+thread_ts.
func testForwarded(t *testing.T, s APIStore) {
	ctx := context.Background()
	fwd := func(id, ts string) conversation.Input {
		in := input(id)
		in.Key.ThreadTS = ts
		return in
	}
	mustEnqueue(t, s, input("api:1"))
	mustEnqueue(t, s, fwd("api:1>1700000002.000001", "1700000002.000001"))
	mustEnqueue(t, s, fwd("api:10>1700000003.000001", "1700000003.000001"))
	mustEnqueue(t, s, fwd("api:2>1700000004.000001", "1700000004.000001"))
	keys, err := s.Forwarded(ctx, "api:1")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].ThreadTS != "1700000002.000001" || keys[0].ChannelID != key.ChannelID {
		t.Errorf("Forwarded(api:1) = %+v", keys)
	}
	if keys, err := s.Forwarded(ctx, "api:3"); err != nil || len(keys) != 0 {
		t.Errorf("Forwarded(api:3) = %+v, %v; want none", keys, err)
	}
}
