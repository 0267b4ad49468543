-- Running workflows (conversation.Store's Workflows): the name, status and starter of
-- a conversation's artifact workflow (conversation.State.Workflow's Name, Status and
-- StartedBy), copied out of state by every Save so that a channel's running workflows
-- can be found without reading every state. NULL, all three, when the conversation has
-- no workflow.
--
-- The index holds running workflows only, by channel and starter, as PostgreSQL's
-- does: columns that a conversation's turns rarely change. Workflows sorts the few
-- rows it finds by updated_at.

-- +goose Up
-- Allowed in a STRICT table: TEXT is a STRICT type, and the columns may be NULL.
ALTER TABLE conversations ADD COLUMN workflow TEXT;
ALTER TABLE conversations ADD COLUMN workflow_status TEXT;
ALTER TABLE conversations ADD COLUMN workflow_started_by TEXT;

-- Conversations saved before this migration: copy their workflow out of the state.
UPDATE conversations SET
    workflow            = coalesce(json_extract(state, '$.workflow.name'), ''),
    workflow_status     = coalesce(json_extract(state, '$.workflow.status'), ''),
    workflow_started_by = coalesce(json_extract(state, '$.workflow.started_by'), '')
WHERE json_type(state, '$.workflow') = 'object';

CREATE INDEX conversations_workflows ON conversations (team_id, channel_id, workflow_started_by)
    WHERE workflow_status = 'running';

-- +goose Down
-- The index first: SQLite cannot drop a column that an index names.
DROP INDEX conversations_workflows;
ALTER TABLE conversations DROP COLUMN workflow;
ALTER TABLE conversations DROP COLUMN workflow_status;
ALTER TABLE conversations DROP COLUMN workflow_started_by;
