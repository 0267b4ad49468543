-- Claims on inputs (conversation.Store's Claim and Release): a worker that starts a
-- turn on a pending input holds it until claimed_until, INTEGER Unix microseconds, UTC,
-- like the other times, so that a sweep and a queue never run one input at once.
-- NULL: not claimed (never, or released). A claim whose claimed_until is past has
-- expired, and Claim and Pending treat the input as unclaimed; a done, dropped or
-- failed input keeps whatever value it had, which nothing reads again.
--
-- The column is not indexed: Claim sets it on every turn, which would then update the
-- index too. Pending keeps walking inputs_pending, oldest first, and filters the
-- claimed ones out; they are the few inputs whose turns are running.

-- +goose Up
-- Allowed in a STRICT table: INTEGER is a STRICT type, and the column may be NULL.
ALTER TABLE inputs ADD COLUMN claimed_until INTEGER;

-- +goose Down
-- (DROP COLUMN needs SQLite 3.35; it works because no index or constraint names it.)
ALTER TABLE inputs DROP COLUMN claimed_until;
