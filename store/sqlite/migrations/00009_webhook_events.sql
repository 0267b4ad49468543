-- The webhook outbox (see PostgreSQL's migration 00009). Times are Unix
-- microseconds, UTC; a lease expires by the clock of the process that claimed it.

-- +goose Up
CREATE TABLE webhook_events (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id        TEXT    NOT NULL UNIQUE,
    team_id         TEXT    NOT NULL,
    channel_id      TEXT    NOT NULL,
    thread_ts       TEXT    NOT NULL,
    type            TEXT    NOT NULL,
    data            TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    lease_owner     TEXT,
    lease_until     INTEGER,
    delivered_at    INTEGER
) STRICT;

CREATE INDEX webhook_events_pending ON webhook_events (team_id, channel_id, thread_ts, seq)
    WHERE delivered_at IS NULL;

-- +goose Down
DROP TABLE webhook_events;
