package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Enqueue persists in as a pending input with no attempts and reports whether it was
// new; when an input with the same ID exists (whatever its status) it changes nothing
// and returns false. in.CreatedAt, when set, is kept (it orders Pending); otherwise it
// is now. in.Status and in.Attempts are ignored.
func (s *Store) Enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	return enqueue(ctx, s.write, in)
}

// enqueue inserts in with ex: the write connection, or the transaction of a Save.
func enqueue(ctx context.Context, ex sqlstore.Execer, in conversation.Input) (bool, error) {
	return sqlstore.Enqueue(in, func(payload sqlstore.JSONText, created, now time.Time) (sql.Result, error) {
		return ex.ExecContext(ctx, `
			INSERT INTO inputs (id, event_id, team_id, channel_id, thread_ts, kind, payload, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
			ON CONFLICT (id) DO NOTHING`,
			in.ID, in.EventID, in.Key.TeamID, in.Key.ChannelID, in.Key.ThreadTS, string(in.Kind), payload,
			timestamp(created), timestamp(now))
	})
}

// Claim takes pending input id until until, unless another claim on it is live (its
// until is after now): it increments the input's attempt count and returns the new
// count and true. It is one conditional UPDATE on the single write connection, and
// SQLite runs one writer at a time (other processes on the file included), so of
// concurrent claims on one input exactly one finds it unclaimed. When the input is not
// pending or its claim is live, it changes nothing and returns the input's attempt
// count and false. Errors: conversation.ErrNotFound.
func (s *Store) Claim(ctx context.Context, id string, until time.Time) (attempts int, ok bool, err error) {
	return sqlstore.Claim(id, until,
		func(until, now time.Time) *sql.Row {
			return s.write.QueryRowContext(ctx, `
				UPDATE inputs SET attempts = attempts + 1, claimed_until = ?, updated_at = ?
				WHERE id = ? AND status = 'pending' AND (claimed_until IS NULL OR claimed_until <= ?)
				RETURNING attempts`,
				timestamp(until), timestamp(now), id, timestamp(now))
		},
		func() *sql.Row {
			return s.read.QueryRowContext(ctx, `SELECT attempts FROM inputs WHERE id = ?`, id)
		})
}

// Release ends the claim on pending input id, if any, so that Pending offers it at
// once; on an input that is not pending it changes nothing. Errors:
// conversation.ErrNotFound.
func (s *Store) Release(ctx context.Context, id string) error {
	return sqlstore.Release(id,
		func(now time.Time) (sql.Result, error) {
			return s.write.ExecContext(ctx, `
				UPDATE inputs SET claimed_until = NULL, updated_at = ? WHERE id = ? AND status = 'pending'`,
				timestamp(now), id)
		},
		func() *sql.Row {
			return s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM inputs WHERE id = ?)`, id)
		})
}

// Finish sets the status of input id, one of the conversation.InputStatus constants.
// Errors: conversation.ErrNotFound.
func (s *Store) Finish(ctx context.Context, id string, status conversation.InputStatus) error {
	return sqlstore.Finish(id, status, func(now time.Time) (sql.Result, error) {
		return s.write.ExecContext(ctx, `UPDATE inputs SET status = ?, updated_at = ? WHERE id = ?`,
			string(status), timestamp(now), id)
	})
}

// Pending returns up to limit pending inputs created before before that are not under a
// live claim (none, or one whose until is not after now), oldest first (ties in id
// order). It walks the partial index inputs_pending and filters claimed inputs out.
func (s *Store) Pending(ctx context.Context, before time.Time, limit int) ([]conversation.Input, error) {
	return sqlstore.Pending(limit, func(rows *[]inputRow, now time.Time) error {
		return s.read.SelectContext(ctx, rows, `
			SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts, created_at
			FROM inputs WHERE status = 'pending' AND created_at < ?
				AND (claimed_until IS NULL OR claimed_until <= ?)
			ORDER BY created_at, id LIMIT ?`,
			timestamp(before), timestamp(now), limit)
	})
}
