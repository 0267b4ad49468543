-- Who put each document in the knowledge base (conversation.Origin; docs/api.md,
-- "Tokens"): "ingest" for threadwright ingest (an operator, and every document stored
-- before this migration), or "api:<token>" for an upload; untrusted marks a document
-- that search_knowledge labels untrusted content.

-- +goose Up
ALTER TABLE sources ADD COLUMN origin TEXT NOT NULL DEFAULT 'ingest';
ALTER TABLE sources ADD COLUMN untrusted BOOLEAN NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE sources DROP COLUMN untrusted;
ALTER TABLE sources DROP COLUMN origin;
