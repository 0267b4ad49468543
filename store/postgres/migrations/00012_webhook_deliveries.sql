-- Per-receiver webhook delivery (docs/api.md, "Webhooks"): one row per
-- (receiver, event) once a deliverer first claimed the event for that receiver; no
-- row means not tried yet, due at once. receiver is package webhook's stable id of a
-- URL (a hash: a URL's path may hold a secret). Each receiver has its own claim
-- lease, attempts, backoff (next_attempt_at) and last_error, so a failing receiver
-- holds back only its own deliveries, and a thread's events reach each receiver in
-- seq order, one at a time. webhook_events.delivered_at now means the event ended for
-- every configured receiver (set by CloseEvents); its attempts, last_error and lease
-- columns are no longer written.

-- +goose Up
CREATE TABLE webhook_deliveries (
    receiver        TEXT        NOT NULL,
    seq             BIGINT      NOT NULL REFERENCES webhook_events (seq) ON DELETE CASCADE,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    attempts        INTEGER     NOT NULL DEFAULT 0,
    last_error      TEXT        NOT NULL DEFAULT '',
    lease_owner     TEXT,
    lease_until     TIMESTAMPTZ,
    delivered_at    TIMESTAMPTZ,
    PRIMARY KEY (receiver, seq)
);

CREATE INDEX webhook_deliveries_seq ON webhook_deliveries (seq);

-- +goose Down
DROP TABLE webhook_deliveries;
