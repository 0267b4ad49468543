package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Outbox is the webhook outbox (migration 00009) that package webhook delivers from
// (webhook.Outbox). Save writes a turn's events (insertEvents); ClaimEvents,
// EventDone, EventFailed and DeleteEvents lease, end and delete them.
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
	// claimEventsSQL leases to owner $1 for $2 milliseconds up to $3 events that are
	// the oldest undelivered event of their thread (heads, through
	// webhook_events_pending), due, and not leased to another live claim, oldest
	// first. FOR UPDATE … SKIP LOCKED passes over the rows a concurrent claim is
	// taking, and re-checks the conditions on e's newest version of a row it locks, so
	// two replicas never both take one.
	claimEventsSQL = `
		WITH heads AS (
			SELECT DISTINCT ON (team_id, channel_id, thread_ts) seq
			FROM webhook_events WHERE delivered_at IS NULL
			ORDER BY team_id, channel_id, thread_ts, seq
		), due AS (
			SELECT e.seq FROM webhook_events AS e JOIN heads USING (seq)
			WHERE e.delivered_at IS NULL AND e.next_attempt_at <= now()
				AND (e.lease_until IS NULL OR e.lease_until <= now())
			ORDER BY e.seq LIMIT $3
			FOR UPDATE OF e SKIP LOCKED
		)
		UPDATE webhook_events AS w SET lease_owner = $1, lease_until = now() + $2::bigint * interval '1 millisecond'
		FROM due WHERE w.seq = due.seq
		RETURNING w.seq, w.team_id, w.channel_id, w.thread_ts, w.data, w.attempts, w.last_error`
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

// ClaimEvents leases up to limit due events to owner for ttl (whole milliseconds):
// the oldest undelivered event of each thread, when it is due and no live claim holds
// it, oldest first (claimEventsSQL). A later event of a thread waits until the
// earlier ones are delivered.
func (s *Outbox) ClaimEvents(ctx context.Context, owner string, ttl time.Duration, limit int) ([]conversation.Event, error) {
	rows, err := s.db.QueryContext(ctx, claimEventsSQL, owner, ttl.Milliseconds(), limit)
	if err != nil {
		return nil, classify(fmt.Errorf("claim webhook events: %w", err))
	}
	events, err := sqlstore.ScanEvents(rows)
	if err != nil {
		return nil, classify(fmt.Errorf("claim webhook events: %w", err))
	}
	return events, nil
}

// EventDone ends the delivery of the event seq (one more attempt) and frees its
// claim, so the thread's next event becomes its head: delivered when lastErr is "",
// abandoned after too many failures otherwise (lastErr kept). It does nothing when
// owner's claim is not the event's last (its lease expired and another replica
// claimed the event), so that claim is not freed under its holder.
func (s *Outbox) EventDone(ctx context.Context, seq int64, owner, lastErr string) error {
	_, err := s.db.ExecContext(ctx, `
		UPDATE webhook_events SET delivered_at = now(), attempts = attempts + 1, lease_owner = NULL, lease_until = NULL,
			last_error = $2
		WHERE seq = $1 AND lease_owner = $3`, seq, sqlstore.Text(lastErr), owner)
	if err != nil {
		return classify(fmt.Errorf("end webhook event %d: %w", seq, err))
	}
	return nil
}

// EventFailed records a failed delivery of the event seq by owner's claim (one
// more attempt, and lastErr; nothing unless that claim is the event's last, as
// EventDone) and makes it due again after retryIn (whole milliseconds), freeing its
// claim.
func (s *Outbox) EventFailed(ctx context.Context, seq int64, owner string, retryIn time.Duration, lastErr string) error {
	_, err := s.db.ExecContext(ctx, `
		UPDATE webhook_events SET attempts = attempts + 1, last_error = $2,
			next_attempt_at = now() + $3::bigint * interval '1 millisecond', lease_owner = NULL, lease_until = NULL
		WHERE seq = $1 AND lease_owner = $4`, seq, sqlstore.Text(lastErr), retryIn.Milliseconds(), owner)
	if err != nil {
		return classify(fmt.Errorf("record webhook event %d failure: %w", seq, err))
	}
	return nil
}

// DeleteEvents deletes the events whose delivery ended (delivered or abandoned)
// before before, and returns how many.
func (s *Outbox) DeleteEvents(ctx context.Context, before time.Time) (int, error) {
	n, err := sqlstore.RowsAffected(s.db.ExecContext(ctx, `
		DELETE FROM webhook_events WHERE delivered_at IS NOT NULL AND delivered_at < $1`, before.UTC()))
	if err != nil {
		return 0, classify(fmt.Errorf("delete webhook events: %w", err))
	}
	return int(n), nil
}
