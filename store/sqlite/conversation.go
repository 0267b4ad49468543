package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// insertBatch is how many messages one INSERT writes; 10 parameters a row stays far
// below SQLite's limit of 32,766 parameters a statement.
const insertBatch = 500

// Load returns the conversation for key with at most recent of its newest messages,
// oldest first. It reads the control row, then walks the messages' primary key
// backwards from last_seq, so it costs the same however long the conversation is.
// Errors: conversation.ErrNotFound.
func (s *Store) Load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error) {
	var c conversationRow
	err := s.read.GetContext(ctx, &c, `
		SELECT id, team_id, channel_id, thread_ts, state, version, last_seq, created_at, updated_at
		FROM conversations WHERE team_id = ? AND channel_id = ? AND thread_ts = ?`,
		key.TeamID, key.ChannelID, key.ThreadTS)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("load conversation %s: %w", key, conversation.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load conversation %s: %w", key, err)
	}
	cp := new(conversation.Checkpoint)
	if cp.Conversation, err = c.Conversation(); err != nil {
		return nil, fmt.Errorf("load conversation %s: %w", key, err)
	}
	if recent <= 0 || c.LastSeq == 0 {
		return cp, nil
	}
	// Messages are append-only: seq <= last_seq selects exactly those the control row
	// counts, even when a Save commits between the two queries.
	var rows []messageRow
	err = s.read.SelectContext(ctx, &rows, `
		SELECT conversation_id, seq, role, user_id, text, slack_ts, prompt_tokens, completion_tokens, meta, created_at
		FROM messages WHERE conversation_id = ? AND seq <= ?
		ORDER BY seq DESC LIMIT ?`,
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
	err := s.read.GetContext(ctx, &ok, `
		SELECT EXISTS (SELECT 1 FROM conversations WHERE team_id = ? AND channel_id = ? AND thread_ts = ?)`,
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
	return sqlstore.Save(turn, func(state sqlstore.JSONText) (conversation.Saved, error) {
		return s.save(ctx, turn, state)
	})
}

// save writes turn, whose state is encoded as state, once sqlstore.Save has checked it.
func (s *Store) save(ctx context.Context, turn conversation.Turn, state sqlstore.JSONText) (conversation.Saved, error) {
	at := sqlstore.Now()
	n := int64(len(turn.Append))

	tx, err := s.write.BeginTxx(ctx, nil)
	if err != nil {
		return conversation.Saved{}, err
	}
	defer tx.Rollback()

	wfName, wfStatus, wfStartedBy := sqlstore.WorkflowColumns(turn.State)
	var id, lastSeq int64
	if turn.Version == 0 {
		lastSeq = n
		err = tx.QueryRowContext(ctx, `
			INSERT INTO conversations (team_id, channel_id, thread_ts, state, version, last_seq, created_at, updated_at,
				workflow, workflow_status, workflow_started_by)
			VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?) RETURNING id`,
			turn.Key.TeamID, turn.Key.ChannelID, turn.Key.ThreadTS, state, lastSeq, timestamp(at), timestamp(at),
			wfName, wfStatus, wfStartedBy,
		).Scan(&id)
		if isUniqueViolation(err) {
			return conversation.Saved{}, conversation.ErrConflict
		}
	} else {
		err = tx.QueryRowContext(ctx, `
			UPDATE conversations SET state = ?, version = version + 1, last_seq = last_seq + ?, updated_at = ?,
				workflow = ?, workflow_status = ?, workflow_started_by = ?
			WHERE team_id = ? AND channel_id = ? AND thread_ts = ? AND version = ?
			RETURNING id, last_seq`,
			state, n, timestamp(at), wfName, wfStatus, wfStartedBy,
			turn.Key.TeamID, turn.Key.ChannelID, turn.Key.ThreadTS, turn.Version,
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
	for _, in := range turn.Enqueue {
		if _, err := enqueue(ctx, tx, in); err != nil {
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
			Meta:             sqlstore.JSONText(m.Meta),
			CreatedAt:        timestamp(at),
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
	n, err := sqlstore.RowsAffected(tx.ExecContext(ctx, `
		UPDATE inputs SET status = 'done', updated_at = ? WHERE id = ? AND status = 'pending'`,
		timestamp(at), id))
	if err != nil {
		return fmt.Errorf("mark input %s done: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("input %s is not pending: %w", id, conversation.ErrConflict)
	}
	return nil
}

// Workflows lists the conversations of channelID in teamID whose workflow is running,
// started by startedBy ("" for anyone's), most recently updated first (ties: newest
// conversation first), at most limit. It walks the partial index
// conversations_workflows, which holds running workflows only, and sorts the few rows
// it finds.
func (s *Store) Workflows(ctx context.Context, teamID, channelID, startedBy string, limit int) ([]conversation.WorkflowRef, error) {
	return sqlstore.Workflows(teamID, channelID, startedBy, limit, func(rows *[]workflowRow) error {
		return s.read.SelectContext(ctx, rows, `
			SELECT team_id, channel_id, thread_ts, workflow, workflow_started_by, updated_at
			FROM conversations
			WHERE team_id = ?1 AND channel_id = ?2 AND workflow_status = 'running'
				AND (?3 = '' OR workflow_started_by = ?3)
			ORDER BY updated_at DESC, id DESC LIMIT ?4`,
			teamID, channelID, startedBy, limit)
	})
}

// DeleteIdle deletes, in one transaction, the inputs created before before and the
// conversations not updated since then (their messages go with them, ON DELETE
// CASCADE). It returns the number of conversations deleted.
func (s *Store) DeleteIdle(ctx context.Context, before time.Time) (int, error) {
	return sqlstore.DeleteIdle(ctx, s.write.DB,
		`DELETE FROM inputs WHERE created_at < ?`,
		`DELETE FROM conversations WHERE updated_at < ?`,
		timestamp(before))
}
