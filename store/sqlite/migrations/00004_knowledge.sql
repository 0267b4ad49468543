-- The knowledge base (conversation.Knowledge, `threadwright ingest`): the ingested
-- sources, one row per document, and their chunks, searched through chunks_fts, an
-- FTS5 index of the chunks' heading and text. Times are INTEGER Unix microseconds, UTC.
--
-- chunks_fts is an external-content table: it stores the index only and reads the
-- text from chunks, by chunks.id, which is its rowid. Triggers keep it in step with
-- chunks, deletes by ON DELETE CASCADE included (SQLite fires a table's triggers for
-- the rows that a foreign key action deletes). The tokenizer is unicode61, which
-- splits on anything but letters and digits of every script and folds case; with
-- remove_diacritics 2 "café" and "cafe" are one word. It does not stem, like
-- PostgreSQL's 'simple' configuration that store/postgres indexes with, so both stores
-- match the same words in every language.

-- +goose Up
CREATE TABLE sources (
    source      TEXT    PRIMARY KEY, -- the document's path as ingested
    hash        TEXT    NOT NULL,    -- content hash of the ingested version
    chunks      INTEGER NOT NULL,
    ingested_at INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE chunks (
    -- The rowid, chunks_fts's content_rowid: an explicit INTEGER PRIMARY KEY, so
    -- VACUUM cannot renumber it under the index.
    id         INTEGER PRIMARY KEY,
    source     TEXT    NOT NULL REFERENCES sources (source) ON DELETE CASCADE,
    ordinal    INTEGER NOT NULL,
    heading    TEXT    NOT NULL,
    text       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (source, ordinal)
) STRICT;

CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    heading, text,
    content = 'chunks', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- +goose StatementBegin
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, heading, text) VALUES (new.id, new.heading, new.text);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, heading, text) VALUES ('delete', old.id, old.heading, old.text);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER chunks_fts_update AFTER UPDATE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, heading, text) VALUES ('delete', old.id, old.heading, old.text);
    INSERT INTO chunks_fts (rowid, heading, text) VALUES (new.id, new.heading, new.text);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER chunks_fts_update;
DROP TRIGGER chunks_fts_delete;
DROP TRIGGER chunks_fts_insert;
DROP TABLE chunks_fts;
DROP TABLE chunks;
DROP TABLE sources;
