package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// enqueueBatchSQL is enqueueSQL for many inputs in one statement (one round trip,
// one transaction), the intake's group commit (EnqueueBatch):
//
//   - input is the inputs, from the arrays $1-$12 (one element per input, in the
//     order of the arrays: a thread's inputs in their order; no id twice).
//   - ins inserts them as pending in that order, so that a thread's inputs take
//     increasing seqs (the identity is drawn as the sorted rows are inserted), skipping
//     the ids that exist (ON CONFLICT DO NOTHING).
//   - thread sums up each thread's new inputs: how many, the highest seq, and the
//     highest seq of a person's message with its author.
//   - lease inserts or updates each thread's lease row once, in the order of the
//     threads (two batches never wait for each other's rows in a cycle), as
//     enqueueSQL does for each of its new inputs in turn: enqueued + their number,
//     and, when the lease is held, newest, message_seq and message_by as the last of
//     them leaves them.
//
// It returns the ids inserted. Parameters: $1 ids, $2 event_ids, $3-$5 the keys, $6
// kinds, $7 payloads (JSON or NULL), $8 created_at, $9 updated_at, $10 whether each
// is a person's message, $11 its author, $12 the inputs' authors (user_id).
const enqueueBatchSQL = `
WITH input AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[],
		$8::timestamptz[], $9::timestamptz[], $10::boolean[], $11::text[], $12::text[])
		WITH ORDINALITY AS u(id, event_id, team_id, channel_id, thread_ts, kind, payload, created_at, updated_at,
			message, message_by, user_id, ord)
),
ins AS (
	INSERT INTO inputs (id, event_id, team_id, channel_id, thread_ts, kind, payload, status, created_at, updated_at, user_id)
	SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, 'pending', created_at, updated_at, user_id
	FROM input ORDER BY ord
	ON CONFLICT (id) DO NOTHING
	RETURNING id, seq
),
thread AS (
	SELECT i.team_id, i.channel_id, i.thread_ts, count(*) AS enqueued, max(ins.seq) AS newest,
		max(ins.seq) FILTER (WHERE i.message) AS message_seq,
		(array_agg(i.message_by ORDER BY ins.seq DESC) FILTER (WHERE i.message))[1] AS message_by
	FROM ins JOIN input i USING (id)
	GROUP BY i.team_id, i.channel_id, i.thread_ts
),
lease AS (
	INSERT INTO leases AS l (team_id, channel_id, thread_ts, token, expires_at, created_at, enqueued)
	SELECT team_id, channel_id, thread_ts, 0, now(), now(), enqueued FROM thread
	ORDER BY team_id, channel_id, thread_ts
	ON CONFLICT (team_id, channel_id, thread_ts) DO UPDATE SET
		enqueued = l.enqueued + EXCLUDED.enqueued,
		newest = CASE WHEN l.owner IS NULL THEN l.newest
			ELSE greatest(l.newest, (SELECT t.newest FROM thread t
				WHERE t.team_id = l.team_id AND t.channel_id = l.channel_id AND t.thread_ts = l.thread_ts)) END,
		message_by = coalesce((SELECT t.message_by FROM thread t
			WHERE l.owner IS NOT NULL AND t.message_seq > l.message_seq
				AND t.team_id = l.team_id AND t.channel_id = l.channel_id AND t.thread_ts = l.thread_ts), l.message_by),
		message_seq = CASE WHEN l.owner IS NULL THEN l.message_seq
			ELSE greatest(l.message_seq, (SELECT t.message_seq FROM thread t
				WHERE t.team_id = l.team_id AND t.channel_id = l.channel_id AND t.thread_ts = l.thread_ts)) END
)
SELECT id FROM ins`

// EnqueueBatch stores ins as Enqueue does each, in one statement (enqueueBatchSQL) on
// the intake's connections (IntakeConns), so that one round trip and one commit
// store a burst: either every input is stored (or found a duplicate) or none is. A
// thread's inputs keep their order in ins. inserted[i] reports whether ins[i] was
// new (false for an id found earlier in ins). Each input is checked, a repeated one
// too: one that cannot be stored fails the batch.
func (s *Inputs) EnqueueBatch(ctx context.Context, ins []conversation.Input) (inserted []bool, err error) {
	inserted = make([]bool, len(ins))
	var b batchColumns
	first := make(map[string]int, len(ins)) // an id's index in ins
	for _, i := range sqlstore.ByThread(ins) {
		_, dup := first[ins[i].ID]
		add := b.add
		if dup {
			add = repeated // checked as SQLite's EnqueueBatch checks it, then skipped
		}
		if _, err := sqlstore.Enqueue(ins[i], add); err != nil {
			return nil, classify(err)
		}
		if !dup {
			first[ins[i].ID] = i
		}
	}
	if len(first) == 0 {
		return inserted, nil
	}
	rows, err := s.intakeBatchStmt.QueryContext(ctx, b.args()...)
	if err != nil {
		return nil, classify(fmt.Errorf("enqueue %d inputs: %w", len(first), err))
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, classify(fmt.Errorf("enqueue %d inputs: %w", len(first), err))
		}
		inserted[first[id]] = true
	}
	if err := rows.Err(); err != nil {
		return nil, classify(fmt.Errorf("enqueue %d inputs: %w", len(first), err))
	}
	return inserted, nil
}

// repeated is EnqueueBatch's insert for an input whose id came earlier in the batch:
// it inserts nothing.
func repeated(sqlstore.NewInput) (bool, error) { return false, nil }

// batchColumns are the columns of a batch's inputs, as enqueueBatchSQL's arrays.
type batchColumns struct {
	ids, eventIDs, teams, channels, threads, kinds, messageBy, users []string
	payloads                                                         []sql.NullString
	created, updated                                                 []string
	message                                                          []bool
}

// add appends r's columns; it implements sqlstore.Enqueue's insert, which the
// statement does later for the whole batch.
func (b *batchColumns) add(r sqlstore.NewInput) (bool, error) {
	b.ids = append(b.ids, r.ID)
	b.eventIDs = append(b.eventIDs, r.EventID)
	b.teams = append(b.teams, r.Key.TeamID)
	b.channels = append(b.channels, r.Key.ChannelID)
	b.threads = append(b.threads, r.Key.ThreadTS)
	b.kinds = append(b.kinds, r.Kind)
	b.payloads = append(b.payloads, sql.NullString{String: string(r.Payload), Valid: len(r.Payload) > 0})
	b.created = append(b.created, r.Created.Format(time.RFC3339Nano))
	b.updated = append(b.updated, r.Now.Format(time.RFC3339Nano))
	b.message = append(b.message, r.Message)
	b.messageBy = append(b.messageBy, r.MessageBy)
	b.users = append(b.users, r.UserID)
	return true, nil
}

// args returns enqueueBatchSQL's parameters.
func (b *batchColumns) args() []any {
	return []any{pq.Array(b.ids), pq.Array(b.eventIDs), pq.Array(b.teams), pq.Array(b.channels), pq.Array(b.threads),
		pq.Array(b.kinds), pq.Array(b.payloads), pq.Array(b.created), pq.Array(b.updated), pq.Array(b.message),
		pq.Array(b.messageBy), pq.Array(b.users)}
}
