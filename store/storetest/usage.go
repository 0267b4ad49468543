package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// UsageStore is what RunUsage tests: a conversation store that keeps the usage ledger.
type UsageStore interface {
	conversation.Store
	conversation.UsageStore
}

// RunUsage runs the conformance suite of conversation.UsageStore against the stores
// open returns, each on a new, empty database: a turn saved with Usage writes its
// ledger rows (one per model) in its transaction (one that fails its version check
// writes none),
// UsageReport sums known rows by channel, person, workflow and model, and UsageSince
// selects a person's or a channel's rows since a time, oldest first.
func RunUsage(t *testing.T, open func(t *testing.T) UsageStore) {
	suite[UsageStore]{
		{"Report", testUsageReport},
		{"Since", testUsageSince},
	}.run(t, open)
}

// testUsageReport checks that a saved turn writes its ledger rows (a failed one
// none) and that UsageReport sums them by channel, person, workflow and model.
func testUsageReport(t *testing.T, s UsageStore) {
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	other := conversation.Key{TeamID: key.TeamID, ChannelID: "C0002", ThreadTS: "1700000002.000100"}
	rows := []struct {
		k conversation.Key
		u []conversation.UsageRecord
	}{
		{key, []conversation.UsageRecord{{UserID: "U1", Model: "gpt-a", Turns: 1, PromptTokens: 100, CompletionTokens: 10}}},
		{key, []conversation.UsageRecord{{UserID: "U2", Model: "gpt-a", Turns: 1, PromptTokens: 200, CompletionTokens: 20}}},
		// One turn that called two models: a row each, the turn counted on one.
		{other, []conversation.UsageRecord{
			{UserID: "U1", Workflow: "launch", Model: "gpt-b", Turns: 1, PromptTokens: 1000, CompletionTokens: 300},
			{UserID: "U1", Workflow: "launch", Model: "gpt-small", Turns: 0, PromptTokens: 40, CompletionTokens: 4},
		}},
		{other, []conversation.UsageRecord{{Workflow: "launch", Model: "gpt-b", Turns: 0, PromptTokens: 50, CompletionTokens: 5}}},
	}
	versions := map[conversation.Key]int64{}
	for _, r := range rows {
		saved := mustSave(t, s, conversation.Turn{Key: r.k, Version: versions[r.k], State: conversation.State{Mode: conversation.ModeAssistant},
			Append: []conversation.Message{assistant("answer")}, Usage: r.u})
		versions[r.k] = saved.Version
	}
	// A turn without usage writes no row; a turn that fails writes none either.
	mustSave(t, s, conversation.Turn{Key: key, Version: versions[key], State: conversation.State{Mode: conversation.ModeAssistant}})
	_, err := s.Save(ctx, conversation.Turn{Key: key, Version: versions[key], State: conversation.State{Mode: conversation.ModeAssistant},
		Usage: []conversation.UsageRecord{{UserID: "U1", Model: "gpt-a", Turns: 1, PromptTokens: 9999}, {UserID: "U1", Model: "gpt-small", PromptTokens: 9999}}})
	if !errors.Is(err, conversation.ErrConflict) {
		t.Fatalf("Save at a stale version = %v; want ErrConflict", err)
	}

	want := map[conversation.UsageBy][]conversation.UsageTotal{
		conversation.UsageByChannel: {
			{Group: "C0002", Model: "gpt-b", Turns: 1, PromptTokens: 1050, CompletionTokens: 305},
			{Group: "C0001", Model: "gpt-a", Turns: 2, PromptTokens: 300, CompletionTokens: 30},
			{Group: "C0002", Model: "gpt-small", Turns: 0, PromptTokens: 40, CompletionTokens: 4},
		},
		conversation.UsageByUser: {
			{Group: "U1", Model: "gpt-b", Turns: 1, PromptTokens: 1000, CompletionTokens: 300},
			{Group: "U2", Model: "gpt-a", Turns: 1, PromptTokens: 200, CompletionTokens: 20},
			{Group: "U1", Model: "gpt-a", Turns: 1, PromptTokens: 100, CompletionTokens: 10},
			{Group: "", Model: "gpt-b", Turns: 0, PromptTokens: 50, CompletionTokens: 5},
			{Group: "U1", Model: "gpt-small", Turns: 0, PromptTokens: 40, CompletionTokens: 4},
		},
		conversation.UsageByWorkflow: {
			{Group: "launch", Model: "gpt-b", Turns: 1, PromptTokens: 1050, CompletionTokens: 305},
			{Group: "", Model: "gpt-a", Turns: 2, PromptTokens: 300, CompletionTokens: 30},
			{Group: "launch", Model: "gpt-small", Turns: 0, PromptTokens: 40, CompletionTokens: 4},
		},
		conversation.UsageByModel: {
			{Group: "gpt-b", Model: "gpt-b", Turns: 1, PromptTokens: 1050, CompletionTokens: 305},
			{Group: "gpt-a", Model: "gpt-a", Turns: 2, PromptTokens: 300, CompletionTokens: 30},
			{Group: "gpt-small", Model: "gpt-small", Turns: 0, PromptTokens: 40, CompletionTokens: 4},
		},
	}
	for by, w := range want {
		got, err := s.UsageReport(ctx, before, by)
		if err != nil {
			t.Fatalf("UsageReport(%s): %v", by, err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("UsageReport(%s) = %+v; want %+v", by, got, w)
		}
	}
	if got, err := s.UsageReport(ctx, time.Now().Add(time.Hour), conversation.UsageByUser); err != nil || len(got) != 0 {
		t.Errorf("UsageReport since an hour from now = %+v, %v; want nothing", got, err)
	}
	if _, err := s.UsageReport(ctx, before, "team"); err == nil {
		t.Error("UsageReport by an unknown grouping: no error")
	}
}

// testUsageSince checks that UsageSince selects a person's or a channel's rows
// since a time, oldest first, in the workspace asked for.
func testUsageSince(t *testing.T, s UsageStore) {
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	other := conversation.Key{TeamID: key.TeamID, ChannelID: "C0002", ThreadTS: "1700000002.000100"}
	var version, otherVersion int64
	for i, n := range []int{10, 20, 30} {
		u := conversation.UsageRecord{UserID: "U1", Model: "gpt-a", Turns: 1, PromptTokens: n, CompletionTokens: 1}
		version = mustSave(t, s, conversation.Turn{Key: key, Version: version, State: conversation.State{Mode: conversation.ModeAssistant}, Usage: []conversation.UsageRecord{u}}).Version
		if i == 1 {
			u2 := conversation.UsageRecord{UserID: "U2", Turns: 1, PromptTokens: 7}
			otherVersion = mustSave(t, s, conversation.Turn{Key: other, Version: otherVersion, State: conversation.State{Mode: conversation.ModeAssistant}, Usage: []conversation.UsageRecord{u2}}).Version
		}
		tick()
	}
	got, err := s.UsageSince(ctx, conversation.UsageFilter{TeamID: key.TeamID, UserID: "U1", Since: before})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("UsageSince(U1) = %+v; want 3 rows", got)
	}
	for i, r := range got {
		checkUTC(t, "At", r.At)
		if r.Key != key || r.UserID != "U1" || r.Model != "gpt-a" || r.PromptTokens != 10*(i+1) || r.CompletionTokens != 1 || r.Turns != 1 {
			t.Errorf("row %d = %+v", i, r)
		}
		if r.At.Before(before) || (i > 0 && !r.At.After(got[i-1].At)) {
			t.Errorf("row %d at %v: want after %v and after the row before", i, r.At, before)
		}
	}
	// From the second row's time on, two rows are left.
	if later, err := s.UsageSince(ctx, conversation.UsageFilter{TeamID: key.TeamID, UserID: "U1", Since: got[1].At}); err != nil || len(later) != 2 {
		t.Errorf("UsageSince(U1, from the second row) = %+v, %v; want 2 rows", later, err)
	}
	byChannel, err := s.UsageSince(ctx, conversation.UsageFilter{TeamID: key.TeamID, ChannelID: "C0002", Since: before})
	if err != nil || len(byChannel) != 1 || byChannel[0].UserID != "U2" || byChannel[0].Tokens() != 7 {
		t.Errorf("UsageSince(C0002) = %+v, %v; want U2's row", byChannel, err)
	}
	if none, err := s.UsageSince(ctx, conversation.UsageFilter{TeamID: "T9999", Since: before}); err != nil || len(none) != 0 {
		t.Errorf("UsageSince(another workspace) = %+v, %v; want nothing", none, err)
	}
}
