-- What each recorded session takes, as the per-session cap counts it
-- (--replay-max-session-bytes, docs/replay.md, "Limits"): its chunks' data
-- and 512 bytes for each chunk's metadata (analytics.ReplayChunkOverhead).
-- A chunk is stored only if a conditional increment of its session's row
-- succeeds (UPDATE … WHERE bytes + charge <= cap, the row inserted first
-- when the chunk starts the session; sqlmeta/replay.go), in the
-- transaction that inserts the chunk: PostgreSQL locks the row, so
-- that requests on several nodes at once cannot take a session past the
-- cap together. Filled from the chunks already stored. PostgreSQL dialect,
-- which DuckDB also runs (the table stays empty on embedded servers, whose
-- replays are segment files).
CREATE TABLE replay_sessions (
    product_id BIGINT NOT NULL,
    session_id VARCHAR NOT NULL,
    bytes      BIGINT NOT NULL,
    PRIMARY KEY (product_id, session_id)
);
INSERT INTO replay_sessions (product_id, session_id, bytes)
SELECT product_id, session_id, CAST(sum(size) + 512 * count(*) AS BIGINT)
FROM replay_chunks GROUP BY product_id, session_id;
