package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/threadwright/threadwright/conversation"
)

// insertBatch is how many messages one INSERT writes; 10 parameters a row stays far
// below PostgreSQL's limit of 65,535 parameters a statement.
const insertBatch = 500

// Load returns the conversation for key with at most recent of its newest messages,
// oldest first. It reads the control row, then walks the messages' primary key
// backwards from last_seq, so it costs the same however long the conversation is.
// Errors: conversation.ErrNotFound.
func (s *Store) Load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error) {
	var c conversationRow
	err := s.db.GetContext(ctx, &c, `
		SELECT id, team_id, channel_id, thread_ts, state, version, last_seq, created_at, updated_at
		FROM conversations WHERE team_id = $1 AND channel_id = $2 AND thread_ts = $3`,
		key.TeamID, key.ChannelID, key.ThreadTS)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load conversation %s: %w", key, conversation.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load conversation %s: %w", key, err)
	}
	cp := new(conversation.Checkpoint)
	if cp.Conversation, err = c.conversation(); err != nil {
		return nil, fmt.Errorf("load conversation %s: %w", key, err)
	}
	if recent <= 0 || c.LastSeq == 0 {
		return cp, nil
	}
	// Messages are append-only: seq <= last_seq selects exactly those the control row
	// counts, even when a Save commits between the two queries.
	var rows []messageRow
	err = s.db.SelectContext(ctx, &rows, `
		SELECT conversation_id, seq, role, user_id, text, slack_ts, prompt_tokens, completion_tokens, meta, created_at
		FROM messages WHERE conversation_id = $1 AND seq <= $2
		ORDER BY seq DESC LIMIT $3`,
		c.ID, c.LastSeq, recent)
	if err != nil {
		return nil, fmt.Errorf("load messages of conversation %s: %w", key, err)
	}
	cp.Messages = make([]conversation.Message, len(rows))
	for i, r := range rows {
		cp.Messages[len(rows)-1-i] = r.message()
	}
	return cp, nil
}

// Exists reports whether a conversation exists for key.
func (s *Store) Exists(ctx context.Context, key conversation.Key) (bool, error) {
	var ok bool
	err := s.db.GetContext(ctx, &ok, `
		SELECT EXISTS (SELECT 1 FROM conversations WHERE team_id = $1 AND channel_id = $2 AND thread_ts = $3)`,
		key.TeamID, key.ChannelID, key.ThreadTS)
	if err != nil {
		return false, fmt.Errorf("find conversation %s: %w", key, err)
	}
	return ok, nil
}

// Save writes turn in one transaction: it creates the conversation (turn.Version 0) or
// updates its control row where the version still equals turn.Version, appends
// turn.Append numbered from the old last_seq+1, and marks turn.InputID done. It touches
// only the control row, the new messages and the input, so it costs the same however
// long the conversation is.
//
// Errors: conversation.ErrConflict, with nothing written, when the conversation exists
// (turn.Version 0) or is not at turn.Version (including when it no longer exists), or
// when turn.InputID is not a pending input (already answered, finished or deleted).
func (s *Store) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	saved, err := s.save(ctx, turn)
	if err != nil {
		return conversation.Saved{}, fmt.Errorf("save conversation %s at version %d: %w", turn.Key, turn.Version, err)
	}
	return saved, nil
}

func (s *Store) save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	if err := checkTurn(turn); err != nil {
		return conversation.Saved{}, err
	}
	state, err := json.Marshal(turn.State)
	if err != nil {
		return conversation.Saved{}, fmt.Errorf("encode state: %w", err)
	}
	at := now()
	n := int64(len(turn.Append))

	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return conversation.Saved{}, err
	}
	defer tx.Rollback()

	var id, lastSeq int64
	if turn.Version == 0 {
		lastSeq = n
		err = tx.QueryRowContext(ctx, `
			INSERT INTO conversations (team_id, channel_id, thread_ts, state, version, last_seq, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 1, $5, $6, $6) RETURNING id`,
			turn.Key.TeamID, turn.Key.ChannelID, turn.Key.ThreadTS, jsonText(state), lastSeq, at,
		).Scan(&id)
		if isUniqueViolation(err) {
			return conversation.Saved{}, conversation.ErrConflict
		}
	} else {
		err = tx.QueryRowContext(ctx, `
			UPDATE conversations SET state = $1, version = version + 1, last_seq = last_seq + $2, updated_at = $3
			WHERE team_id = $4 AND channel_id = $5 AND thread_ts = $6 AND version = $7
			RETURNING id, last_seq`,
			jsonText(state), n, at, turn.Key.TeamID, turn.Key.ChannelID, turn.Key.ThreadTS, turn.Version,
		).Scan(&id, &lastSeq)
		if errors.Is(err, sql.ErrNoRows) {
			return conversation.Saved{}, conversation.ErrConflict
		}
	}
	if err != nil {
		return conversation.Saved{}, err
	}
	first := lastSeq - n + 1
	if err := insertMessages(ctx, tx, id, first, at, turn.Append); err != nil {
		return conversation.Saved{}, err
	}
	if turn.InputID != "" {
		if err := markDone(ctx, tx, turn.InputID, at); err != nil {
			return conversation.Saved{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		return conversation.Saved{}, err
	}
	return conversation.Saved{ConversationID: id, Version: turn.Version + 1, FirstSeq: first}, nil
}

// insertMessages inserts msgs as seq first, first+1, … in batches of insertBatch rows.
func insertMessages(ctx context.Context, tx *sqlx.Tx, conversationID, first int64, at time.Time, msgs []conversation.Message) error {
	rows := make([]messageRow, len(msgs))
	for i, m := range msgs {
		rows[i] = messageRow{
			ConversationID:   conversationID,
			Seq:              first + int64(i),
			Role:             string(m.Role),
			UserID:           m.UserID,
			Text:             m.Text,
			SlackTS:          m.SlackTS,
			PromptTokens:     m.PromptTokens,
			CompletionTokens: m.CompletionTokens,
			Meta:             jsonText(m.Meta),
			CreatedAt:        at,
		}
	}
	for len(rows) > 0 {
		batch := rows[:min(len(rows), insertBatch)]
		rows = rows[len(batch):]
		_, err := tx.NamedExecContext(ctx, `
			INSERT INTO messages (conversation_id, seq, role, user_id, text, slack_ts, prompt_tokens, completion_tokens, meta, created_at)
			VALUES (:conversation_id, :seq, :role, :user_id, :text, :slack_ts, :prompt_tokens, :completion_tokens, :meta, :created_at)`,
			batch)
		if err != nil {
			return fmt.Errorf("insert messages: %w", err)
		}
	}
	return nil
}

// markDone marks the pending input id done, or fails with ErrConflict.
func markDone(ctx context.Context, tx *sqlx.Tx, id string, at time.Time) error {
	res, err := tx.ExecContext(ctx, `
		UPDATE inputs SET status = 'done', updated_at = $1 WHERE id = $2 AND status = 'pending'`,
		at, id)
	if err != nil {
		return fmt.Errorf("mark input %s done: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("mark input %s done: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("input %s is not pending: %w", id, conversation.ErrConflict)
	}
	return nil
}

// DeleteIdle deletes, in one transaction, the conversations not updated since before
// (their messages go with them, ON DELETE CASCADE) and the inputs created before it. It
// returns the number of conversations deleted.
func (s *Store) DeleteIdle(ctx context.Context, before time.Time) (int, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("delete idle conversations: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM conversations WHERE updated_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("delete idle conversations: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete idle conversations: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM inputs WHERE created_at < $1`, before); err != nil {
		return 0, fmt.Errorf("delete old inputs: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("delete idle conversations: %w", err)
	}
	return int(n), nil
}

// checkTurn rejects a turn that cannot be stored as it is.
func checkTurn(turn conversation.Turn) error {
	if !turn.Key.Valid() {
		return errors.New("incomplete key")
	}
	if turn.Version < 0 {
		return errors.New("negative version")
	}
	for i, m := range turn.Append {
		if m.Role == "" {
			return fmt.Errorf("message %d has no role", i)
		}
		if len(m.Meta) > 0 && !json.Valid(m.Meta) {
			return fmt.Errorf("message %d: meta is not valid JSON", i)
		}
	}
	return nil
}
