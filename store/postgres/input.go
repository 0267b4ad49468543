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

// claimSQL takes a claim in one conditional UPDATE. In PostgreSQL's READ COMMITTED, an
// UPDATE that finds the row locked by a concurrent writer (another Claim, a Save, a
// Finish) waits for it to commit and then re-checks its WHERE on the row's newest
// version, so of concurrent claims on one input, from this process or other replicas,
// exactly one finds it unclaimed and wins; the others find the winner's live claim and
// update nothing. $1 is until, $2 now (the caller's clock), $3 the input id.
const claimSQL = `
UPDATE inputs SET attempts = attempts + 1, claimed_until = $1, updated_at = $2
WHERE id = $3 AND status = 'pending' AND (claimed_until IS NULL OR claimed_until <= $2)
RETURNING attempts`

// Claim takes pending input id until until, unless another claim on it is live (its
// until is after now, by this process's clock): it increments the input's attempt
// count and returns the new count and true, in one statement (claimSQL), so in one
// round trip. When the input is not pending or its claim is live, it changes nothing
// and returns the input's attempt count and false (a second statement reads the count,
// and tells a missing input apart). Errors: conversation.ErrNotFound.
func (s *Store) Claim(ctx context.Context, id string, until time.Time) (attempts int, ok bool, err error) {
	if until.IsZero() {
		return 0, false, fmt.Errorf("claim input %s: zero until", id)
	}
	err = s.claimStmt.QueryRowContext(ctx, until.UTC().Truncate(time.Microsecond), now(), id).Scan(&attempts)
	if err == nil {
		return attempts, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("claim input %s: %w", id, err)
	}
	err = s.db.QueryRowContext(ctx, `SELECT attempts FROM inputs WHERE id = $1`, id).Scan(&attempts)
	if errors.Is(err, sql.ErrNoRows) {
		err = conversation.ErrNotFound
	}
	if err != nil {
		return 0, false, fmt.Errorf("claim input %s: %w", id, err)
	}
	return attempts, false, nil
}

// Release ends the claim on pending input id, if any, so that Pending offers it at
// once; on an input that is not pending it changes nothing. Errors:
// conversation.ErrNotFound.
func (s *Store) Release(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `
		UPDATE inputs SET claimed_until = NULL, updated_at = $1 WHERE id = $2 AND status = 'pending'`,
		now(), id)
	if err != nil {
		return fmt.Errorf("release input %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("release input %s: %w", id, err)
	}
	if n == 1 {
		return nil
	}
	var exists bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT FROM inputs WHERE id = $1)`, id).Scan(&exists); err != nil {
		return fmt.Errorf("release input %s: %w", id, err)
	}
	if !exists {
		return fmt.Errorf("release input %s: %w", id, conversation.ErrNotFound)
	}
	return nil
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

// Pending returns up to limit pending inputs created before before that are not under a
// live claim (none, or one whose until is not after now, by this process's clock),
// oldest first (ties in id order). It walks the partial index inputs_pending and
// filters claimed inputs out on the table.
func (s *Store) Pending(ctx context.Context, before time.Time, limit int) ([]conversation.Input, error) {
	if limit <= 0 {
		return nil, nil
	}
	var rows []inputRow
	err := s.db.SelectContext(ctx, &rows, `
		SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts, created_at
		FROM inputs WHERE status = 'pending' AND created_at < $1
			AND (claimed_until IS NULL OR claimed_until <= $3)
		ORDER BY created_at, id LIMIT $2`,
		before, limit, now())
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
