package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
)

// FeedbackLog records the clicks of feedback buttons.
type FeedbackLog struct {
	Store conversation.FeedbackStore
}

// Record stores f with the turn that wrote its answer, read from the answer's saved
// message (Feedback.Model and the fields after it); an answer not found (not saved
// yet, or deleted) is stored without them. The reason is cut to MaxFeedbackReason
// characters. Errors: an invalid rating or a missing message, user or channel; the
// store's.
func (l FeedbackLog) Record(ctx context.Context, f conversation.Feedback) error {
	if !f.Rating.Valid() || f.MessageTS == "" || f.UserID == "" || f.Key.ChannelID == "" {
		return fmt.Errorf("record feedback: rating %q, message %q, user %q, channel %q: incomplete", f.Rating, f.MessageTS, f.UserID, f.Key.ChannelID)
	}
	if f.Rating != conversation.RatingNegative {
		f.Reason = ""
	}
	f.Reason = history.Clip(f.Reason, conversation.MaxFeedbackReason)
	m, err := l.Store.AnswerAt(ctx, f.Key, f.MessageTS)
	switch {
	case errors.Is(err, conversation.ErrNotFound):
	case err != nil:
		return fmt.Errorf("record feedback: find the answer: %w", err)
	default:
		f = withTurn(f, m)
	}
	if err := l.Store.SaveFeedback(ctx, f); err != nil {
		return fmt.Errorf("record feedback: %w", err)
	}
	return nil
}

// withTurn returns f with the turn data of m, the answer's saved message.
func withTurn(f conversation.Feedback, m conversation.Message) conversation.Feedback {
	f.PromptTokens, f.CompletionTokens = m.PromptTokens, m.CompletionTokens
	var meta turnMeta
	if len(m.Meta) == 0 || json.Unmarshal(m.Meta, &meta) != nil {
		return f
	}
	f.Model, f.Strategy = meta.Model, meta.Strategy
	f.Latency = time.Duration(meta.LatencyMS) * time.Millisecond
	f.Tools = nil
	for _, c := range meta.ToolCalls {
		if !c.Denied && !slices.Contains(f.Tools, c.Name) {
			f.Tools = append(f.Tools, c.Name)
		}
	}
	return f
}
