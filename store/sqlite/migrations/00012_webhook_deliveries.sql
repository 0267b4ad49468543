-- Per-receiver webhook delivery (see PostgreSQL's migration 00012). Times are Unix
-- microseconds, UTC; a lease expires by the clock of the process that claimed it.

-- +goose Up
CREATE TABLE webhook_deliveries (
    receiver        TEXT    NOT NULL,
    seq             INTEGER NOT NULL REFERENCES webhook_events (seq) ON DELETE CASCADE,
    next_attempt_at INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    lease_owner     TEXT,
    lease_until     INTEGER,
    delivered_at    INTEGER,
    PRIMARY KEY (receiver, seq)
) STRICT;

CREATE INDEX webhook_deliveries_seq ON webhook_deliveries (seq);

-- +goose Down
DROP TABLE webhook_deliveries;
