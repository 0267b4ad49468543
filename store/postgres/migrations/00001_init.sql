-- The initial schema: conversations (one control row per Slack thread), their
-- append-only messages, and the inputs that drive them (docs/architecture.md,
-- "Persistence"). Fixed-width columns come first in each table so rows carry no
-- alignment padding.

-- +goose Up
CREATE TABLE conversations (
    id         BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    version    BIGINT      NOT NULL,
    last_seq   BIGINT      NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    -- Not indexed: every turn rewrites it, and an index would rule out HOT updates.
    -- DeleteIdle, which filters on it, runs rarely.
    updated_at TIMESTAMPTZ NOT NULL,
    team_id    TEXT        NOT NULL,
    channel_id TEXT        NOT NULL,
    thread_ts  TEXT        NOT NULL,
    state      JSONB       NOT NULL, -- conversation.State
    UNIQUE (team_id, channel_id, thread_ts)
);

CREATE TABLE messages (
    conversation_id   BIGINT      NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq               BIGINT      NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL,
    prompt_tokens     INTEGER     NOT NULL DEFAULT 0,
    completion_tokens INTEGER     NOT NULL DEFAULT 0,
    role              TEXT        NOT NULL,
    user_id           TEXT        NOT NULL DEFAULT '',
    slack_ts          TEXT        NOT NULL DEFAULT '',
    text              TEXT        NOT NULL,
    meta              JSONB,
    PRIMARY KEY (conversation_id, seq)
);

CREATE TABLE inputs (
    -- The deduplication id, conversation.Input.ID. Collation "C" orders it byte-wise,
    -- as SQLite does, whatever the database's locale.
    id         TEXT        COLLATE "C" PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    attempts   INTEGER     NOT NULL DEFAULT 0,
    event_id   TEXT        NOT NULL DEFAULT '',
    team_id    TEXT        NOT NULL,
    channel_id TEXT        NOT NULL,
    thread_ts  TEXT        NOT NULL,
    kind       TEXT        NOT NULL,
    status     TEXT        NOT NULL,
    payload    JSONB                    -- conversation.UserMessage, or NULL
);

-- Pending: only the inputs still to run are indexed, oldest first.
CREATE INDEX inputs_pending ON inputs (created_at, id) WHERE status = 'pending';

-- +goose Down
DROP TABLE inputs;
DROP TABLE messages;
DROP TABLE conversations;
