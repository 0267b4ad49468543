package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// The cases of Run for conversations: Save and Load, the version check and
// concurrent writers, Exists and Ping.

func testCreateLoad(t *testing.T, s conversation.Store) {
	state := conversation.State{Mode: conversation.ModeAssistant, StartedBy: "U0001", Turns: 1, PromptTokens: 120, CompletionTokens: 30}
	asked := user("What time is it?")
	asked.SlackTS = "1700000000.000100"
	answered := assistant("It is *noon*.")
	answered.SlackTS = "1700000000.000200"
	answered.PromptTokens, answered.CompletionTokens = 120, 30
	answered.Meta = json.RawMessage(`{"tool_calls": [{"name": "get_current_time", "arguments": "{}"}], "steps": 2}`)

	before := time.Now().Add(-time.Second)
	saved := mustSave(t, s, conversation.Turn{Key: key, State: state, Append: []conversation.Message{asked, answered}})
	if saved.ConversationID == 0 || saved.Version != 1 || saved.FirstSeq != 1 {
		t.Errorf("Save = %+v; want a conversation id, version 1, first seq 1", saved)
	}

	cp := mustLoad(t, s, key, 10)
	c := cp.Conversation
	if c.ID != saved.ConversationID || c.Key != key || c.Version != 1 || c.LastSeq != 2 {
		t.Errorf("conversation = id %d, key %s, version %d, last seq %d; want %d, %s, 1, 2",
			c.ID, c.Key, c.Version, c.LastSeq, saved.ConversationID, key)
	}
	if !reflect.DeepEqual(c.State, state) {
		t.Errorf("state = %+v; want %+v", c.State, state)
	}
	checkUTC(t, "CreatedAt", c.CreatedAt)
	checkUTC(t, "UpdatedAt", c.UpdatedAt)
	if c.CreatedAt.Before(before) || c.UpdatedAt.Before(c.CreatedAt) {
		t.Errorf("created %v, updated %v; want after %v, updated not before created", c.CreatedAt, c.UpdatedAt, before)
	}
	if len(cp.Messages) != 2 {
		t.Fatalf("loaded %d messages; want 2", len(cp.Messages))
	}
	for i, want := range []conversation.Message{asked, answered} {
		got := cp.Messages[i]
		checkUTC(t, "message CreatedAt", got.CreatedAt)
		if !jsonEqual(t, got.Meta, want.Meta) {
			t.Errorf("message %d meta = %s; want %s", i, got.Meta, want.Meta)
		}
		want.Seq, want.CreatedAt, want.Meta = int64(i+1), got.CreatedAt, got.Meta
		if !reflect.DeepEqual(got, want) {
			t.Errorf("message %d = %+v; want %+v", i, got, want)
		}
	}
	if cp.Messages[0].Meta != nil {
		t.Errorf("message without meta loaded with meta %q; want nil", cp.Messages[0].Meta)
	}
}

func testNotFound(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	if _, err := s.Load(ctx, key, 10); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("Load of a missing conversation: %v; want ErrNotFound", err)
	}
	mustSave(t, s, conversation.Turn{Key: key})
	for _, k := range []conversation.Key{
		{TeamID: "T0002", ChannelID: key.ChannelID, ThreadTS: key.ThreadTS},
		{TeamID: key.TeamID, ChannelID: "C0002", ThreadTS: key.ThreadTS},
		otherKey(1),
	} {
		if _, err := s.Load(ctx, k, 10); !errors.Is(err, conversation.ErrNotFound) {
			t.Errorf("Load(%s): %v; want ErrNotFound", k, err)
		}
	}
}

func testExists(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	if ok, err := s.Exists(ctx, key); ok || err != nil {
		t.Errorf("Exists before create = %v, %v; want false, nil", ok, err)
	}
	mustSave(t, s, conversation.Turn{Key: key})
	if ok, err := s.Exists(ctx, key); !ok || err != nil {
		t.Errorf("Exists after create = %v, %v; want true, nil", ok, err)
	}
	if ok, err := s.Exists(ctx, otherKey(1)); ok || err != nil {
		t.Errorf("Exists of another thread = %v, %v; want false, nil", ok, err)
	}
}

func testAppendSeq(t *testing.T, s conversation.Store) {
	saved := mustSave(t, s, conversation.Turn{Key: key, Append: []conversation.Message{user("1"), assistant("2")}})
	saved = mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, Append: []conversation.Message{user("3"), assistant("4"), assistant("5")}})
	if saved.Version != 2 || saved.FirstSeq != 3 {
		t.Errorf("second Save = %+v; want version 2, first seq 3", saved)
	}
	// A turn without messages still moves the version; FirstSeq is where the next would go.
	saved = mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, State: conversation.State{Turns: 3}})
	if saved.Version != 3 || saved.FirstSeq != 6 {
		t.Errorf("Save without messages = %+v; want version 3, first seq 6", saved)
	}
	saved = mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, State: conversation.State{Turns: 4}, Append: []conversation.Message{user("6")}})
	if saved.FirstSeq != 6 {
		t.Errorf("Save after an empty turn: first seq %d; want 6", saved.FirstSeq)
	}

	cp := mustLoad(t, s, key, 100)
	if got, want := seqs(cp.Messages), []int64{1, 2, 3, 4, 5, 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("seqs = %v; want %v", got, want)
	}
	if got, want := texts(cp.Messages), []string{"1", "2", "3", "4", "5", "6"}; !reflect.DeepEqual(got, want) {
		t.Errorf("texts = %v; want %v", got, want)
	}
	if cp.Conversation.Version != 4 || cp.Conversation.LastSeq != 6 || cp.Conversation.State.Turns != 4 {
		t.Errorf("conversation = version %d, last seq %d, turns %d; want 4, 6, 4",
			cp.Conversation.Version, cp.Conversation.LastSeq, cp.Conversation.State.Turns)
	}
	// Each conversation numbers its own messages.
	other := mustSave(t, s, conversation.Turn{Key: otherKey(1), Append: []conversation.Message{user("a")}})
	if other.FirstSeq != 1 || other.ConversationID == saved.ConversationID {
		t.Errorf("other conversation's Save = %+v; want its own id and first seq 1", other)
	}
}

func testRecentWindow(t *testing.T, s conversation.Store) {
	var msgs []conversation.Message
	for i := 1; i <= 25; i++ {
		msgs = append(msgs, user(fmt.Sprint(i)))
	}
	saved := mustSave(t, s, conversation.Turn{Key: key, Append: msgs[:20]})
	mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version, Append: msgs[20:]})

	for _, tc := range []struct {
		recent int
		want   []int64
	}{
		{10, []int64{16, 17, 18, 19, 20, 21, 22, 23, 24, 25}},
		{1, []int64{25}},
		{0, []int64{}},
		{-1, []int64{}},
	} {
		cp := mustLoad(t, s, key, tc.recent)
		if got := seqs(cp.Messages); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Load(recent %d) seqs = %v; want %v", tc.recent, got, tc.want)
		}
	}
	if cp := mustLoad(t, s, key, 1000); len(cp.Messages) != 25 || cp.Messages[0].Seq != 1 || cp.Messages[24].Text != "25" {
		t.Errorf("Load(recent 1000) = %d messages, from seq %v; want all 25, oldest first", len(cp.Messages), seqs(cp.Messages))
	}
}

func testConflict(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	if _, err := s.Save(ctx, conversation.Turn{Key: key, Version: 1, Append: []conversation.Message{user("x")}}); !errors.Is(err, conversation.ErrConflict) {
		t.Errorf("Save at version 1 of a missing conversation: %v; want ErrConflict", err)
	}
	mustSave(t, s, conversation.Turn{Key: key, State: conversation.State{Turns: 1}, Append: []conversation.Message{user("first")}})
	if _, err := s.Save(ctx, conversation.Turn{Key: key, State: conversation.State{Turns: 9}, Append: []conversation.Message{user("again")}}); !errors.Is(err, conversation.ErrConflict) {
		t.Errorf("second create: %v; want ErrConflict", err)
	}
	mustSave(t, s, conversation.Turn{Key: key, Version: 1, State: conversation.State{Turns: 2}, Append: []conversation.Message{user("second")}})
	for _, v := range []int64{1, 3} {
		_, err := s.Save(ctx, conversation.Turn{Key: key, Version: v, State: conversation.State{Turns: 9}, Append: []conversation.Message{user("stale")}})
		if !errors.Is(err, conversation.ErrConflict) {
			t.Errorf("Save at version %d of a conversation at version 2: %v; want ErrConflict", v, err)
		}
	}
	// Nothing of the failed saves was written.
	cp := mustLoad(t, s, key, 10)
	if c := cp.Conversation; c.Version != 2 || c.LastSeq != 2 || c.State.Turns != 2 {
		t.Errorf("after conflicts: version %d, last seq %d, turns %d; want 2, 2, 2", c.Version, c.LastSeq, c.State.Turns)
	}
	if got, want := texts(cp.Messages), []string{"first", "second"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after conflicts: messages %q; want %q", got, want)
	}
}

func testConcurrentSaves(t *testing.T, s conversation.Store) {
	const writers, versions = 8, 5
	mustSave(t, s, conversation.Turn{Key: key})
	for v := int64(1); v <= versions; v++ {
		wins, errs := race(writers, func(i int) error {
			_, err := s.Save(context.Background(), conversation.Turn{
				Key: key, Version: v, State: conversation.State{Turns: int(v)},
				Append: []conversation.Message{user(fmt.Sprintf("v%d w%d", v, i))},
			})
			return err
		})
		if wins != 1 {
			t.Fatalf("version %d: %d of %d concurrent saves won; want exactly 1 (errors: %v)", v, wins, writers, errs)
		}
		for _, err := range errs {
			if !errors.Is(err, conversation.ErrConflict) {
				t.Errorf("version %d: a losing save failed with %v; want ErrConflict", v, err)
			}
		}
	}
	cp := mustLoad(t, s, key, 100)
	if cp.Conversation.Version != versions+1 || cp.Conversation.LastSeq != versions {
		t.Errorf("after the races: version %d, last seq %d; want %d, %d", cp.Conversation.Version, cp.Conversation.LastSeq, versions+1, versions)
	}
	for i, m := range cp.Messages {
		if !strings.HasPrefix(m.Text, fmt.Sprintf("v%d ", i+1)) || m.Seq != int64(i+1) {
			t.Errorf("message %d = seq %d %q; want the winner of version %d", i, m.Seq, m.Text, i+1)
		}
	}
}

func testConcurrentCreates(t *testing.T, s conversation.Store) {
	const writers = 8
	wins, errs := race(writers, func(i int) error {
		_, err := s.Save(context.Background(), conversation.Turn{Key: key, Append: []conversation.Message{user(fmt.Sprint(i))}})
		return err
	})
	if wins != 1 {
		t.Fatalf("%d of %d concurrent creates won; want exactly 1 (errors: %v)", wins, writers, errs)
	}
	for _, err := range errs {
		if !errors.Is(err, conversation.ErrConflict) {
			t.Errorf("a losing create failed with %v; want ErrConflict", err)
		}
	}
	if cp := mustLoad(t, s, key, 10); cp.Conversation.Version != 1 || len(cp.Messages) != 1 {
		t.Errorf("after the race: version %d, %d messages; want 1, 1", cp.Conversation.Version, len(cp.Messages))
	}
}

func testInvalidTurn(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	for name, turn := range map[string]conversation.Turn{
		"no thread":    {Key: conversation.Key{TeamID: "T1", ChannelID: "C1"}},
		"no role":      {Key: key, Append: []conversation.Message{{Text: "x"}}},
		"invalid meta": {Key: key, Append: []conversation.Message{{Role: conversation.RoleUser, Text: "x", Meta: json.RawMessage(`{"a":`)}}},
	} {
		if _, err := s.Save(ctx, turn); err == nil || errors.Is(err, conversation.ErrConflict) {
			t.Errorf("Save with %s: %v; want an error other than ErrConflict", name, err)
		}
	}
	if ok, err := s.Exists(ctx, key); ok || err != nil {
		t.Errorf("Exists after rejected saves = %v, %v; want false, nil", ok, err)
	}
}

func testPing(t *testing.T, s conversation.Store) {
	if err := s.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// testExistsPending checks that Exists holds for a thread with only a pending input
// (a mention whose first turn has not been saved), and only while it is pending.
func testExistsPending(t *testing.T, s conversation.Store) {
	ctx := context.Background()
	k := thread("exists")
	mustEnqueue(t, s, inputIn(k, "e1", "U1"))
	if ok, err := s.Exists(ctx, k); !ok || err != nil {
		t.Errorf("Exists with a pending input = %v, %v; want true, nil", ok, err)
	}
	if err := s.Finish(ctx, conversation.Lease{}, "e1", conversation.InputDropped); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Exists(ctx, k); ok || err != nil {
		t.Errorf("Exists with a dropped input only = %v, %v; want false, nil", ok, err)
	}
}
