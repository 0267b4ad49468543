-- Running workflows (conversation.Store's Workflows): the name, status and starter of
-- a conversation's artifact workflow (conversation.State.Workflow's Name, Status and
-- StartedBy), copied out of state by every Save so that a channel's running workflows
-- can be found without reading every state. NULL, all three, when the conversation has
-- no workflow.
--
-- The index holds running workflows only, by channel and starter: columns that a
-- conversation's turns rarely change (its workflow starts, then completes or is
-- cancelled, once). updated_at, which Workflows sorts by, is left out on purpose: every
-- turn rewrites it, and an index on it, even a partial one, would rule out HOT updates
-- of every conversation's row, workflow or not (PostgreSQL checks the indexed columns,
-- the predicate's included, whatever rows the index holds). Save writes the three
-- columns on every turn, but with their old values on all turns but those that start or
-- end a workflow, which keeps the update HOT. Workflows sorts the few rows it finds.

-- +goose Up
-- Nullable with no default: a change to the catalog only, no table rewrite.
ALTER TABLE conversations
    ADD COLUMN workflow            TEXT,
    ADD COLUMN workflow_status     TEXT,
    ADD COLUMN workflow_started_by TEXT;

-- Conversations saved before this migration: copy their workflow out of the state.
UPDATE conversations SET
    workflow            = coalesce(state -> 'workflow' ->> 'name', ''),
    workflow_status     = coalesce(state -> 'workflow' ->> 'status', ''),
    workflow_started_by = coalesce(state -> 'workflow' ->> 'started_by', '')
WHERE jsonb_typeof(state -> 'workflow') = 'object';

CREATE INDEX conversations_workflows ON conversations (team_id, channel_id, workflow_started_by)
    WHERE workflow_status = 'running';

-- +goose Down
DROP INDEX conversations_workflows;
ALTER TABLE conversations
    DROP COLUMN workflow,
    DROP COLUMN workflow_status,
    DROP COLUMN workflow_started_by;
