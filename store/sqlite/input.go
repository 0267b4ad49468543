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

// Inputs are the inputs that drive the turns: conversation.Store's Enqueue,
// CountPending, Enqueued and Finish. Leases begin them; Save marks them done and
// enqueues a turn's follow-ups (enqueue).
type Inputs struct{ *pool }

const (
	// enqueueInputSQL inserts an input as pending, numbered with the next seq (the
	// rowid, AUTOINCREMENT), unless its id exists; it returns the seq, or no row.
	enqueueInputSQL = `
		INSERT INTO inputs (id, event_id, team_id, channel_id, thread_ts, kind, payload, status, created_at, updated_at, user_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)
		ON CONFLICT (id) DO NOTHING
		RETURNING seq`
	// enqueueLeaseSQL tells thread ?1-?3's lease row of input ?5 (a person's message
	// from ?7 when ?6): it inserts the row, free, with token 0 (the first Acquire makes
	// it 1), or counts the input (enqueued) and, when the lease is held, makes it the
	// newest input (and message). ?4 is now.
	enqueueLeaseSQL = `
		INSERT INTO leases (team_id, channel_id, thread_ts, token, expires_at, created_at, enqueued)
		VALUES (?1, ?2, ?3, 0, ?4, ?4, 1)
		ON CONFLICT (team_id, channel_id, thread_ts) DO UPDATE SET
			enqueued = enqueued + 1,
			newest = CASE WHEN owner IS NULL THEN newest ELSE max(newest, ?5) END,
			message_by = CASE WHEN owner IS NOT NULL AND ?6 AND ?5 > message_seq THEN ?7 ELSE message_by END,
			message_seq = CASE WHEN owner IS NOT NULL AND ?6 THEN max(message_seq, ?5) ELSE message_seq END`
)

// Enqueue persists in as a pending input with no attempts and the next seq, and tells
// the holder of its thread's lease, if any, in one transaction; it reports whether the
// input was new. When an input with the same ID exists (whatever its status) it
// changes nothing and returns false. in.CreatedAt, when set, is kept (DeleteIdle goes
// by it; Seq, not CreatedAt, orders a thread's inputs); otherwise it is now.
// in.Status, in.Attempts and in.Seq are ignored.
func (s *Inputs) Enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	s.intake.Add(1) // a batch of turn writes yields to it (pool.run)
	defer s.intake.Add(-1)
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return false, classify(err)
	}
	defer tx.Rollback()
	ok, err := enqueue(ctx, tx, &s.st, in)
	if err == nil && ok {
		err = tx.Commit()
	}
	return ok, classify(err)
}

// EnqueueBatch stores ins as Enqueue does each, in one transaction, so that one
// commit (one sync of the write-ahead log) stores a burst: either every input is
// stored (or found a duplicate) or none is. A thread's inputs keep their order in ins.
// inserted[i] reports whether ins[i] was new.
func (s *Inputs) EnqueueBatch(ctx context.Context, ins []conversation.Input) (inserted []bool, err error) {
	s.intake.Add(1) // a batch of turn writes yields to it (pool.run)
	defer s.intake.Add(-1)
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, classify(err)
	}
	defer tx.Rollback()
	inserted = make([]bool, len(ins))
	for _, i := range sqlstore.ByThread(ins) {
		if inserted[i], err = enqueue(ctx, tx, &s.st, ins[i]); err != nil {
			return nil, classify(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, classify(fmt.Errorf("enqueue %d inputs: %w", len(ins), err))
	}
	return inserted, nil
}

// enqueue inserts in in tx, with st's enqueueInput and enqueueLease: in Enqueue's
// transaction, or a Save's.
func enqueue(ctx context.Context, tx *sql.Tx, st *statements, in conversation.Input) (bool, error) {
	return sqlstore.Enqueue(in, func(r sqlstore.NewInput) (bool, error) {
		var seq int64
		err := tx.StmtContext(ctx, st.enqueueInput).QueryRowContext(ctx,
			r.ID, r.EventID, r.Key.TeamID, r.Key.ChannelID, r.Key.ThreadTS, r.Kind, r.Payload,
			timestamp(r.Created), timestamp(r.Now), r.UserID).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		_, err = tx.StmtContext(ctx, st.enqueueLease).ExecContext(ctx,
			r.Key.TeamID, r.Key.ChannelID, r.Key.ThreadTS, timestamp(r.Now), seq, r.Message, r.MessageBy)
		return err == nil, err
	})
}

// Finish sets the status of input id, one of the conversation.InputStatus constants.
// With a held lease l, it does so only while l still holds the input's thread: one
// conditional UPDATE, and, when it changes nothing, a query that tells why. Errors:
// conversation.ErrNotFound, conversation.ErrLeaseLost.
func (s *Inputs) Finish(ctx context.Context, l conversation.Lease, id string, status conversation.InputStatus) error {
	return classify(s.turnWrite(ctx, func(ctx context.Context, tx *sql.Tx) error { return s.finish(ctx, tx, l, id, status) }))
}

// finish is Finish's statements, run in tx, its turn write (turnWrite).
func (s *Inputs) finish(ctx context.Context, tx *sql.Tx, l conversation.Lease, id string, status conversation.InputStatus) error {
	k := l.Key
	return sqlstore.Finish(l, id, status, func(now time.Time) (finished, exists, held bool, err error) {
		n, err := sqlstore.RowsAffected(tx.ExecContext(ctx, `
			UPDATE inputs SET status = ?2, updated_at = ?3
			WHERE id = ?1 AND (?4 = 0 OR (team_id = ?6 AND channel_id = ?7 AND thread_ts = ?8
				AND EXISTS (SELECT 1 FROM leases
					WHERE team_id = ?6 AND channel_id = ?7 AND thread_ts = ?8 AND owner = ?5 AND token = ?4)))`,
			id, string(status), timestamp(now), l.Token, l.Owner, k.TeamID, k.ChannelID, k.ThreadTS))
		if err != nil || n == 1 {
			return n == 1, true, true, err
		}
		err = tx.QueryRowContext(ctx, `
			SELECT EXISTS (SELECT 1 FROM inputs WHERE id = ?1),
				EXISTS (SELECT 1 FROM leases WHERE team_id = ?2 AND channel_id = ?3 AND thread_ts = ?4 AND owner = ?5 AND token = ?6)`,
			id, k.TeamID, k.ChannelID, k.ThreadTS, l.Owner, l.Token).Scan(&exists, &held)
		return false, exists, held, err
	})
}

// countPendingSQL counts the pending inputs of thread ?1-?3 (through
// inputs_thread_pending) and of author ?4 in workspace ?1 (through
// inputs_user_pending; none for an empty author), each up to ?5.
const countPendingSQL = `
	SELECT
		(SELECT count(*) FROM (SELECT 1 FROM inputs
			WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND status = 'pending' LIMIT ?5)),
		(SELECT count(*) FROM (SELECT 1 FROM inputs
			WHERE team_id = ?1 AND user_id = ?4 AND ?4 <> '' AND user_id <> '' AND status = 'pending' LIMIT ?5))`

// CountPending counts the pending inputs of thread key and of author userID, each up
// to limit, in one query (countPendingSQL) on a read connection.
func (s *Inputs) CountPending(ctx context.Context, key conversation.Key, userID string, limit int) (conversation.PendingCounts, error) {
	c, err := sqlstore.CountPending(key, limit, func() (c conversation.PendingCounts, err error) {
		err = s.read.QueryRowContext(ctx, countPendingSQL, key.TeamID, key.ChannelID, key.ThreadTS, userID, limit).Scan(&c.Thread, &c.User)
		return c, err
	})
	return c, classify(err)
}

// pendingSQL selects up to ?4 pending inputs of thread ?1-?3, lowest seq first
// (through inputs_thread_pending).
const pendingSQL = `
	SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts, seq, created_at
	FROM inputs WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND status = 'pending'
	ORDER BY seq LIMIT ?4`

// Pending returns up to limit pending inputs of thread key, lowest seq first, on a
// read connection.
func (s *Inputs) Pending(ctx context.Context, key conversation.Key, limit int) ([]conversation.Input, error) {
	var rows []inputRow
	if err := s.read.SelectContext(ctx, &rows, pendingSQL, key.TeamID, key.ChannelID, key.ThreadTS, limit); err != nil {
		return nil, classify(fmt.Errorf("list pending inputs of %s: %w", key, err))
	}
	return sqlstore.Inputs(rows), nil
}

// Enqueued reports whether an input with id was enqueued, whatever its status (a
// lookup of its primary key).
func (s *Inputs) Enqueued(ctx context.Context, id string) (bool, error) {
	var ok bool
	if err := s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM inputs WHERE id = ?1)`, id).Scan(&ok); err != nil {
		return false, classify(fmt.Errorf("look up input %s: %w", id, err))
	}
	return ok, nil
}

// Amend changes pending input id before its turn began, in one conditional UPDATE:
// drop finishes it as dropped; otherwise its message's text becomes text.
func (s *Inputs) Amend(ctx context.Context, id, text string, drop bool) (bool, error) {
	n, err := sqlstore.RowsAffected(s.write.ExecContext(ctx, `
		UPDATE inputs SET updated_at = ?2,
			status = CASE WHEN ?4 THEN 'dropped' ELSE status END,
			payload = CASE WHEN ?4 THEN payload ELSE json_set(payload, '$.text', ?3) END
		WHERE id = ?1 AND status = 'pending' AND attempts = 0 AND kind = 'user_message' AND payload IS NOT NULL`,
		id, timestamp(sqlstore.Now()), sqlstore.Text(text), drop))
	if err != nil {
		return false, classify(fmt.Errorf("amend input %s: %w", id, err))
	}
	return n == 1, nil
}
