-- The initial schema: conversations (one control row per Slack thread), their
-- append-only messages, and the inputs that drive them (docs/architecture.md,
-- "Persistence"). Times are INTEGER Unix microseconds, UTC. Tables are STRICT, so a
-- value of the wrong type is an error rather than silently stored.

-- +goose Up
CREATE TABLE conversations (
    -- AUTOINCREMENT: an id is never reused after DeleteIdle, so a stale reference
    -- (a Slack button's value) can never reach a newer conversation.
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id    TEXT    NOT NULL,
    channel_id TEXT    NOT NULL,
    thread_ts  TEXT    NOT NULL,
    state      TEXT    NOT NULL, -- conversation.State as JSON
    version    INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (team_id, channel_id, thread_ts)
) STRICT;

CREATE TABLE messages (
    conversation_id   INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq               INTEGER NOT NULL,
    role              TEXT    NOT NULL,
    user_id           TEXT    NOT NULL DEFAULT '',
    text              TEXT    NOT NULL,
    slack_ts          TEXT    NOT NULL DEFAULT '',
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    meta              TEXT,             -- JSON, or NULL
    created_at        INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, seq)
) STRICT;

CREATE TABLE inputs (
    id         TEXT    PRIMARY KEY,     -- the deduplication id, conversation.Input.ID
    event_id   TEXT    NOT NULL DEFAULT '',
    team_id    TEXT    NOT NULL,
    channel_id TEXT    NOT NULL,
    thread_ts  TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    payload    TEXT,                    -- conversation.UserMessage as JSON, or NULL
    status     TEXT    NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- Pending: only the inputs still to run are indexed, oldest first.
CREATE INDEX inputs_pending ON inputs (created_at, id) WHERE status = 'pending';

-- +goose Down
DROP TABLE inputs;
DROP TABLE messages;
DROP TABLE conversations;
