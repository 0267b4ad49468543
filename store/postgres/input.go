package postgres

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
	return enqueue(ctx, s.db, in)
}

// enqueue inserts in with ex: the database, or the transaction of a Save.
func enqueue(ctx context.Context, ex sqlstore.Execer, in conversation.Input) (bool, error) {
	return sqlstore.Enqueue(in, func(payload sqlstore.JSONText, created, now time.Time) (sql.Result, error) {
		return ex.ExecContext(ctx, `
			INSERT INTO inputs (id, event_id, team_id, channel_id, thread_ts, kind, payload, status, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9)
			ON CONFLICT (id) DO NOTHING`,
			in.ID, in.EventID, in.Key.TeamID, in.Key.ChannelID, in.Key.ThreadTS, string(in.Kind), payload,
			created, now)
	})
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
	return sqlstore.Claim(id, until,
		func(until, now time.Time) *sql.Row {
			return s.claimStmt.QueryRowContext(ctx, until, now, id)
		},
		func() *sql.Row {
			return s.db.QueryRowContext(ctx, `SELECT attempts FROM inputs WHERE id = $1`, id)
		})
}

// Release ends the claim on pending input id, if any, so that Pending offers it at
// once; on an input that is not pending it changes nothing. Errors:
// conversation.ErrNotFound.
func (s *Store) Release(ctx context.Context, id string) error {
	return sqlstore.Release(id,
		func(now time.Time) (sql.Result, error) {
			return s.db.ExecContext(ctx, `
				UPDATE inputs SET claimed_until = NULL, updated_at = $1 WHERE id = $2 AND status = 'pending'`,
				now, id)
		},
		func() *sql.Row {
			return s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT FROM inputs WHERE id = $1)`, id)
		})
}

// Finish sets the status of input id, one of the conversation.InputStatus constants.
// Errors: conversation.ErrNotFound.
func (s *Store) Finish(ctx context.Context, id string, status conversation.InputStatus) error {
	return sqlstore.Finish(id, status, func(now time.Time) (sql.Result, error) {
		return s.db.ExecContext(ctx, `UPDATE inputs SET status = $1, updated_at = $2 WHERE id = $3`,
			string(status), now, id)
	})
}

// Pending returns up to limit pending inputs created before before that are not under a
// live claim (none, or one whose until is not after now, by this process's clock),
// oldest first (ties in id order). It walks the partial index inputs_pending and
// filters claimed inputs out on the table.
func (s *Store) Pending(ctx context.Context, before time.Time, limit int) ([]conversation.Input, error) {
	return sqlstore.Pending(limit, func(rows *[]inputRow, now time.Time) error {
		return s.db.SelectContext(ctx, rows, `
			SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts, created_at
			FROM inputs WHERE status = 'pending' AND created_at < $1
				AND (claimed_until IS NULL OR claimed_until <= $3)
			ORDER BY created_at, id LIMIT $2`,
			before, limit, now)
	})
}
