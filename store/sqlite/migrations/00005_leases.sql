-- Leases on threads (conversation.Store's Acquire, Begin, Release, Renew, Signal and
-- Orphans; docs/architecture.md, "Durable turns"): a worker holds a thread's lease
-- while it runs the thread's inputs, one at a time, in seq order, and keeps it alive
-- by renewing it; a lease not renewed within its ttl expires, and another worker may
-- take the thread over. The columns are PostgreSQL's (see its migration 00005 for
-- what each means); times are INTEGER Unix microseconds, UTC, by the clock of the
-- process that writes them (one process, or processes on one machine).
--
-- inputs.seq numbers inputs as they are enqueued. It is the table's rowid, declared
-- INTEGER PRIMARY KEY AUTOINCREMENT, which is why inputs is rebuilt here: ALTER TABLE
-- cannot add such a column. The bare rowid of the old table would not do: SQLite
-- reuses the largest rowid once its row is deleted (DeleteIdle deletes old inputs),
-- and VACUUM may renumber a rowid that no INTEGER PRIMARY KEY declares. AUTOINCREMENT
-- never hands out a number twice (sqlite_sequence keeps the largest), and an INTEGER
-- PRIMARY KEY keeps its values. The id, the primary key before, is UNIQUE instead:
-- the same index as before (a rowid table indexes a TEXT primary key apart), and what
-- Enqueue's ON CONFLICT (id) needs. The inputs already stored are numbered in the
-- order of their creation (created_at, then id), in which the per-input claims ran
-- them.
--
-- inputs_thread_pending holds the pending inputs of each thread in seq order: Begin
-- takes its first entry, Release and Exists ask whether a thread has one, Orphans
-- groups them by thread. Leases replace the per-input claims: the rebuilt table leaves
-- out their column claimed_until (migration 00002) and their index inputs_pending
-- (created_at, id; migration 00001), which nothing reads any more. Down brings both
-- back as an older version expects them, every input unclaimed (claimed_until NULL).
--
-- leases has one row per thread that ever had an input or a lease; Release frees it
-- (owner NULL) rather than deleting it, so that its fencing token, token, never
-- repeats while anything of the thread is stored, and DeleteIdle deletes the free
-- rows of threads left with neither a conversation nor an input. It is a WITHOUT
-- ROWID table, stored in its primary key's order: a lease is always looked up by its
-- thread, or by its owner through leases_owner (Renew), which holds held leases only.
-- SQLite runs one writer at a time, so Release needs no more than NOT EXISTS to see
-- every input committed before it; enqueued is kept as in PostgreSQL, which needs it.

-- +goose Up
CREATE TABLE inputs_new (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT    NOT NULL UNIQUE, -- the deduplication id, conversation.Input.ID
    event_id      TEXT    NOT NULL DEFAULT '',
    team_id       TEXT    NOT NULL,
    channel_id    TEXT    NOT NULL,
    thread_ts     TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    payload       TEXT,                    -- conversation.UserMessage as JSON, or NULL
    status        TEXT    NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
) STRICT;

INSERT INTO inputs_new (id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts,
    created_at, updated_at)
SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts,
    created_at, updated_at
FROM inputs ORDER BY created_at, id;

DROP TABLE inputs;
ALTER TABLE inputs_new RENAME TO inputs;

CREATE INDEX inputs_thread_pending ON inputs (team_id, channel_id, thread_ts, seq) WHERE status = 'pending';

CREATE TABLE leases (
    team_id     TEXT    NOT NULL,
    channel_id  TEXT    NOT NULL,
    thread_ts   TEXT    NOT NULL,
    owner       TEXT,
    token       INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    prev_owner  TEXT,
    newest      INTEGER NOT NULL DEFAULT 0,
    message_seq INTEGER NOT NULL DEFAULT 0,
    message_by  TEXT    NOT NULL DEFAULT '',
    stop_target TEXT    NOT NULL DEFAULT '',
    stop_by     TEXT    NOT NULL DEFAULT '',
    enqueued    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (team_id, channel_id, thread_ts)
) STRICT, WITHOUT ROWID;

CREATE INDEX leases_owner ON leases (owner) WHERE owner IS NOT NULL;

-- +goose Down
DROP TABLE leases;

CREATE TABLE inputs_old (
    id            TEXT    PRIMARY KEY,
    event_id      TEXT    NOT NULL DEFAULT '',
    team_id       TEXT    NOT NULL,
    channel_id    TEXT    NOT NULL,
    thread_ts     TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    payload       TEXT,
    status        TEXT    NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    claimed_until INTEGER
) STRICT;

INSERT INTO inputs_old (id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts,
    created_at, updated_at)
SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts,
    created_at, updated_at
FROM inputs;

DROP TABLE inputs;
ALTER TABLE inputs_old RENAME TO inputs;
CREATE INDEX inputs_pending ON inputs (created_at, id) WHERE status = 'pending';
