package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Outbox is the webhook outbox (migrations 00009 and 00012) that package webhook delivers from
// (webhook.Outbox). Save writes a turn's events (insertEvents); ClaimEvents,
// EventDone, EventFailed, CloseEvents and DeleteEvents lease, end and delete them,
// each receiver on its own.
type Outbox struct{ *pool }

// The webhook outbox's statements (migration 00009; docs/api.md, "Webhooks"). Leases and
// retry times are by the database's clock, so replicas whose clocks disagree agree
// on them.
const (
	// insertEventSQL adds an event, due at once.
	insertEventSQL = `
		INSERT INTO webhook_events (event_id, team_id, channel_id, thread_ts, type, data, created_at, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $7)
		ON CONFLICT (event_id) DO NOTHING`
	// claimEventsSQL leases to owner $1 for $2 milliseconds, for receiver $4, up to
	// $3 events that are the oldest event of their thread not yet ended for every
	// receiver (webhook_events.delivered_at) nor for $4 (webhook_deliveries), due for
	// $4 and not leased to another live claim, oldest first. A concurrent claim that
	// inserted the same delivery row makes ON CONFLICT wait for it and then re-check
	// the row's newest version, so two replicas never both take one.
	claimEventsSQL = `
		WITH pending AS (
			SELECT e.seq, e.team_id, e.channel_id, e.thread_ts
			FROM webhook_events AS e
			LEFT JOIN webhook_deliveries AS d ON d.seq = e.seq AND d.receiver = $4
			WHERE e.delivered_at IS NULL AND d.delivered_at IS NULL
		), heads AS (
			SELECT DISTINCT ON (team_id, channel_id, thread_ts) seq FROM pending
			ORDER BY team_id, channel_id, thread_ts, seq
		), due AS (
			SELECT h.seq FROM heads AS h
			LEFT JOIN webhook_deliveries AS d ON d.seq = h.seq AND d.receiver = $4
			WHERE d.seq IS NULL OR (d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until <= now()))
			ORDER BY h.seq LIMIT $3
		), claimed AS (
			INSERT INTO webhook_deliveries AS w (receiver, seq, next_attempt_at, lease_owner, lease_until)
			SELECT $4, seq, now(), $1, now() + $2::bigint * interval '1 millisecond' FROM due
			ON CONFLICT (receiver, seq) DO UPDATE SET lease_owner = excluded.lease_owner, lease_until = excluded.lease_until
				WHERE w.delivered_at IS NULL AND w.next_attempt_at <= now() AND (w.lease_until IS NULL OR w.lease_until <= now())
			RETURNING w.seq, w.attempts, w.last_error
		)
		SELECT e.seq, e.team_id, e.channel_id, e.thread_ts, e.data, c.attempts, c.last_error
		FROM claimed AS c JOIN webhook_events AS e USING (seq)`
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
			e.Data.Type, string(sqlstore.JSON(data)), e.Data.Time.UTC()); err != nil {
			return fmt.Errorf("insert event %s: %w", e.Data.ID, err)
		}
	}
	return nil
}

// ClaimEvents leases up to limit due events to owner for ttl (whole milliseconds),
// for receiver: the oldest event of each thread not yet ended for receiver, when it
// is due for receiver and no live claim holds it, oldest first (claimEventsSQL). A
// later event of a thread waits until receiver's delivery of the earlier ones ended;
// other receivers do not wait for it.
func (s *Outbox) ClaimEvents(ctx context.Context, receiver, owner string, ttl time.Duration, limit int) ([]conversation.Event, error) {
	rows, err := s.db.QueryContext(ctx, claimEventsSQL, owner, ttl.Milliseconds(), limit, receiver)
	if err != nil {
		return nil, classify(fmt.Errorf("claim webhook events: %w", err))
	}
	events, err := sqlstore.ScanEvents(rows)
	if err != nil {
		return nil, classify(fmt.Errorf("claim webhook events: %w", err))
	}
	return events, nil
}

// EventDone ends receiver's delivery of the event seq (one more attempt) and frees
// its claim, so the thread's next event becomes receiver's head: delivered when
// lastErr is "", abandoned after too many failures otherwise (lastErr kept). It does
// nothing when owner's claim is not the delivery's last (its lease expired and
// another replica claimed it), so that claim is not freed under its holder.
func (s *Outbox) EventDone(ctx context.Context, receiver string, seq int64, owner, lastErr string) error {
	_, err := s.db.ExecContext(ctx, `
		UPDATE webhook_deliveries SET delivered_at = now(), attempts = attempts + 1, lease_owner = NULL, lease_until = NULL,
			last_error = $2
		WHERE receiver = $4 AND seq = $1 AND lease_owner = $3`, seq, sqlstore.Text(lastErr), owner, receiver)
	if err != nil {
		return classify(fmt.Errorf("end webhook event %d: %w", seq, err))
	}
	return nil
}

// EventFailed records a failed delivery of the event seq to receiver by owner's
// claim (one more attempt, and lastErr; nothing unless that claim is the delivery's
// last, as EventDone) and makes it due again for receiver after retryIn (whole
// milliseconds), freeing its claim.
func (s *Outbox) EventFailed(ctx context.Context, receiver string, seq int64, owner string, retryIn time.Duration, lastErr string) error {
	_, err := s.db.ExecContext(ctx, `
		UPDATE webhook_deliveries SET attempts = attempts + 1, last_error = $2,
			next_attempt_at = now() + $3::bigint * interval '1 millisecond', lease_owner = NULL, lease_until = NULL
		WHERE receiver = $5 AND seq = $1 AND lease_owner = $4`, seq, sqlstore.Text(lastErr), retryIn.Milliseconds(), owner, receiver)
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
	n, err := sqlstore.RowsAffected(s.db.ExecContext(ctx, `
		UPDATE webhook_events AS e SET delivered_at = now()
		WHERE e.delivered_at IS NULL AND (SELECT count(*) FROM webhook_deliveries AS d
			WHERE d.seq = e.seq AND d.delivered_at IS NOT NULL AND d.receiver = ANY($1)) = (SELECT count(DISTINCT r) FROM unnest($1::text[]) AS r)`,
		pq.Array(receivers)))
	if err != nil {
		return 0, classify(fmt.Errorf("close webhook events: %w", err))
	}
	return int(n), nil
}

// DeleteEvents deletes the events whose delivery ended (delivered or abandoned)
// for every receiver before before, with their deliveries, and returns how many.
func (s *Outbox) DeleteEvents(ctx context.Context, before time.Time) (int, error) {
	n, err := sqlstore.RowsAffected(s.db.ExecContext(ctx, `
		DELETE FROM webhook_events WHERE delivered_at IS NOT NULL AND delivered_at < $1`, before.UTC()))
	if err != nil {
		return 0, classify(fmt.Errorf("delete webhook events: %w", err))
	}
	return int(n), nil
}
