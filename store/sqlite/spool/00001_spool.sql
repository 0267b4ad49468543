-- The spool (store/sqlite's Spool, a conversation.Spool): inputs accepted while the
-- store was unavailable, kept in a file of their own on local disk until the Service
-- moves them into the store (docs/architecture.md, "Accepted means stored"). A
-- migration set of its own, separate from the store's: the file outlives the process
-- that wrote it, and a newer version must read what an older one spooled before it
-- stopped. Times are INTEGER Unix microseconds, UTC.

-- +goose Up
CREATE TABLE spooled (
    -- Insertion order, which Peek follows. AUTOINCREMENT never hands a number out
    -- twice, so an input spooled after a Remove always sorts after those still there.
    n          INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT    NOT NULL UNIQUE, -- conversation.Input.ID: Put deduplicates by it
    input      TEXT    NOT NULL,        -- the conversation.Input as JSON
    created_at INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE spooled;
