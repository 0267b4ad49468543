-- Secrets of the installation, shared by every replica: the key that signs button
-- values (docs/workflows.md, "Buttons are signed") is the first. A secret is made once, by the
-- first replica that asks for it (INSERT … ON CONFLICT DO NOTHING, then SELECT, so
-- replicas that race agree on the row that won), and never changes: rotating one
-- means deleting its row, which makes every button posted before it unusable.

-- +goose Up
CREATE TABLE secrets (
    name       TEXT        PRIMARY KEY,
    value      BYTEA       NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE secrets;
