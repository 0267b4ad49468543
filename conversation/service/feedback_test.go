package service_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/assistant"
	"github.com/threadwright/threadwright/store/sqlite"
)

// TestFeedbackLogRecord: a click is stored with the turn read from the answer's saved
// message (its Meta and usage); a positive click keeps no reason; an answer not saved
// is stored without turn data; an incomplete click is an error and stores nothing.
func TestFeedbackLogRecord(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100"}
	meta := `{"tool_calls":[{"id":"a","name":"fetch_url"},{"id":"b","name":"fetch_url"},{"id":"c","name":"rm","denied":true},{"id":"d","name":"calculate"}],` +
		`"model":"gpt-test","strategy":"planner","latency_ms":2500}`
	if _, err := st.Save(ctx, conversation.Turn{Key: key, Append: []conversation.Message{
		{Role: conversation.RoleUser, UserID: "U1", Text: "q", SlackTS: "1700000000.000100"},
		{Role: conversation.RoleAssistant, Text: "a", SlackTS: "1700000000.000200", PromptTokens: 90, CompletionTokens: 9, Meta: json.RawMessage(meta)},
	}}); err != nil {
		t.Fatal(err)
	}
	log := assistant.FeedbackLog{Store: st}
	if err := log.Record(ctx, conversation.Feedback{Key: key, MessageTS: "1700000000.000200", UserID: "U1", Rating: conversation.RatingPositive, Reason: "ignored"}); err != nil {
		t.Fatal(err)
	}
	if err := log.Record(ctx, conversation.Feedback{Key: key, MessageTS: "1700000000.000999", UserID: "U2", Rating: conversation.RatingNegative, Reason: strings.Repeat("é", conversation.MaxFeedbackReason+10)}); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]conversation.Feedback{
		"NoRating":  {Key: key, MessageTS: "1.2", UserID: "U1"},
		"BadRating": {Key: key, MessageTS: "1.2", UserID: "U1", Rating: "meh"},
		"NoUser":    {Key: key, MessageTS: "1.2", Rating: conversation.RatingPositive},
		"NoMessage": {Key: key, UserID: "U1", Rating: conversation.RatingPositive},
	} {
		if err := log.Record(ctx, f); err == nil {
			t.Errorf("%s: Record succeeded", name)
		}
	}
	got, err := st.ListFeedback(ctx, time.Now().Add(-time.Hour))
	if err != nil || len(got) != 2 {
		t.Fatalf("ListFeedback = %+v, %v; want 2", got, err)
	}
	i := slices.IndexFunc(got, func(f conversation.Feedback) bool { return f.UserID == "U1" })
	p := got[i]
	if p.Reason != "" || p.Model != "gpt-test" || p.Strategy != "planner" || !slices.Equal(p.Tools, []string{"fetch_url", "calculate"}) ||
		p.Latency != 2500*time.Millisecond || p.PromptTokens != 90 || p.CompletionTokens != 9 {
		t.Errorf("positive = %+v; want the turn's model, strategy, tools (once each, denied left out), latency, tokens", p)
	}
	n := got[1-i]
	if n.Model != "" || n.PromptTokens != 0 || !strings.HasPrefix(n.Reason, "éé") || len([]rune(n.Reason)) > conversation.MaxFeedbackReason+100 {
		t.Errorf("negative on an unsaved answer = %+v; want no turn data and a clipped reason", n)
	}
}

// TestNewFeedbackReport: counts per channel and strategy, in order; negative ratings
// newest first.
func TestNewFeedbackReport(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC) }
	fb := func(ch, strategy string, r conversation.Rating, m int) conversation.Feedback {
		return conversation.Feedback{Key: conversation.Key{ChannelID: ch}, Strategy: strategy, Rating: r, CreatedAt: at(m), UserID: "U" + ch}
	}
	r := conversation.NewFeedbackReport(at(0), []conversation.Feedback{
		fb("C2", "react", conversation.RatingPositive, 1),
		fb("C1", "react", conversation.RatingNegative, 2),
		fb("C1", "planner", conversation.RatingPositive, 3),
		fb("C1", "react", conversation.RatingPositive, 4),
		fb("C2", "react", conversation.RatingNegative, 5),
	})
	want := []conversation.FeedbackCount{
		{Channel: "C1", Strategy: "planner", Positive: 1},
		{Channel: "C1", Strategy: "react", Positive: 1, Negative: 1},
		{Channel: "C2", Strategy: "react", Positive: 1, Negative: 1},
	}
	if !slices.Equal(r.Counts, want) {
		t.Errorf("counts %+v; want %+v", r.Counts, want)
	}
	if len(r.Negative) != 2 || !r.Negative[0].CreatedAt.Equal(at(5)) || !r.Negative[1].CreatedAt.Equal(at(2)) {
		t.Errorf("negative %+v; want the two, newest first", r.Negative)
	}
}
