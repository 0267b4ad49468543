-- Leases on threads (conversation.Store's Acquire, Begin, Release, Renew, Signal and
-- Orphans; docs/architecture.md, "Durable turns"): a worker holds a thread's lease
-- while it runs the thread's inputs, one at a time, in seq order, and keeps it alive
-- by renewing it; a lease not renewed within its ttl expires, and another worker may
-- take the thread over.
--
-- inputs.seq numbers inputs as they are enqueued, across threads and replicas: an
-- identity column, whose sequence never hands out a number twice (a rolled-back or
-- deduplicated insert leaves a gap). The inputs already stored are numbered in the
-- order of their creation (created_at, then id), in which the per-input claims ran
-- them. inputs_thread_pending holds the pending inputs of each thread in seq order:
-- Begin takes its first entry, Release and Exists ask whether a thread has one,
-- Orphans groups them by thread. Begin's increment of attempts touches no indexed
-- column, so it stays HOT.
--
-- Leases replace the per-input claims, whose column inputs.claimed_until (migration
-- 00002) and index inputs_pending (created_at, id; migration 00001) nothing reads any
-- more: both are dropped. Down restores them as an older version expects them, every
-- input unclaimed (claimed_until NULL).
--
-- leases has one row per thread that ever had an input or a lease. owner is NULL when
-- the lease is free; token is the fencing token, which Acquire increments every time
-- it takes the row (a new row starts at 1), so that a worker whose lease was taken
-- over fails to write (conversation.ErrLeaseLost). Release frees the row rather than
-- deleting it, so a token never repeats for a thread while anything of it is stored;
-- DeleteIdle deletes the free rows of threads left with neither a conversation nor an
-- input (a token, which fences together with its owner, a name unique per process
-- start, may then start again from 1). expires_at is the
-- database's clock (now() plus the ttl), so replicas whose clocks disagree agree on
-- when a lease expires. prev_owner is the owner of the expired lease the last Acquire
-- took over (NULL when the thread was free), for a log line.
--
-- The other columns are what workers tell the holder, which reads them when it
-- renews: newest is the seq of the newest input enqueued while the lease is held
-- (0: none), message_seq and message_by the seq and author of the newest person's
-- message among them, stop_target and stop_by the last stop request (Signal). Acquire
-- and Release clear them. enqueued counts every input enqueued for the thread, held
-- or not, and is never cleared: Enqueue writes the row in the transaction that
-- inserts the input, and Release frees the row only if enqueued is still what its
-- snapshot read, so that an input committed after Release's snapshot but before
-- Release locked the row is never left pending behind a lease that was just freed
-- (see releaseSQL in lease.go).
--
-- leases_owner is the one index besides the primary key: Renew finds an owner's
-- leases by it. It is partial (held leases only) and indexes nothing that Renew,
-- Enqueue or Signal change (expires_at, newest, message_*, stop_*, enqueued), so that
-- their updates, a renewal of every held lease every few seconds above all, stay HOT;
-- only Acquire and Release, which change owner, update the index, once a turn.
-- Orphans finds expired leases from the pending inputs, not by expires_at, which an
-- index would then have to follow on every renewal. fillfactor 50 leaves room on each
-- page for those HOT updates of the small, often rewritten rows.

-- +goose Up
ALTER TABLE inputs ADD COLUMN seq BIGINT;
UPDATE inputs SET seq = n.seq
FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS seq FROM inputs) AS n
WHERE inputs.id = n.id;
ALTER TABLE inputs ALTER COLUMN seq SET NOT NULL;
ALTER TABLE inputs ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY;
SELECT setval(pg_get_serial_sequence('inputs', 'seq'), coalesce(max(seq), 0) + 1, false) FROM inputs;

CREATE INDEX inputs_thread_pending ON inputs (team_id, channel_id, thread_ts, seq) WHERE status = 'pending';
DROP INDEX inputs_pending;
ALTER TABLE inputs DROP COLUMN claimed_until;

CREATE TABLE leases (
    token       BIGINT      NOT NULL,
    newest      BIGINT      NOT NULL DEFAULT 0,
    message_seq BIGINT      NOT NULL DEFAULT 0,
    enqueued    BIGINT      NOT NULL DEFAULT 0,
    expires_at  TIMESTAMPTZ NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    team_id     TEXT        NOT NULL,
    channel_id  TEXT        NOT NULL,
    thread_ts   TEXT        NOT NULL,
    owner       TEXT,
    prev_owner  TEXT,
    message_by  TEXT        NOT NULL DEFAULT '',
    stop_target TEXT        NOT NULL DEFAULT '',
    stop_by     TEXT        NOT NULL DEFAULT '',
    PRIMARY KEY (team_id, channel_id, thread_ts)
) WITH (fillfactor = 50);

CREATE INDEX leases_owner ON leases (owner) WHERE owner IS NOT NULL;

-- +goose Down
DROP TABLE leases;
ALTER TABLE inputs ADD COLUMN claimed_until TIMESTAMPTZ;
CREATE INDEX inputs_pending ON inputs (created_at, id) WHERE status = 'pending';
DROP INDEX inputs_thread_pending;
ALTER TABLE inputs DROP COLUMN seq;
