-- How many ingest requests each API key was allowed, summed over every node
-- that shares this metadata store. Nodes add what they admitted about once a
-- second and debit their own rate-limit buckets with what the others did,
-- so a key's limit holds across nodes (internal/ratelimit).
CREATE TABLE key_usage (
    key_id BIGINT PRIMARY KEY,
    used   BIGINT NOT NULL
);
