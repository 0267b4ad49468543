-- The usage ledger (conversation.UsageStore; docs/operations.md, "Usage, cost and budgets"): one
-- row per saved turn that ran for a person or a pipeline, written in the turn's
-- transaction, with the person, the workflow and the model it ran for and OpenAI's
-- token counts. `threadwright usage` sums it; the token budgets read a person's or a
-- channel's last 24 hours through its indexes. created_at is Unix microseconds, UTC.

-- +goose Up
CREATE TABLE token_usage (
    created_at        INTEGER NOT NULL,
    team_id           TEXT    NOT NULL,
    channel_id        TEXT    NOT NULL,
    thread_ts         TEXT    NOT NULL,
    user_id           TEXT    NOT NULL DEFAULT '',
    workflow          TEXT    NOT NULL DEFAULT '',
    model             TEXT    NOT NULL DEFAULT '',
    turns             INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX token_usage_created ON token_usage (created_at);
CREATE INDEX token_usage_user ON token_usage (team_id, user_id, created_at);
CREATE INDEX token_usage_channel ON token_usage (team_id, channel_id, created_at);

-- +goose Down
DROP TABLE token_usage;
