package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Leases are the threads' leases (docs/architecture.md, "Durable turns"):
// conversation.Store's Acquire, AcquireBegin, Begin, Next, Release, Abandon, Renew,
// Signal and Orphans.
type Leases struct{ *pool }

// The lease statements (migration 00005; docs/architecture.md, "Durable turns"). A
// lease expires by the database's clock: now() plus a ttl sent in whole milliseconds
// ($n * interval '1 millisecond'), so that replicas whose clocks disagree agree on it.
// now() is the time the statement's transaction started, and each of these
// statements is a transaction of its own.

// acquireSQL takes thread $1-$3 for owner $4 until $5 milliseconds from now, in one
// statement: it inserts the lease row with token 1, or, when the row exists, takes
// it only if it is free, expired, or owner $4's own (an earlier Acquire whose answer
// the caller never got: the DO UPDATE's WHERE; otherwise no row),
// incrementing the token, keeping the previous owner (NULL when it was free) and
// clearing the signals. ON CONFLICT DO UPDATE locks the row's newest version before
// it checks the WHERE, so of concurrent Acquires of one thread, on any replica,
// exactly one takes it; the others wait for the winner's commit and find its live
// lease.
const acquireSQL = `
INSERT INTO leases AS l (team_id, channel_id, thread_ts, owner, token, expires_at, created_at)
VALUES ($1::text, $2::text, $3::text, $4::text, 1, now() + $5::bigint * interval '1 millisecond', now())
ON CONFLICT (team_id, channel_id, thread_ts) DO UPDATE SET
	owner = EXCLUDED.owner, token = l.token + 1, expires_at = EXCLUDED.expires_at, prev_owner = l.owner,
	newest = 0, message_seq = 0, message_by = '', stop_target = '', stop_by = ''
WHERE l.owner IS NULL OR l.expires_at <= now() OR l.owner = EXCLUDED.owner
RETURNING token, prev_owner`

// Acquire takes the lease of thread key for owner until ttl (whole milliseconds) from
// now by the database's clock, unless a live lease holds it, in one statement
// (acquireSQL). It returns the lease and the owner of the expired lease it took over
// ("" when the thread was free), or ok false when a live lease of another owner holds
// the thread.
func (s *Leases) Acquire(ctx context.Context, key conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, bool, error) {
	l, prev, ok, err := sqlstore.Acquire(key, owner, ttl, func(ttl time.Duration) *sql.Row {
		return s.acquireStmt.QueryRowContext(ctx, key.TeamID, key.ChannelID, key.ThreadTS, owner, ttl.Milliseconds())
	})
	return l, prev, ok, classify(err)
}

// acquireBeginSQL is acquireSQL and beginSQL in one statement (one round trip and one
// commit for a worker's first call on a thread): acquired takes the lease as
// acquireSQL does; only when it did, free locks the thread's first pending input in
// the statement's snapshot (first) and next begins it, re-checking status = 'pending'
// on the row's newest version. acquired locks the lease row before free locks an
// input row, the other order from Save's (input, then lease): so free skips a row
// another writer holds (SKIP LOCKED on that one row, never passing on to the next
// input) rather than wait for it, and begins nothing; the holder's Next then waits
// for it, holding no lease row lock. When acquired took owner $4's own lease again
// (prev_owner: the call that took it was retried, its answer lost), next returns an
// input begun already (attempts > 0), which that call began, without counting another
// attempt (had that call skipped the row, locked, and begun nothing, the attempt this
// one makes of an input a former holder began goes uncounted). Parameters:
// acquireSQL's, and $6 the time. The main SELECT returns no row when the lease was
// not taken; else its token, the previous owner, whether an input was begun and the
// input (columns empty when none).
const acquireBeginSQL = `
WITH acquired AS (
	INSERT INTO leases AS l (team_id, channel_id, thread_ts, owner, token, expires_at, created_at)
	VALUES ($1::text, $2::text, $3::text, $4::text, 1, now() + $5::bigint * interval '1 millisecond', now())
	ON CONFLICT (team_id, channel_id, thread_ts) DO UPDATE SET
		owner = EXCLUDED.owner, token = l.token + 1, expires_at = EXCLUDED.expires_at, prev_owner = l.owner,
		newest = 0, message_seq = 0, message_by = '', stop_target = '', stop_by = ''
	WHERE l.owner IS NULL OR l.expires_at <= now() OR l.owner = EXCLUDED.owner
	RETURNING token, prev_owner
),
first AS (
	SELECT id FROM inputs
	WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND status = 'pending'
	ORDER BY seq LIMIT 1
),
free AS (
	SELECT id FROM inputs
	WHERE id = (SELECT id FROM first) AND EXISTS (SELECT FROM acquired)
	FOR UPDATE SKIP LOCKED
),
next AS (
	UPDATE inputs SET updated_at = $6::timestamptz,
		attempts = attempts + CASE WHEN attempts > 0 AND (SELECT prev_owner FROM acquired) = $4::text THEN 0 ELSE 1 END
	WHERE id = (SELECT id FROM free) AND status = 'pending'
	RETURNING id, event_id, kind, payload, status, attempts, seq, created_at
)
SELECT a.token, a.prev_owner, n.id IS NOT NULL, coalesce(n.id, ''), coalesce(n.event_id, ''),
	coalesce(n.kind, ''), n.payload, coalesce(n.status, ''), coalesce(n.attempts, 0), coalesce(n.seq, 0),
	coalesce(n.created_at, 'epoch')
FROM acquired AS a LEFT JOIN next AS n ON true`

// AcquireBegin takes the lease of thread key as Acquire does and, when it took it,
// begins the thread's first pending input as Begin does, in one statement
// (acquireBeginSQL). It returns the lease, the previous owner and the input begun
// (nil when none is pending, or another writer held its row), or ok false when a live
// lease of another owner holds the thread. When it took owner's own lease again (a
// call whose answer was lost, retried), an input begun already is begun without
// counting another attempt.
func (s *Leases) AcquireBegin(ctx context.Context, key conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, *conversation.Input, bool, error) {
	l, prev, in, ok, err := sqlstore.AcquireBegin(key, owner, ttl, func(ttl time.Duration, token *int64, p *sql.NullString, r *inputRow) (found bool, err error) {
		err = s.acquireBeginStmt.QueryRowContext(ctx, key.TeamID, key.ChannelID, key.ThreadTS, owner, ttl.Milliseconds(), sqlstore.Now()).
			Scan(token, p, &found, &r.ID, &r.EventID, &r.Kind, &r.Payload, &r.Status, &r.Attempts, &r.Seq, &r.CreatedAt)
		return found, err
	})
	return l, prev, in, ok, classify(err)
}

// beginSQL starts the next input of a lease's thread in one statement: next
// increments the attempts of the thread's pending input with the lowest seq (the
// first entry of inputs_thread_pending) if lease finds that owner $4 still holds the
// thread with token $5 (expired or not: the token is what fences). The main SELECT
// always returns one row: whether the lease holds, and the input (its columns empty
// when there was none), so that "no pending input" and "lease lost" need no second
// round trip. The outer status = 'pending' is re-checked on the row's newest version
// if a concurrent writer changed it. The lease row is read, not locked: a takeover
// that commits meanwhile lets both holders begin the input, which counts one attempt
// too many, and the former holder's Save or Finish of it then fails. Parameters: $1-$3
// the thread, $4 and $5 the lease's owner and token, $6 the time.
const beginSQL = `
WITH lease AS (
	SELECT FROM leases
	WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND owner = $4::text AND token = $5::bigint
),
next AS (
	UPDATE inputs SET attempts = attempts + 1, updated_at = $6::timestamptz
	WHERE id = (
			SELECT id FROM inputs
			WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND status = 'pending'
			ORDER BY seq LIMIT 1)
		AND status = 'pending' AND EXISTS (SELECT FROM lease)
	RETURNING id, event_id, kind, payload, status, attempts, seq, created_at
)
SELECT EXISTS (SELECT FROM lease), n.id IS NOT NULL, coalesce(n.id, ''), coalesce(n.event_id, ''),
	coalesce(n.kind, ''), n.payload, coalesce(n.status, ''), coalesce(n.attempts, 0), coalesce(n.seq, 0),
	coalesce(n.created_at, 'epoch')
FROM (VALUES (1)) AS one LEFT JOIN next AS n ON true`

// Begin starts the next input of l's thread, the pending input with the lowest Seq:
// it increments the input's Attempts and returns it, or nil when the thread has no
// pending input, in one statement (beginSQL). Errors: conversation.ErrLeaseLost.
func (s *Leases) Begin(ctx context.Context, l conversation.Lease) (*conversation.Input, error) {
	in, err := sqlstore.Begin(l, func(r *inputRow) (found, held bool, err error) {
		err = s.beginStmt.QueryRowContext(ctx, l.Key.TeamID, l.Key.ChannelID, l.Key.ThreadTS, l.Owner, l.Token, sqlstore.Now()).
			Scan(&held, &found, &r.ID, &r.EventID, &r.Kind, &r.Payload, &r.Status, &r.Attempts, &r.Seq, &r.CreatedAt)
		r.TeamID, r.ChannelID, r.ThreadTS = l.Key.TeamID, l.Key.ChannelID, l.Key.ThreadTS
		return found, held, err
	})
	return in, classify(err)
}

// releaseSQL frees a lease in one statement, if owner $4 still holds thread $1-$3 with
// token $5 and the thread has no pending input: released sets owner to NULL, the
// expiry to now and clears the signals (the row stays, keeping the token). The main
// SELECT returns whether the lease held (lease) and whether it was freed.
//
// An input enqueued concurrently is never left pending behind a freed lease: either
// this statement sees it, and keeps the lease for its holder to go on, or the
// enqueuer's Acquire, which follows its Enqueue, finds the lease free. In READ
// COMMITTED the statement reads inputs (NOT EXISTS) in the snapshot it starts with,
// and locks the lease row a moment later; Enqueue writes the lease row (enqueued + 1)
// in the transaction that inserts the input. So for an input that commits after that
// snapshot:
//
//   - if Enqueue wrote the row before released locks it, released waits for Enqueue
//     to commit (or finds it committed) and re-checks its WHERE on the row's newest
//     version, where enqueued no longer equals what lease read in the snapshot: it
//     frees nothing, and the holder goes on to Begin, which sees the input;
//   - otherwise Enqueue's write of the row waits for released's lock, so Enqueue
//     commits after the lease is freed, and the enqueuer's Acquire comes later still
//     and finds it free.
//
// Checking NOT EXISTS alone would leave a gap: an Enqueue and the enqueuer's whole
// Acquire (which finds the lease held) could both fall between the snapshot and the
// lock.
const releaseSQL = `
WITH lease AS (
	SELECT enqueued FROM leases
	WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND owner = $4::text AND token = $5::bigint
),
released AS (
	UPDATE leases
	SET owner = NULL, expires_at = now(), newest = 0, message_seq = 0, message_by = '', stop_target = '', stop_by = ''
	WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND owner = $4::text AND token = $5::bigint
		AND enqueued = (SELECT enqueued FROM lease)
		AND NOT EXISTS (SELECT FROM inputs
			WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND status = 'pending')
	RETURNING true
)
SELECT EXISTS (SELECT FROM lease), EXISTS (SELECT FROM released)`

// Release frees l when its thread has no pending input, in one statement
// (releaseSQL), and reports whether it did: false, keeping the lease, when an input is
// pending, or was enqueued while Release ran (the holder goes on with it). Errors:
// conversation.ErrLeaseLost.
func (s *Leases) Release(ctx context.Context, l conversation.Lease) (bool, error) {
	ok, err := sqlstore.Release(l, func() (held, released bool, err error) {
		err = s.releaseStmt.QueryRowContext(ctx, l.Key.TeamID, l.Key.ChannelID, l.Key.ThreadTS, l.Owner, l.Token).
			Scan(&held, &released)
		return held, released, err
	})
	return ok, classify(err)
}

// nextSQL is beginSQL and releaseSQL in one statement (so one round trip and one
// commit between two turns): next begins the thread's pending input with the lowest
// seq as beginSQL does, and released frees the lease as releaseSQL does (with its
// guard against a concurrent Enqueue, enqueued) only when next began nothing. Both
// read the statement's one snapshot, so released's NOT EXISTS agrees with the input
// next looked for; when next found one whose row a concurrent writer changed (the
// re-checked status), the input is pending in the snapshot and released frees
// nothing either: the holder calls Next again. next locks an input row only when it
// begins it, and released the lease row only when next began nothing, so the
// statement takes no lock that Save (input, then lease) could wait on in the other
// order. The main SELECT returns whether the lease held, whether an input was begun,
// the input (its columns empty when none) and whether the lease was freed.
// Parameters: beginSQL's, and $7 the call (sqlstore.BegunBy; "" for none), recorded
// as the input's begun_by: a call retried after its answer was lost finds its own
// name there and counts no second attempt.
const nextSQL = `
WITH lease AS (
	SELECT enqueued FROM leases
	WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND owner = $4::text AND token = $5::bigint
),
next AS (
	UPDATE inputs SET updated_at = $6::timestamptz, begun_by = $7::text,
		attempts = attempts + CASE WHEN $7::text <> '' AND begun_by = $7::text THEN 0 ELSE 1 END
	WHERE id = (
			SELECT id FROM inputs
			WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND status = 'pending'
			ORDER BY seq LIMIT 1)
		AND status = 'pending' AND EXISTS (SELECT FROM lease)
	RETURNING id, event_id, kind, payload, status, attempts, seq, created_at
),
released AS (
	UPDATE leases
	SET owner = NULL, expires_at = now(), newest = 0, message_seq = 0, message_by = '', stop_target = '', stop_by = ''
	WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND owner = $4::text AND token = $5::bigint
		AND enqueued = (SELECT enqueued FROM lease)
		AND NOT EXISTS (SELECT FROM next)
		AND NOT EXISTS (SELECT FROM inputs
			WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND status = 'pending')
	RETURNING true
)
SELECT EXISTS (SELECT FROM lease), n.id IS NOT NULL, coalesce(n.id, ''), coalesce(n.event_id, ''),
	coalesce(n.kind, ''), n.payload, coalesce(n.status, ''), coalesce(n.attempts, 0), coalesce(n.seq, 0),
	coalesce(n.created_at, 'epoch'), EXISTS (SELECT FROM released)
FROM (VALUES (1)) AS one LEFT JOIN next AS n ON true`

// Next begins the next input of l's thread as Begin does, or, when none is pending,
// frees l as Release does, in one statement (nextSQL). It returns nil and released
// false, keeping the lease, when an input was enqueued or changed while it ran (the
// holder calls Next again). call is the holder's number for the call
// (conversation.Store.Next), recorded as the input's begun_by (sqlstore.BegunBy): a
// retry of it counts no second attempt. Errors: conversation.ErrLeaseLost.
func (s *Leases) Next(ctx context.Context, l conversation.Lease, call int64) (*conversation.Input, bool, error) {
	in, released, err := sqlstore.Next(l, func(r *inputRow) (found, held, released bool, err error) {
		err = s.nextStmt.QueryRowContext(ctx, l.Key.TeamID, l.Key.ChannelID, l.Key.ThreadTS, l.Owner, l.Token, sqlstore.Now(), sqlstore.BegunBy(l, call)).
			Scan(&held, &found, &r.ID, &r.EventID, &r.Kind, &r.Payload, &r.Status, &r.Attempts, &r.Seq, &r.CreatedAt, &released)
		r.TeamID, r.ChannelID, r.ThreadTS = l.Key.TeamID, l.Key.ChannelID, l.Key.ThreadTS
		return found, held, released, err
	})
	return in, released, classify(err)
}

// Abandon frees l whatever is pending, in one statement, so that the next Orphans of
// any worker offers its thread: a worker that shuts down hands its threads over.
// Errors: conversation.ErrLeaseLost.
func (s *Leases) Abandon(ctx context.Context, l conversation.Lease) error {
	return classify(sqlstore.Abandon(l, func() (sql.Result, error) {
		return s.db.ExecContext(ctx, `
			UPDATE leases
			SET owner = NULL, expires_at = now(), newest = 0, message_seq = 0, message_by = '', stop_target = '', stop_by = ''
			WHERE team_id = $1 AND channel_id = $2 AND thread_ts = $3 AND owner = $4 AND token = $5`,
			l.Key.TeamID, l.Key.ChannelID, l.Key.ThreadTS, l.Owner, l.Token)
	}))
}

// renewSQL extends every lease of owner $1 until $2 milliseconds from now and returns
// them with their signals, in one statement that walks leases_owner. It changes no
// indexed column, so the updates stay HOT.
//
// mine locks the rows first, in the order of their threads, the order in which the
// intake's batch (enqueueBatchSQL) takes the lease rows of its threads: an UPDATE
// alone locks them in the order it finds them, and a batch holding one row while
// waiting for another the renewal holds, as it waits for the first, is a deadlock.
const renewSQL = `
WITH mine AS (
	SELECT team_id, channel_id, thread_ts FROM leases
	WHERE owner = $1::text
	ORDER BY team_id, channel_id, thread_ts
	FOR UPDATE
)
UPDATE leases l SET expires_at = now() + $2::bigint * interval '1 millisecond'
FROM mine m
WHERE l.team_id = m.team_id AND l.channel_id = m.channel_id AND l.thread_ts = m.thread_ts AND l.owner = $1::text
RETURNING l.team_id, l.channel_id, l.thread_ts, l.token, l.newest, l.message_seq, l.message_by, l.stop_target, l.stop_by`

// Renew extends every lease of owner that no other owner has taken, expired ones
// included, until ttl (whole milliseconds) from now by the database's clock, and
// returns their states, in one statement (renewSQL). A lease of owner missing from
// the result was taken over. It runs on the heartbeat's own connection (RenewConns),
// never waiting for one behind the turns' statements.
func (s *Leases) Renew(ctx context.Context, owner string, ttl time.Duration) ([]conversation.LeaseState, error) {
	states, err := sqlstore.Renew(owner, ttl, func(ttl time.Duration) (*sql.Rows, error) {
		return s.renewStmt.QueryContext(ctx, owner, ttl.Milliseconds())
	})
	return states, classify(err)
}

// Signal records r for the holder of thread key's lease, which reads it with Renew
// (LeaseState.Stop), replacing the request recorded before; it does nothing when no
// lease holds the thread (owner NULL; an expired lease nobody took still has its
// holder, which may renew it).
func (s *Leases) Signal(ctx context.Context, key conversation.Key, r conversation.StopRequest) error {
	return classify(sqlstore.Signal(key, r, func(target, by string) (sql.Result, error) {
		return s.db.ExecContext(ctx, `
			UPDATE leases SET stop_target = $4, stop_by = $5
			WHERE team_id = $1 AND channel_id = $2 AND thread_ts = $3 AND owner IS NOT NULL`,
			key.TeamID, key.ChannelID, key.ThreadTS, target, by)
	}))
}

// Orphans returns up to limit threads that have pending inputs and no live lease (no
// lease row, a free one, or one expired by the database's clock), the thread with the
// oldest pending input (lowest seq) first. It reads inputs_thread_pending, whose
// entries are the pending inputs only, grouped by thread, and looks each thread's
// lease up by its primary key: its cost grows with the number of pending inputs, the
// inputs waiting to run, not with the inputs stored.
func (s *Leases) Orphans(ctx context.Context, limit int) ([]conversation.Key, error) {
	keys, err := sqlstore.Orphans(limit, func(rows *[]sqlstore.KeyRow) error {
		return s.db.SelectContext(ctx, rows, `
			SELECT p.team_id, p.channel_id, p.thread_ts
			FROM (
				SELECT team_id, channel_id, thread_ts, min(seq) AS first
				FROM inputs WHERE status = 'pending'
				GROUP BY team_id, channel_id, thread_ts
			) AS p
			WHERE NOT EXISTS (SELECT FROM leases AS l
				WHERE l.team_id = p.team_id AND l.channel_id = p.channel_id AND l.thread_ts = p.thread_ts
					AND l.owner IS NOT NULL AND l.expires_at > now())
			ORDER BY p.first LIMIT $1`,
			limit)
	})
	return keys, classify(err)
}
