package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Leases are the threads' leases (docs/architecture.md, "Durable turns"):
// conversation.Store's Acquire, AcquireBegin, Begin, Next, Release, Abandon, Renew,
// Signal and Orphans.
type Leases struct{ *pool }

// The lease statements (migration 00005; docs/architecture.md, "Durable turns"). They
// run on the write connection, and SQLite runs one writing statement or transaction
// at a time, other processes on the file included: each sees every write committed
// before it, and none is interleaved with another. A lease expires by the clock of
// the process that writes it (sqlstore.Now plus the ttl), which the processes sharing
// a file, on one machine, share.
const (
	// acquireSQL inserts thread ?1-?3's lease row for owner ?4 until ?5 with token 1,
	// or takes the row if it is free, expired at ?6 (now), or ?4's own: token + 1, the
	// previous owner kept, the signals cleared. It returns token and prev_owner, or no
	// row.
	acquireSQL = `
		INSERT INTO leases (team_id, channel_id, thread_ts, owner, token, expires_at, created_at)
		VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6)
		ON CONFLICT (team_id, channel_id, thread_ts) DO UPDATE SET
			owner = excluded.owner, token = token + 1, expires_at = excluded.expires_at, prev_owner = owner,
			newest = 0, message_seq = 0, message_by = '', stop_target = '', stop_by = ''
		WHERE owner IS NULL OR expires_at <= ?6 OR owner = excluded.owner
		RETURNING token, prev_owner`
	// beginSQL increments the attempts of thread ?1-?3's pending input with the lowest
	// seq (the first entry of inputs_thread_pending) if owner ?4 holds the thread with
	// token ?5, and returns the input. ?6 is now. With ?7 true (AcquireBegin took ?4's
	// own lease again: the answer of the call that took it was lost) an input begun
	// already (attempts > 0), which that call began, is returned without counting
	// another attempt; so is one that the call ?8 (sqlstore.BegunBy; "" for none)
	// began, retried after its answer was lost. ?8 is recorded as the input's begun_by
	// (migration 00013).
	beginSQL = `
		UPDATE inputs SET attempts = attempts + (CASE WHEN (?7 AND attempts > 0) OR (?8 <> '' AND begun_by = ?8) THEN 0 ELSE 1 END),
			begun_by = ?8, updated_at = ?6
		WHERE seq = (
				SELECT seq FROM inputs
				WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND status = 'pending'
				ORDER BY seq LIMIT 1)
			AND EXISTS (SELECT 1 FROM leases
				WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND owner = ?4 AND token = ?5)
		RETURNING id, event_id, kind, payload, status, attempts, seq, created_at`
	// releaseSQL frees thread ?1-?3's lease row (owner NULL, expired at ?6, the
	// signals cleared) if owner ?4 holds it with token ?5 and the thread has no pending
	// input.
	releaseSQL = `
		UPDATE leases
		SET owner = NULL, expires_at = ?6, newest = 0, message_seq = 0, message_by = '', stop_target = '', stop_by = ''
		WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND owner = ?4 AND token = ?5
			AND NOT EXISTS (SELECT 1 FROM inputs
				WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND status = 'pending')`
	// renewSQL extends every lease of owner ?1 until ?2 and returns them with their
	// signals.
	renewSQL = `
		UPDATE leases SET expires_at = ?2 WHERE owner = ?1
		RETURNING team_id, channel_id, thread_ts, token, newest, message_seq, message_by, stop_target, stop_by`
)

// Acquire takes the lease of thread key for owner until ttl (whole milliseconds) from
// now, unless a live lease holds it, in one statement (acquireSQL). It returns the
// lease and the owner of the expired lease it took over ("" when the thread was
// free), or ok false when a live lease, of any owner, holds the thread.
func (s *Leases) Acquire(ctx context.Context, key conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, bool, error) {
	var l conversation.Lease
	var prev string
	var ok bool
	err := s.turnWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		l, prev, ok, err = sqlstore.Acquire(key, owner, ttl, func(ttl time.Duration) *sql.Row {
			now := sqlstore.Now()
			return tx.StmtContext(ctx, s.st.acquire).QueryRowContext(ctx, key.TeamID, key.ChannelID, key.ThreadTS, owner,
				timestamp(now.Add(ttl)), timestamp(now))
		})
		return err
	})
	return l, prev, ok, classify(err)
}

// AcquireBegin takes the lease of thread key as Acquire does and, when it took it,
// begins the thread's first pending input as Begin does, in one transaction on the
// write connection (acquireSQL, then beginSQL): one commit where the two calls made
// two. When it took owner's own lease again (a call whose answer was lost, retried),
// an input begun already is begun without counting another attempt. It returns the
// lease, the previous owner and the input begun (nil when none is pending), or ok
// false, with nothing written, when a live lease holds the thread.
func (s *Leases) AcquireBegin(ctx context.Context, key conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, *conversation.Input, bool, error) {
	var (
		l    conversation.Lease
		prev string
		in   *conversation.Input
		ok   bool
	)
	var undecodable error // the lease is taken all the same
	err := s.turnWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		l, prev, in, ok, err = sqlstore.AcquireBegin(key, owner, ttl, func(ttl time.Duration, token *int64, p *sql.NullString, r *inputRow) (bool, error) {
			now := sqlstore.Now()
			if err := tx.StmtContext(ctx, s.st.acquire).QueryRowContext(ctx, key.TeamID, key.ChannelID, key.ThreadTS, owner,
				timestamp(now.Add(ttl)), timestamp(now)).Scan(token, p); err != nil {
				return false, err
			}
			again := p.Valid && p.String == owner // the lost answer's call began the input
			err := tx.StmtContext(ctx, s.st.begin).QueryRowContext(ctx, key.TeamID, key.ChannelID, key.ThreadTS, owner, *token, timestamp(now), again, "").
				Scan(&r.ID, &r.EventID, &r.Kind, &r.Payload, &r.Status, &r.Attempts, &r.Seq, &r.CreatedAt)
			if errors.Is(err, sql.ErrNoRows) {
				return false, nil // the lease is this transaction's: no input is pending
			}
			return err == nil, err
		})
		return keepUndecodable(err, &undecodable) // with ok false, the statements wrote nothing
	})
	if err != nil {
		return conversation.Lease{}, "", nil, false, classify(err)
	}
	return l, prev, in, ok, undecodable
}

// Begin starts the next input of l's thread, the pending input with the lowest Seq:
// it increments the input's Attempts and returns it, or nil when the thread has no
// pending input. It is one statement (beginSQL), and a second one that tells "no
// pending input" from "lease lost" when the first changed nothing. Errors:
// conversation.ErrLeaseLost.
func (s *Leases) Begin(ctx context.Context, l conversation.Lease) (*conversation.Input, error) {
	k := l.Key
	var (
		in          *conversation.Input
		undecodable error // begun all the same
	)
	err := s.turnWrite(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
		in, err = s.begin(ctx, tx, l, k)
		return keepUndecodable(err, &undecodable)
	})
	return in, cmp.Or(classify(err), undecodable)
}

// begin is Begin's statements, run in tx, its turn write (turnWrite).
func (s *Leases) begin(ctx context.Context, tx *sql.Tx, l conversation.Lease, k conversation.Key) (*conversation.Input, error) {
	return sqlstore.Begin(l, func(r *inputRow) (found, held bool, err error) {
		err = tx.StmtContext(ctx, s.st.begin).QueryRowContext(ctx, k.TeamID, k.ChannelID, k.ThreadTS, l.Owner, l.Token, timestamp(sqlstore.Now()), false, "").
			Scan(&r.ID, &r.EventID, &r.Kind, &r.Payload, &r.Status, &r.Attempts, &r.Seq, &r.CreatedAt)
		r.TeamID, r.ChannelID, r.ThreadTS = k.TeamID, k.ChannelID, k.ThreadTS
		if err == nil {
			return true, true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return false, false, err
		}
		held, err = s.leaseHeld(ctx, tx, l)
		return false, held, err
	})
}

// leaseHeld reports whether l still holds its thread, in tx (leaseHeldSQL).
func (p *pool) leaseHeld(ctx context.Context, tx *sql.Tx, l conversation.Lease) (bool, error) {
	var ok bool
	err := tx.StmtContext(ctx, p.st.leaseHeld).QueryRowContext(ctx, l.Key.TeamID, l.Key.ChannelID, l.Key.ThreadTS, l.Owner, l.Token).Scan(&ok)
	return ok, err
}

// Next begins the next input of l's thread as Begin does, or, when none is pending,
// frees l as Release does, in one turn write (turnWrite): beginSQL, and when it
// begins nothing, releaseSQL, which frees the lease when l holds it and nothing is
// pending. Only when releaseSQL changes nothing too does a third statement tell why
// (l lost, or an input pending, which keeps the lease: released false, and the
// holder calls Next again). So a turn's two calls to the store between its Save and
// the next turn are one. call is the holder's number for the call
// (conversation.Store.Next), recorded as the input's begun_by (sqlstore.BegunBy): a
// retry of it counts no second attempt. Errors: conversation.ErrLeaseLost.
func (s *Leases) Next(ctx context.Context, l conversation.Lease, call int64) (*conversation.Input, bool, error) {
	k := l.Key
	var (
		in          *conversation.Input
		released    bool
		undecodable error // begun all the same
	)
	err := s.turnWrite(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
		in, released, err = sqlstore.Next(l, func(r *inputRow) (found, held, released bool, err error) {
			err = tx.StmtContext(ctx, s.st.begin).QueryRowContext(ctx, k.TeamID, k.ChannelID, k.ThreadTS, l.Owner, l.Token, timestamp(sqlstore.Now()), false, sqlstore.BegunBy(l, call)).
				Scan(&r.ID, &r.EventID, &r.Kind, &r.Payload, &r.Status, &r.Attempts, &r.Seq, &r.CreatedAt)
			r.TeamID, r.ChannelID, r.ThreadTS = k.TeamID, k.ChannelID, k.ThreadTS
			if err == nil || !errors.Is(err, sql.ErrNoRows) {
				return err == nil, err == nil, false, err
			}
			n, err := sqlstore.RowsAffected(tx.StmtContext(ctx, s.st.release).ExecContext(ctx, k.TeamID, k.ChannelID, k.ThreadTS, l.Owner, l.Token,
				timestamp(sqlstore.Now())))
			if err != nil || n == 1 {
				return false, true, n == 1, err
			}
			held, err = s.leaseHeld(ctx, tx, l)
			return false, held, false, err
		})
		return keepUndecodable(err, &undecodable)
	})
	return in, released, cmp.Or(classify(err), undecodable)
}

// Release frees l when its thread has no pending input, and reports whether it did;
// false, keeping the lease, when an input is pending (the holder goes on with it). It
// is one statement (releaseSQL), and a second one that tells "inputs pending" from
// "lease lost" when the first changed nothing. An input enqueued concurrently is
// either seen by releaseSQL or committed after it, and then the enqueuer's Acquire
// finds the lease free (SQLite runs one writer at a time). Errors:
// conversation.ErrLeaseLost.
func (s *Leases) Release(ctx context.Context, l conversation.Lease) (bool, error) {
	k := l.Key
	var ok bool
	err := s.turnWrite(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
		ok, err = sqlstore.Release(l, func() (held, released bool, err error) {
			n, err := sqlstore.RowsAffected(tx.StmtContext(ctx, s.st.release).ExecContext(ctx, k.TeamID, k.ChannelID, k.ThreadTS, l.Owner, l.Token,
				timestamp(sqlstore.Now())))
			if err != nil || n == 1 {
				return true, n == 1, err
			}
			held, err = s.leaseHeld(ctx, tx, l)
			return held, false, err
		})
		return err
	})
	return ok, classify(err)
}

// Abandon frees l whatever is pending, in one statement, so that the next Orphans
// offers its thread: a worker that shuts down hands its threads over. Errors:
// conversation.ErrLeaseLost.
func (s *Leases) Abandon(ctx context.Context, l conversation.Lease) error {
	return classify(sqlstore.Abandon(l, func() (sql.Result, error) {
		return s.write.ExecContext(ctx, `
			UPDATE leases
			SET owner = NULL, expires_at = ?6, newest = 0, message_seq = 0, message_by = '', stop_target = '', stop_by = ''
			WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND owner = ?4 AND token = ?5`,
			l.Key.TeamID, l.Key.ChannelID, l.Key.ThreadTS, l.Owner, l.Token, timestamp(sqlstore.Now()))
	}))
}

// Renew extends every lease of owner that no other owner has taken, expired ones
// included, until ttl (whole milliseconds) from now, and returns their states, in one
// statement (renewSQL). A lease of owner missing from the result was taken over.
func (s *Leases) Renew(ctx context.Context, owner string, ttl time.Duration) ([]conversation.LeaseState, error) {
	var states []conversation.LeaseState
	err := s.turnWrite(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
		states, err = sqlstore.Renew(owner, ttl, func(ttl time.Duration) (*sql.Rows, error) {
			return tx.StmtContext(ctx, s.st.renew).QueryContext(ctx, owner, timestamp(sqlstore.Now().Add(ttl)))
		})
		return err
	})
	return states, classify(err)
}

// Signal records r for the holder of thread key's lease, which reads it with Renew
// (LeaseState.Stop), replacing the request recorded before; it does nothing when no
// lease holds the thread (owner NULL; an expired lease nobody took still has its
// holder, which may renew it).
func (s *Leases) Signal(ctx context.Context, key conversation.Key, r conversation.StopRequest) error {
	return classify(sqlstore.Signal(key, r, func(target, by string) (sql.Result, error) {
		return s.write.ExecContext(ctx, `
			UPDATE leases SET stop_target = ?4, stop_by = ?5
			WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND owner IS NOT NULL`,
			key.TeamID, key.ChannelID, key.ThreadTS, target, by)
	}))
}

// Orphans returns up to limit threads that have pending inputs and no live lease (no
// lease row, a free one, or one expired by now), the thread with the oldest pending
// input (lowest seq) first. It reads inputs_thread_pending, whose entries are the
// pending inputs only, grouped by thread, and looks each thread's lease up by its
// primary key.
func (s *Leases) Orphans(ctx context.Context, limit int) ([]conversation.Key, error) {
	keys, err := sqlstore.Orphans(limit, func(rows *[]sqlstore.KeyRow) error {
		return s.read.SelectContext(ctx, rows, `
			SELECT p.team_id, p.channel_id, p.thread_ts
			FROM (
				SELECT team_id, channel_id, thread_ts, min(seq) AS first
				FROM inputs WHERE status = 'pending'
				GROUP BY team_id, channel_id, thread_ts
			) AS p
			WHERE NOT EXISTS (SELECT 1 FROM leases AS l
				WHERE l.team_id = p.team_id AND l.channel_id = p.channel_id AND l.thread_ts = p.thread_ts
					AND l.owner IS NOT NULL AND l.expires_at > ?1)
			ORDER BY p.first LIMIT ?2`,
			timestamp(sqlstore.Now()), limit)
	})
	return keys, classify(err)
}

// keepUndecodable returns nil for an *conversation.UndecodableError, which it keeps
// in *kept, and err otherwise: the input that does not decode is begun all the same
// (its attempt counted), so its turn write commits (conversation.Store.Begin).
func keepUndecodable(err error, kept *error) error {
	*kept = nil // f may run again (turnWrite)
	if errors.As(err, new(*conversation.UndecodableError)) {
		*kept = err
		return nil
	}
	return err
}
