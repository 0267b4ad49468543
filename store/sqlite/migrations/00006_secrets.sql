-- Secrets of the installation (see PostgreSQL's migration 00006): the key that signs
-- button values is the first. created_at is Unix microseconds, UTC.

-- +goose Up
CREATE TABLE secrets (
    name       TEXT    PRIMARY KEY,
    value      BLOB    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE secrets;
