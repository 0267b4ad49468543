package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Enqueue persists in as a pending input with no attempts and reports whether it was
// new; when an input with the same ID exists (whatever its status) it changes nothing
// and returns false. in.CreatedAt, when set, is kept (it orders Pending); otherwise it
// is now. in.Status and in.Attempts are ignored.
func (s *Store) Enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	if in.ID == "" || in.Kind == "" || !in.Key.Valid() {
		return false, fmt.Errorf("enqueue input %q: id, kind and key are required", in.ID)
	}
	var payload []byte
	if in.Message != nil {
		var err error
		if payload, err = json.Marshal(in.Message); err != nil {
			return false, fmt.Errorf("enqueue input %s: %w", in.ID, err)
		}
	}
	at := now()
	created := at
	if !in.CreatedAt.IsZero() {
		created = in.CreatedAt.UTC().Truncate(time.Microsecond)
	}
	res, err := s.db.ExecContext(ctx, `
		INSERT INTO inputs (id, event_id, team_id, channel_id, thread_ts, kind, payload, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9)
		ON CONFLICT (id) DO NOTHING`,
		in.ID, in.EventID, in.Key.TeamID, in.Key.ChannelID, in.Key.ThreadTS, string(in.Kind), jsonText(payload),
		created, at)
	if err != nil {
		return false, fmt.Errorf("enqueue input %s: %w", in.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("enqueue input %s: %w", in.ID, err)
	}
	return n == 1, nil
}

// StartAttempt increments the attempt count of input id and returns the new count.
// Errors: conversation.ErrNotFound.
func (s *Store) StartAttempt(ctx context.Context, id string) (int, error) {
	var attempts int
	err := s.db.QueryRowContext(ctx, `
		UPDATE inputs SET attempts = attempts + 1, updated_at = $1 WHERE id = $2 RETURNING attempts`,
		now(), id).Scan(&attempts)
	if errors.Is(err, sql.ErrNoRows) {
		err = conversation.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("start attempt on input %s: %w", id, err)
	}
	return attempts, nil
}

// Finish sets the status of input id, one of the conversation.InputStatus constants.
// Errors: conversation.ErrNotFound.
func (s *Store) Finish(ctx context.Context, id string, status conversation.InputStatus) error {
	if !validStatus(status) {
		return fmt.Errorf("finish input %s: unknown status %q", id, status)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE inputs SET status = $1, updated_at = $2 WHERE id = $3`,
		string(status), now(), id)
	if err != nil {
		return fmt.Errorf("finish input %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("finish input %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("finish input %s: %w", id, conversation.ErrNotFound)
	}
	return nil
}

// Pending returns up to limit pending inputs created before before, oldest first (ties
// in id order).
func (s *Store) Pending(ctx context.Context, before time.Time, limit int) ([]conversation.Input, error) {
	if limit <= 0 {
		return nil, nil
	}
	var rows []inputRow
	err := s.db.SelectContext(ctx, &rows, `
		SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts, created_at
		FROM inputs WHERE status = 'pending' AND created_at < $1
		ORDER BY created_at, id LIMIT $2`,
		before, limit)
	if err != nil {
		return nil, fmt.Errorf("list pending inputs: %w", err)
	}
	inputs := make([]conversation.Input, len(rows))
	for i, r := range rows {
		if inputs[i], err = r.input(); err != nil {
			return nil, fmt.Errorf("list pending inputs: %w", err)
		}
	}
	return inputs, nil
}

func validStatus(s conversation.InputStatus) bool {
	switch s {
	case conversation.InputPending, conversation.InputDone, conversation.InputDropped, conversation.InputFailed:
		return true
	}
	return false
}
