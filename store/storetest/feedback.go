package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// FeedbackStore is what RunFeedback tests: a conversation store that keeps feedback.
type FeedbackStore interface {
	conversation.Store
	conversation.FeedbackStore
}

// RunFeedback runs the conformance suite of conversation.FeedbackStore against the
// stores open returns, each on a new, empty database: feedback is stored with the
// turn data it is given, a second click of one person on one message replaces the
// first (another person's, or the same person's on another message, does not),
// ListFeedback returns what was stored since a time, oldest first, and AnswerAt finds
// the assistant message a turn saved by its Slack ts.
func RunFeedback(t *testing.T, open func(t *testing.T) FeedbackStore) {
	suite[FeedbackStore]{
		{"SaveAndReplace", testFeedbackSaveAndReplace},
		{"AnswerAt", testFeedbackAnswerAt},
	}.run(t, open)
}

// testFeedbackSaveAndReplace checks that feedback is stored as given, that a
// person's second click on a message replaces the first, and that ListFeedback returns
// what was stored since a time.
func testFeedbackSaveAndReplace(t *testing.T, s FeedbackStore) {
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	first := conversation.Feedback{Key: key, MessageTS: "1700000000.000200", UserID: "U1", Rating: conversation.RatingPositive,
		Model: "gpt-test", Strategy: "react", Tools: []string{"fetch_url", "calculate"}, Latency: 1500 * time.Millisecond,
		PromptTokens: 120, CompletionTokens: 30}
	if err := s.SaveFeedback(ctx, first); err != nil {
		t.Fatal(err)
	}
	other := first
	other.UserID = "U2"
	other.Rating, other.Reason = conversation.RatingNegative, "wrong year"
	if err := s.SaveFeedback(ctx, other); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListFeedback(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("ListFeedback = %+v; want 2 rows", got)
	}
	g := got[0]
	checkUTC(t, "CreatedAt", g.CreatedAt)
	if g.CreatedAt.Before(before) || g.CreatedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("CreatedAt = %v; want about now", g.CreatedAt)
	}
	g.CreatedAt = time.Time{}
	if !equalFeedback(g, first) {
		t.Errorf("first row = %+v; want %+v", g, first)
	}
	if got[1].UserID != "U2" || got[1].Reason != "wrong year" || got[1].Rating != conversation.RatingNegative {
		t.Errorf("second row = %+v", got[1])
	}

	// The same person clicks again: the row is replaced, not added.
	again := first
	again.Rating, again.Reason, again.Tools = conversation.RatingNegative, "too long", nil
	if err := s.SaveFeedback(ctx, again); err != nil {
		t.Fatal(err)
	}
	got, err = s.ListFeedback(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("after a second click, ListFeedback = %+v; want 2 rows", got)
	}
	i := slices.IndexFunc(got, func(f conversation.Feedback) bool { return f.UserID == "U1" })
	if i < 0 || got[i].Rating != conversation.RatingNegative || got[i].Reason != "too long" || len(got[i].Tools) != 0 {
		t.Errorf("U1's row after a second click = %+v; want the negative one", got)
	}

	// Another message of the same person is another row.
	third := first
	third.MessageTS = "1700000000.000300"
	if err := s.SaveFeedback(ctx, third); err != nil {
		t.Fatal(err)
	}
	if got, err = s.ListFeedback(ctx, before); err != nil || len(got) != 3 {
		t.Fatalf("ListFeedback = %d rows, %v; want 3", len(got), err)
	}
	if got, err = s.ListFeedback(ctx, time.Now().Add(time.Hour)); err != nil || len(got) != 0 {
		t.Fatalf("ListFeedback(since an hour ahead) = %+v, %v; want none", got, err)
	}
}

// testFeedbackAnswerAt checks that AnswerAt finds the assistant message of a thread
// by its Slack ts, and nothing else.
func testFeedbackAnswerAt(t *testing.T, s FeedbackStore) {
	ctx := context.Background()
	if _, err := s.AnswerAt(ctx, key, "1700000000.000900"); !errors.Is(err, conversation.ErrNotFound) {
		t.Fatalf("AnswerAt of no conversation: %v; want ErrNotFound", err)
	}
	asked := user("how many?")
	asked.SlackTS = "1700000000.000800"
	answered := assistant("three")
	answered.SlackTS, answered.PromptTokens, answered.CompletionTokens = "1700000000.000900", 40, 5
	answered.Meta = json.RawMessage(`{"model":"gpt-test","latency_ms":1200}`)
	mustSave(t, s, conversation.Turn{Key: key, Append: []conversation.Message{asked, answered}})
	m, err := s.AnswerAt(ctx, key, "1700000000.000900")
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "three" || m.PromptTokens != 40 || m.CompletionTokens != 5 || !jsonEqual(t, m.Meta, answered.Meta) {
		t.Errorf("AnswerAt = %+v (meta %s); want the answer", m, m.Meta)
	}
	// The person's message is not an answer; another thread's ts is not this one's.
	if _, err := s.AnswerAt(ctx, key, asked.SlackTS); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("AnswerAt of a user message: %v; want ErrNotFound", err)
	}
	if _, err := s.AnswerAt(ctx, otherKey(1), answered.SlackTS); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("AnswerAt in another thread: %v; want ErrNotFound", err)
	}
}

// equalFeedback compares feedback rows field by field (Tools nil and empty alike).
func equalFeedback(a, b conversation.Feedback) bool {
	return a.Key == b.Key && a.MessageTS == b.MessageTS && a.UserID == b.UserID && a.Rating == b.Rating &&
		a.Reason == b.Reason && a.Model == b.Model && a.Strategy == b.Strategy && slices.Equal(a.Tools, b.Tools) &&
		a.Latency == b.Latency && a.PromptTokens == b.PromptTokens && a.CompletionTokens == b.CompletionTokens &&
		a.CreatedAt.Equal(b.CreatedAt)
}
