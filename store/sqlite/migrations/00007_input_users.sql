-- The author of each input (conversation.Store.CountPending; docs/operations.md, "Limits and secrets"): see
-- PostgreSQL's migration 00007. SQLite drops a column only once no index names it.

-- +goose Up
ALTER TABLE inputs ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
UPDATE inputs SET user_id = coalesce(json_extract(payload, '$.user_id'), '')
WHERE status = 'pending' AND json_valid(payload) AND json_type(payload) = 'object';
CREATE INDEX inputs_user_pending ON inputs (team_id, user_id) WHERE status = 'pending' AND user_id <> '';

-- +goose Down
DROP INDEX inputs_user_pending;
ALTER TABLE inputs DROP COLUMN user_id;
