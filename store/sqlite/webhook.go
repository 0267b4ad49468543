package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Outbox is the webhook outbox (migrations 00009 and 00012) that package webhook delivers from
// (webhook.Outbox). Save writes a turn's events (insertEvents); ClaimEvents,
// EventDone, EventFailed, CloseEvents and DeleteEvents lease, end and delete them,
// each receiver on its own.
type Outbox struct{ *pool }

// The webhook outbox's statements (migration 00009; docs/api.md, "Webhooks"). They run on
// the write connection, one at a time across processes sharing the file, so a claim
// never interleaves with another. Times are by the clock of the process that writes
// them (sqlstore.Now).
const (
	// insertEventSQL adds an event, due at once (?7).
	insertEventSQL = `
		INSERT INTO webhook_events (event_id, team_id, channel_id, thread_ts, type, data, created_at, next_attempt_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
		ON CONFLICT (event_id) DO NOTHING`
	// claimEventsSQL leases to owner ?1 until ?2, for receiver ?4, up to ?5 events
	// that are the oldest event of their thread not yet ended for every receiver
	// (webhook_events.delivered_at) nor for ?4 (webhook_deliveries), due for ?4 at ?3
	// (now) and not leased to a live claim, oldest first. It returns the delivery
	// rows; eventsSQL reads their events.
	claimEventsSQL = `
		INSERT INTO webhook_deliveries AS w (receiver, seq, next_attempt_at, lease_owner, lease_until)
		SELECT ?4, due.seq, ?3, ?1, ?2 FROM (
			WITH pending AS (
				SELECT e.seq, e.team_id, e.channel_id, e.thread_ts
				FROM webhook_events AS e
				LEFT JOIN webhook_deliveries AS d ON d.seq = e.seq AND d.receiver = ?4
				WHERE e.delivered_at IS NULL AND d.delivered_at IS NULL
			), heads AS (
				SELECT min(seq) AS seq FROM pending GROUP BY team_id, channel_id, thread_ts
			)
			SELECT h.seq FROM heads AS h
			LEFT JOIN webhook_deliveries AS d ON d.seq = h.seq AND d.receiver = ?4
			WHERE d.seq IS NULL OR (d.next_attempt_at <= ?3 AND (d.lease_until IS NULL OR d.lease_until <= ?3))
			ORDER BY h.seq LIMIT ?5
		) AS due WHERE true
		ON CONFLICT (receiver, seq) DO UPDATE SET lease_owner = excluded.lease_owner, lease_until = excluded.lease_until
			WHERE w.delivered_at IS NULL AND w.next_attempt_at <= ?3 AND (w.lease_until IS NULL OR w.lease_until <= ?3)
		RETURNING seq, attempts, last_error`
	// eventsSQL reads the events whose seqs are in the JSON array ?1, with a
	// placeholder attempt count and error (ClaimEvents sets them).
	eventsSQL = `
		SELECT seq, team_id, channel_id, thread_ts, data, 0, '' FROM webhook_events
		WHERE seq IN (SELECT value FROM json_each(?1))`
)

// insertEvents writes events in tx (Save's transaction); an event whose id is stored
// already is skipped.
func insertEvents(ctx context.Context, tx *sql.Tx, events []conversation.Event) error {
	for _, e := range events {
		data, err := json.Marshal(e.Data)
		if err != nil {
			return fmt.Errorf("encode event %s: %w", e.Data.ID, err)
		}
		if _, err := tx.ExecContext(ctx, insertEventSQL, e.Data.ID, e.Key.TeamID, e.Key.ChannelID, e.Key.ThreadTS,
			e.Data.Type, string(sqlstore.JSON(data)), timestamp(e.Data.Time)); err != nil {
			return fmt.Errorf("insert event %s: %w", e.Data.ID, err)
		}
	}
	return nil
}

// ClaimEvents leases up to limit due events to owner for ttl, for receiver: the
// oldest event of each thread not yet ended for receiver, when it is due for receiver
// and no live claim holds it, oldest first (claimEventsSQL). A later event of a
// thread waits until receiver's delivery of the earlier ones ended; other receivers
// do not wait for it.
func (s *Outbox) ClaimEvents(ctx context.Context, receiver, owner string, ttl time.Duration, limit int) ([]conversation.Event, error) {
	now := sqlstore.Now()
	type state struct {
		attempts int
		lastErr  string
	}
	claimed, seqs, err := func() (map[int64]state, []int64, error) {
		rows, err := s.write.QueryContext(ctx, claimEventsSQL, owner, timestamp(now.Add(ttl)), timestamp(now), receiver, limit)
		if err != nil {
			return nil, nil, err
		}
		defer rows.Close()
		claimed, seqs := map[int64]state{}, []int64(nil)
		for rows.Next() {
			var (
				seq int64
				st  state
			)
			if err := rows.Scan(&seq, &st.attempts, &st.lastErr); err != nil {
				return nil, nil, err
			}
			claimed[seq], seqs = st, append(seqs, seq)
		}
		return claimed, seqs, rows.Err()
	}()
	if err != nil {
		return nil, classify(fmt.Errorf("claim webhook events: %w", err))
	}
	if len(seqs) == 0 {
		return nil, nil
	}
	list, _ := json.Marshal(seqs)
	rows, err := s.write.QueryContext(ctx, eventsSQL, string(list))
	if err != nil {
		return nil, classify(fmt.Errorf("read claimed webhook events: %w", err))
	}
	events, err := sqlstore.ScanEvents(rows)
	if err != nil {
		return nil, classify(fmt.Errorf("read claimed webhook events: %w", err))
	}
	for i := range events {
		st := claimed[events[i].Seq]
		events[i].Attempts, events[i].LastError = st.attempts, st.lastErr
	}
	return events, nil
}

// EventDone ends receiver's delivery of the event seq (one more attempt) and frees
// its claim, so the thread's next event becomes receiver's head: delivered when
// lastErr is "", abandoned after too many failures otherwise (lastErr kept). It does
// nothing when owner's claim is not the delivery's last (its lease expired and
// another replica claimed it), so that claim is not freed under its holder.
func (s *Outbox) EventDone(ctx context.Context, receiver string, seq int64, owner, lastErr string) error {
	_, err := s.write.ExecContext(ctx, `
		UPDATE webhook_deliveries SET delivered_at = ?2, attempts = attempts + 1, lease_owner = NULL, lease_until = NULL,
			last_error = ?3
		WHERE receiver = ?5 AND seq = ?1 AND lease_owner = ?4`, seq, timestamp(sqlstore.Now()), sqlstore.Text(lastErr), owner, receiver)
	if err != nil {
		return classify(fmt.Errorf("end webhook event %d: %w", seq, err))
	}
	return nil
}

// EventFailed records a failed delivery of the event seq to receiver by owner's
// claim (one more attempt, and lastErr; nothing unless that claim is the delivery's
// last, as EventDone) and makes it due again for receiver after retryIn, freeing
// its claim.
func (s *Outbox) EventFailed(ctx context.Context, receiver string, seq int64, owner string, retryIn time.Duration, lastErr string) error {
	_, err := s.write.ExecContext(ctx, `
		UPDATE webhook_deliveries SET attempts = attempts + 1, last_error = ?2, next_attempt_at = ?3,
			lease_owner = NULL, lease_until = NULL
		WHERE receiver = ?5 AND seq = ?1 AND lease_owner = ?4`,
		seq, sqlstore.Text(lastErr), timestamp(sqlstore.Now().Add(retryIn)), owner, receiver)
	if err != nil {
		return classify(fmt.Errorf("record webhook event %d failure: %w", seq, err))
	}
	return nil
}

// CloseEvents ends the events whose delivery ended (delivered or abandoned) for
// every one of receivers (none when receivers is empty), and returns how many;
// DeleteEvents deletes them later.
func (s *Outbox) CloseEvents(ctx context.Context, receivers []string) (int, error) {
	if len(receivers) == 0 {
		return 0, nil // no receiver: nothing was delivered
	}
	list, _ := json.Marshal(receivers)
	n, err := sqlstore.RowsAffected(s.write.ExecContext(ctx, `
		UPDATE webhook_events AS e SET delivered_at = ?2
		WHERE e.delivered_at IS NULL AND (SELECT count(*) FROM webhook_deliveries AS d
			WHERE d.seq = e.seq AND d.delivered_at IS NOT NULL AND d.receiver IN (SELECT value FROM json_each(?1)))
			= (SELECT count(DISTINCT value) FROM json_each(?1))`, string(list), timestamp(sqlstore.Now())))
	if err != nil {
		return 0, classify(fmt.Errorf("close webhook events: %w", err))
	}
	return int(n), nil
}

// DeleteEvents deletes the events whose delivery ended (delivered or abandoned)
// for every receiver before before, with their deliveries, and returns how many.
func (s *Outbox) DeleteEvents(ctx context.Context, before time.Time) (int, error) {
	n, err := sqlstore.RowsAffected(s.write.ExecContext(ctx, `
		DELETE FROM webhook_events WHERE delivered_at IS NOT NULL AND delivered_at < ?`, timestamp(before)))
	if err != nil {
		return 0, classify(fmt.Errorf("delete webhook events: %w", err))
	}
	return int(n), nil
}
