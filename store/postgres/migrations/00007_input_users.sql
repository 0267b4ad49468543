-- The author of each input (conversation.Store.CountPending; docs/operations.md, "Limits and secrets"): the
-- Slack user id of a person's message, click or command ('' for a pipeline's input),
-- so that the inputs one person has waiting are counted with one index scan, by every
-- replica alike. The pending inputs already stored get theirs from their payload,
-- where every kind keeps it as user_id.
--
-- inputs_user_pending holds the pending inputs that have an author, by workspace and
-- author. A thread's pending inputs are counted through inputs_thread_pending
-- (migration 00005).

-- +goose Up
ALTER TABLE inputs ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
UPDATE inputs SET user_id = coalesce(payload ->> 'user_id', '')
WHERE status = 'pending' AND jsonb_typeof(payload) = 'object';
CREATE INDEX inputs_user_pending ON inputs (team_id, user_id) WHERE status = 'pending' AND user_id <> '';

-- +goose Down
DROP INDEX inputs_user_pending;
ALTER TABLE inputs DROP COLUMN user_id;
