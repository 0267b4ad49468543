-- Claims on inputs (conversation.Store's Claim and Release): a worker that starts a
-- turn on a pending input holds it until claimed_until, so that two replicas, or a
-- sweep and a queue, never run one input at once. NULL: not claimed (never, or
-- released). A claim whose claimed_until is past has expired, and Claim and Pending
-- treat the input as unclaimed; a done, dropped or failed input keeps whatever value
-- it had, which nothing reads again.
--
-- The column is not indexed: Claim sets it on every turn, and an index on it (even as
-- an INCLUDE column of inputs_pending) would rule out HOT updates of the row. Pending
-- keeps walking inputs_pending, oldest first, and filters the claimed ones out on the
-- heap; they are the few inputs whose turns are running.

-- +goose Up
-- Nullable with no default: a change to the catalog only, no table rewrite.
ALTER TABLE inputs ADD COLUMN claimed_until TIMESTAMPTZ;

-- +goose Down
ALTER TABLE inputs DROP COLUMN claimed_until;
