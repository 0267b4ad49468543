package sqlstore

import (
	"encoding/json"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// FeedbackRow is a row of the feedback table (migration 00008), with its timestamp
// of type T. Tools is a JSON array of names.
type FeedbackRow[T Time] struct {
	TeamID           string `db:"team_id"`
	ChannelID        string `db:"channel_id"`
	ThreadTS         string `db:"thread_ts"`
	MessageTS        string `db:"message_ts"`
	UserID           string `db:"user_id"`
	Rating           string `db:"rating"`
	Reason           string `db:"reason"`
	Model            string `db:"model"`
	Strategy         string `db:"strategy"`
	Tools            string `db:"tools"`
	LatencyMS        int64  `db:"latency_ms"`
	PromptTokens     int    `db:"prompt_tokens"`
	CompletionTokens int    `db:"completion_tokens"`
	CreatedAt        T      `db:"created_at"`
}

// FeedbackCols are the columns of the feedback table, in FeedbackArgs's order.
const FeedbackCols = `team_id, channel_id, thread_ts, message_ts, user_id, rating, reason, model, strategy, tools, latency_ms, prompt_tokens, completion_tokens, created_at`

// FeedbackUpsert ends the backends' INSERT INTO feedback: a person's second click on
// a message replaces the first (the primary key is team, channel, message, person).
const FeedbackUpsert = `ON CONFLICT (team_id, channel_id, message_ts, user_id) DO UPDATE SET
	thread_ts = excluded.thread_ts, rating = excluded.rating, reason = excluded.reason,
	model = excluded.model, strategy = excluded.strategy, tools = excluded.tools,
	latency_ms = excluded.latency_ms, prompt_tokens = excluded.prompt_tokens,
	completion_tokens = excluded.completion_tokens, created_at = excluded.created_at`

// FeedbackList returns rows as conversation.Feedback values, in order.
func FeedbackList[T Time](rows []FeedbackRow[T]) []conversation.Feedback {
	out := make([]conversation.Feedback, len(rows))
	for i, r := range rows {
		out[i] = r.Feedback()
	}
	return out
}

// FeedbackArgs returns the values of f's row, in FeedbackCols's order, its time
// made by at.
func FeedbackArgs[T Time](f conversation.Feedback, at T) []any {
	tools, _ := json.Marshal(f.Tools) // strings: cannot fail
	if f.Tools == nil {
		tools = []byte("[]")
	}
	return []any{f.Key.TeamID, f.Key.ChannelID, f.Key.ThreadTS, f.MessageTS, f.UserID, string(f.Rating), f.Reason,
		f.Model, f.Strategy, string(tools), f.Latency.Milliseconds(), f.PromptTokens, f.CompletionTokens, at}
}

// Feedback returns r as a conversation.Feedback, its time in UTC (tools that do not
// decode are left out).
func (r FeedbackRow[T]) Feedback() conversation.Feedback {
	f := conversation.Feedback{
		Key:       conversation.Key{TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadTS: r.ThreadTS},
		MessageTS: r.MessageTS, UserID: r.UserID, Rating: conversation.Rating(r.Rating), Reason: r.Reason,
		Model: r.Model, Strategy: r.Strategy, Latency: time.Duration(r.LatencyMS) * time.Millisecond,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, CreatedAt: r.CreatedAt.UTC(),
	}
	_ = json.Unmarshal([]byte(r.Tools), &f.Tools)
	return f
}
