-- Feedback on answers (see PostgreSQL's migration 00008): one row per person and
-- answer message, replaced by a second click. created_at is Unix microseconds, UTC.

-- +goose Up
CREATE TABLE feedback (
    team_id           TEXT    NOT NULL,
    channel_id        TEXT    NOT NULL,
    thread_ts         TEXT    NOT NULL,
    message_ts        TEXT    NOT NULL,
    user_id           TEXT    NOT NULL,
    rating            TEXT    NOT NULL CHECK (rating IN ('positive', 'negative')),
    reason            TEXT    NOT NULL DEFAULT '',
    model             TEXT    NOT NULL DEFAULT '',
    strategy          TEXT    NOT NULL DEFAULT '',
    tools             TEXT    NOT NULL DEFAULT '[]', -- JSON array of tool names
    latency_ms        INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL,
    PRIMARY KEY (team_id, channel_id, message_ts, user_id)
) STRICT;

CREATE INDEX feedback_created ON feedback (created_at);

-- +goose Down
DROP TABLE feedback;
