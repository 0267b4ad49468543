-- The webhook outbox (docs/api.md, "Webhooks"): one row per event, written by Save in the
-- transaction of the checkpoint that produced it, so a crash neither loses nor
-- invents one. seq orders the events; a thread's events are delivered in seq order,
-- one at a time (the deliverer claims only the oldest undelivered event of each
-- thread). A claim is a lease (lease_owner until lease_until, by the database's
-- clock): another replica claims the event only once it expired. data is the
-- event's JSON body, whose "id" (event_id here too) receivers deduplicate on.

-- +goose Up
CREATE TABLE webhook_events (
    seq             BIGSERIAL   PRIMARY KEY,
    event_id        TEXT        NOT NULL UNIQUE,
    team_id         TEXT        NOT NULL,
    channel_id      TEXT        NOT NULL,
    thread_ts       TEXT        NOT NULL,
    type            TEXT        NOT NULL,
    data            JSONB       NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    attempts        INTEGER     NOT NULL DEFAULT 0,
    last_error      TEXT        NOT NULL DEFAULT '',
    lease_owner     TEXT,
    lease_until     TIMESTAMPTZ,
    delivered_at    TIMESTAMPTZ
);

-- The undelivered events of each thread, oldest first: Claim's heads.
CREATE INDEX webhook_events_pending ON webhook_events (team_id, channel_id, thread_ts, seq)
    WHERE delivered_at IS NULL;

-- +goose Down
DROP TABLE webhook_events;
