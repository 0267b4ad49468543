-- The knowledge base (conversation.Knowledge, `threadwright ingest`): the ingested
-- sources, one row per document, and their chunks, searched through tsv, a generated
-- tsvector of the chunk's heading and text, and its GIN index.
--
-- tsv uses the 'simple' configuration: it lowercases words and neither stems them nor
-- drops stop words, the same in every language, as SQLite's unicode61 tokenizer does in
-- store/sqlite. ('english' would stem English words, "policies" matching "policy", but
-- no other language's, and would drop English stop words only; Search weighs each word
-- by its rarity in the chunks instead, which makes "the" or "и" count for almost
-- nothing, in any language.) The heading is weighted B, the
-- text D (the default), so ts_rank counts a word of the heading four times as much as
-- one of the text. Lowercasing follows the database's LC_CTYPE: a database created with
-- the C locale folds ASCII letters only.
--
-- Paths sort byte-wise (COLLATE "C"), as in SQLite, whatever the database's locale.

-- +goose Up
CREATE TABLE sources (
    source      TEXT        COLLATE "C" PRIMARY KEY, -- the document's path as ingested
    chunks      INTEGER     NOT NULL,
    ingested_at TIMESTAMPTZ NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    hash        TEXT        NOT NULL                 -- content hash of the ingested version
);

CREATE TABLE chunks (
    source     TEXT        COLLATE "C" NOT NULL REFERENCES sources (source) ON DELETE CASCADE,
    ordinal    INTEGER     NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    heading    TEXT        NOT NULL,
    text       TEXT        NOT NULL,
    tsv        TSVECTOR    GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', heading), 'B') || to_tsvector('simple', text)
    ) STORED,
    PRIMARY KEY (source, ordinal)
);

-- fastupdate off: a new chunk goes into the index's tree as it is inserted, rather
-- than into the pending list, which every search then reads whole until a vacuum
-- merges it (up to gin_pending_list_limit, 4 MB). Ingesting is rare and can pay for
-- it; after ingesting 10,000 chunks, searches ran twice as slow with the list.
CREATE INDEX chunks_tsv ON chunks USING gin (tsv) WITH (fastupdate = off);

-- +goose Down
DROP TABLE chunks;
DROP TABLE sources;
