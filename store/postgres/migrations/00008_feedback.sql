-- Feedback on answers (docs/operations.md, "Feedback"): a person's thumbs up or down on one of
-- the bot's answer messages, with the reason of a thumbs down and the turn that wrote
-- the answer (model, strategy, tools, latency, tokens), copied from the answer's
-- saved message when the click is stored. One row per person and message: a second
-- click replaces the first (INSERT … ON CONFLICT DO UPDATE). Rows are independent of
-- conversations: feedback outlives the thread's transcript. Nothing here is sent
-- anywhere; `threadwright feedback` reads it.

-- +goose Up
CREATE TABLE feedback (
    team_id           TEXT        NOT NULL,
    channel_id        TEXT        NOT NULL,
    thread_ts         TEXT        NOT NULL,
    message_ts        TEXT        NOT NULL,
    user_id           TEXT        NOT NULL,
    rating            TEXT        NOT NULL CHECK (rating IN ('positive', 'negative')),
    reason            TEXT        NOT NULL DEFAULT '',
    model             TEXT        NOT NULL DEFAULT '',
    strategy          TEXT        NOT NULL DEFAULT '',
    tools             TEXT        NOT NULL DEFAULT '[]', -- JSON array of tool names
    latency_ms        BIGINT      NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER     NOT NULL DEFAULT 0,
    completion_tokens INTEGER     NOT NULL DEFAULT 0,
    created_at        TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (team_id, channel_id, message_ts, user_id)
);

CREATE INDEX feedback_created ON feedback (created_at);

-- +goose Down
DROP TABLE feedback;
