-- Session replay chunks (docs/replay.md, "Storage"), per product, session,
-- window and chunk index: the data as the SDK sent it (gzipped or plain
-- JSON of rrweb events) in a BYTEA column, with the metadata the replay
-- list reads without it. Servers with a PostgreSQL metadata store keep
-- replays here; embedded servers keep them as files (package replayfs)
-- and leave this table empty: DuckDB applies every metadata migration,
-- and the table is written in the dialect both accept so that the
-- conformance suite checks the statements on both. No foreign key to
-- products: the retention job deletes chunks in bulk, and a product's
-- rows are only ever read by its id. PostgreSQL dialect.
CREATE TABLE replay_chunks (
    product_id  BIGINT NOT NULL,
    session_id  VARCHAR NOT NULL,
    window_id   VARCHAR NOT NULL,
    chunk_index INTEGER NOT NULL,
    distinct_id VARCHAR NOT NULL,
    first_ts    TIMESTAMP NOT NULL,
    last_ts     TIMESTAMP NOT NULL,
    encoding    VARCHAR NOT NULL,
    pages       INTEGER NOT NULL,
    clicks      INTEGER NOT NULL,
    errors      INTEGER NOT NULL,
    size        INTEGER NOT NULL,
    data        BYTEA NOT NULL,
    received_at TIMESTAMP NOT NULL,
    PRIMARY KEY (product_id, session_id, window_id, chunk_index)
);
CREATE INDEX replay_chunks_distinct ON replay_chunks (product_id, distinct_id);
