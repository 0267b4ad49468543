package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Inputs are the inputs that drive the turns: conversation.Store's Enqueue,
// CountPending, Enqueued and Finish. Leases begin them; Save marks them done and
// enqueues a turn's follow-ups (enqueue).
type Inputs struct{ *pool }

// enqueueSQL inserts an input and tells its thread's lease row, in one statement (so
// in one round trip, and one transaction):
//
//   - ins inserts the input as pending, numbered with the next seq (inputs.seq, an
//     identity column), unless its id exists (ON CONFLICT DO NOTHING: no row).
//   - lease, only when ins inserted a row, inserts the thread's lease row (free, token
//     0, so that the first Acquire makes it 1) or updates it: enqueued + 1 always, and
//     when the lease is held, newest to the new seq, and message_seq and message_by
//     to the new seq and its author for a person's message ($10, $11). greatest()
//     keeps the newest when inputs commit out of seq order. An upsert works on the
//     row's newest version whatever the statement's snapshot: if a concurrent Acquire
//     or Release changes the row first, this waits for it and then updates the result.
//     Writing the row even when it is free is what lets Release see this input (see
//     releaseSQL).
//
// The statement returns the new seq, or no row for a duplicate. Parameters: $1 id, $2
// event_id, $3-$5 the key, $6 kind, $7 payload (JSON or NULL), $8 created_at, $9
// updated_at, $10 whether it is a person's message, $11 its author, $12 the input's
// author (user_id, migration 00007).
const enqueueSQL = `
WITH ins AS (
	INSERT INTO inputs (id, event_id, team_id, channel_id, thread_ts, kind, payload, status, created_at, updated_at, user_id)
	VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::jsonb, 'pending', $8::timestamptz, $9::timestamptz, $12::text)
	ON CONFLICT (id) DO NOTHING
	RETURNING seq
),
lease AS (
	INSERT INTO leases AS l (team_id, channel_id, thread_ts, token, expires_at, created_at, enqueued)
	SELECT $3::text, $4::text, $5::text, 0, now(), now(), 1 FROM ins
	ON CONFLICT (team_id, channel_id, thread_ts) DO UPDATE SET
		enqueued = l.enqueued + 1,
		newest = CASE WHEN l.owner IS NULL THEN l.newest ELSE greatest(l.newest, (SELECT seq FROM ins)) END,
		message_by = CASE WHEN l.owner IS NOT NULL AND $10::boolean AND (SELECT seq FROM ins) > l.message_seq
			THEN $11::text ELSE l.message_by END,
		message_seq = CASE WHEN l.owner IS NOT NULL AND $10::boolean
			THEN greatest(l.message_seq, (SELECT seq FROM ins)) ELSE l.message_seq END
)
SELECT seq FROM ins`

// Enqueue persists in as a pending input with no attempts and the next seq, and tells
// the holder of its thread's lease, if any, in one statement (enqueueSQL); it reports
// whether the input was new. When an input with the same ID exists (whatever its
// status) it changes nothing and returns false. in.CreatedAt, when set, is kept
// (DeleteIdle goes by it; Seq, not CreatedAt, orders a thread's inputs); otherwise it
// is now. in.Status, in.Attempts and in.Seq are ignored.
func (s *Inputs) Enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	ok, err := enqueue(ctx, s.enqueueStmt, in)
	return ok, classify(err)
}

// enqueue inserts in with st: enqueueStmt, or enqueueStmt in the transaction of a
// Save.
func enqueue(ctx context.Context, st *sql.Stmt, in conversation.Input) (bool, error) {
	return sqlstore.Enqueue(in, func(r sqlstore.NewInput) (bool, error) {
		var seq int64
		err := st.QueryRowContext(ctx, r.ID, r.EventID, r.Key.TeamID, r.Key.ChannelID, r.Key.ThreadTS, r.Kind, r.Payload,
			r.Created, r.Now, r.Message, r.MessageBy, r.UserID).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	})
}

// finishSQL sets an input's status in one statement: lease locks l's lease row FOR
// SHARE if l still holds it (as in Save: no takeover until the statement commits;
// nothing to check for the zero Lease, token $4 0), and finished updates input $1 of
// l's thread ($6-$8) when there is no lease or lease found it held. It returns whether
// it did, whether the input exists and whether the lease held. Parameters: $1 the
// input id, $2 the status, $3 the time, $4 and $5 the lease's token and owner, $6-$8
// its thread.
const finishSQL = `
WITH lease AS MATERIALIZED (
	SELECT FROM leases
	WHERE $4::bigint <> 0 AND team_id = $6::text AND channel_id = $7::text AND thread_ts = $8::text
		AND owner = $5::text AND token = $4::bigint
	FOR SHARE
),
finished AS (
	UPDATE inputs SET status = $2::text, updated_at = $3::timestamptz
	WHERE id = $1::text
		AND ($4::bigint = 0 OR (team_id = $6::text AND channel_id = $7::text AND thread_ts = $8::text
			AND EXISTS (SELECT FROM lease)))
	RETURNING true
)
SELECT EXISTS (SELECT FROM finished), EXISTS (SELECT FROM inputs WHERE id = $1::text), EXISTS (SELECT FROM lease)`

// Finish sets the status of input id, one of the conversation.InputStatus constants,
// in one statement (finishSQL). With a held lease l, it does so only while l still
// holds the input's thread. Errors: conversation.ErrNotFound,
// conversation.ErrLeaseLost.
func (s *Inputs) Finish(ctx context.Context, l conversation.Lease, id string, status conversation.InputStatus) error {
	return classify(sqlstore.Finish(l, id, status, func(now time.Time) (finished, exists, held bool, err error) {
		err = s.db.QueryRowContext(ctx, finishSQL, id, string(status), now, l.Token, l.Owner,
			l.Key.TeamID, l.Key.ChannelID, l.Key.ThreadTS).Scan(&finished, &exists, &held)
		return finished, exists, held, err
	}))
}

// countPendingSQL counts the pending inputs of thread $1-$3 (through
// inputs_thread_pending) and of author $4 in workspace $1 (through
// inputs_user_pending; none for an empty author), each up to $5.
const countPendingSQL = `
SELECT
	(SELECT count(*) FROM (SELECT FROM inputs
		WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND status = 'pending'
		LIMIT $5::bigint) AS t),
	(SELECT count(*) FROM (SELECT FROM inputs
		WHERE team_id = $1::text AND user_id = $4::text AND $4::text <> '' AND user_id <> '' AND status = 'pending'
		LIMIT $5::bigint) AS u)`

// CountPending counts the pending inputs of thread key and of author userID, each up
// to limit, in one statement (countPendingSQL).
func (s *Inputs) CountPending(ctx context.Context, key conversation.Key, userID string, limit int) (conversation.PendingCounts, error) {
	c, err := sqlstore.CountPending(key, limit, func() (c conversation.PendingCounts, err error) {
		err = s.intake.QueryRowContext(ctx, countPendingSQL, key.TeamID, key.ChannelID, key.ThreadTS, userID, limit).Scan(&c.Thread, &c.User)
		return c, err
	})
	return c, classify(err)
}

// Pending returns up to limit pending inputs of thread key, lowest seq first
// (through the thread's pending index).
func (s *Inputs) Pending(ctx context.Context, key conversation.Key, limit int) ([]conversation.Input, error) {
	var rows []inputRow
	err := s.db.SelectContext(ctx, &rows, `
		SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts, seq, created_at
		FROM inputs WHERE team_id = $1 AND channel_id = $2 AND thread_ts = $3 AND status = 'pending'
		ORDER BY seq LIMIT $4`, key.TeamID, key.ChannelID, key.ThreadTS, limit)
	if err != nil {
		return nil, classify(fmt.Errorf("list pending inputs of %s: %w", key, err))
	}
	return sqlstore.Inputs(rows), nil
}

// Enqueued reports whether an input with id was enqueued, whatever its status (a
// lookup of its primary key).
func (s *Inputs) Enqueued(ctx context.Context, id string) (bool, error) {
	var ok bool
	if err := s.intake.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM inputs WHERE id = $1::text)`, id).Scan(&ok); err != nil {
		return false, classify(fmt.Errorf("look up input %s: %w", id, err))
	}
	return ok, nil
}

// Amend changes pending input id before its turn began, in one conditional UPDATE:
// drop finishes it as dropped; otherwise its message's text becomes text.
func (s *Inputs) Amend(ctx context.Context, id, text string, drop bool) (bool, error) {
	n, err := sqlstore.RowsAffected(s.db.ExecContext(ctx, `
		UPDATE inputs SET updated_at = $2::timestamptz,
			status = CASE WHEN $4::boolean THEN 'dropped' ELSE status END,
			payload = CASE WHEN $4::boolean THEN payload ELSE jsonb_set(payload, '{text}', to_jsonb($3::text)) END
		WHERE id = $1::text AND status = 'pending' AND attempts = 0 AND kind = 'user_message' AND payload IS NOT NULL`,
		id, sqlstore.Now(), sqlstore.Text(text), drop))
	if err != nil {
		return false, classify(fmt.Errorf("amend input %s: %w", id, err))
	}
	return n == 1, nil
}
