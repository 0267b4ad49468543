package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Feedback is the feedback people gave on answers (migration 00008).
type Feedback struct{ *pool }

var _ conversation.FeedbackStore = (*Feedback)(nil)

// SaveFeedback stores f, replacing the feedback of f.UserID on the same message
// (migration 00008). Errors: the database's, wrapped.
func (s *Feedback) SaveFeedback(ctx context.Context, f conversation.Feedback) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO feedback (`+sqlstore.FeedbackCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		`+sqlstore.FeedbackUpsert,
		sqlstore.FeedbackArgs(f, timestamp(sqlstore.Now()))...)
	if err != nil {
		return classify(fmt.Errorf("save feedback on %s/%s: %w", f.Key.ChannelID, f.MessageTS, err))
	}
	return nil
}

// ListFeedback returns the feedback stored since since, oldest first.
func (s *Feedback) ListFeedback(ctx context.Context, since time.Time) ([]conversation.Feedback, error) {
	var rows []sqlstore.FeedbackRow[timestamp]
	if err := s.read.SelectContext(ctx, &rows, `SELECT `+sqlstore.FeedbackCols+` FROM feedback
		WHERE created_at >= ? ORDER BY created_at, channel_id, message_ts, user_id`, timestamp(since)); err != nil {
		return nil, classify(fmt.Errorf("list feedback: %w", err))
	}
	return sqlstore.FeedbackList(rows), nil
}

// AnswerAt returns the assistant message of thread key posted as ts. Errors:
// conversation.ErrNotFound.
func (s *Feedback) AnswerAt(ctx context.Context, key conversation.Key, ts string) (conversation.Message, error) {
	var m messageRow
	err := s.read.QueryRowContext(ctx, `
		SELECT m.seq, m.role, m.user_id, m.text, m.slack_ts, m.prompt_tokens, m.completion_tokens, m.meta, m.created_at
		FROM conversations c JOIN messages m ON m.conversation_id = c.id
		WHERE c.team_id = ? AND c.channel_id = ? AND c.thread_ts = ? AND m.slack_ts = ? AND m.role = ?
		ORDER BY m.seq DESC LIMIT 1`, key.TeamID, key.ChannelID, key.ThreadTS, ts, string(conversation.RoleAssistant)).
		Scan(&m.Seq, &m.Role, &m.UserID, &m.Text, &m.SlackTS, &m.PromptTokens, &m.CompletionTokens, &m.Meta, &m.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return conversation.Message{}, conversation.ErrNotFound
	}
	if err != nil {
		return conversation.Message{}, classify(fmt.Errorf("find answer %s in %s: %w", ts, key, err))
	}
	return m.message(), nil
}
