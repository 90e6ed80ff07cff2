-- Aliases of error groups (docs/errors.md, "One bug, one group"): the
-- $exception events whose fingerprint is `fingerprint` count in the group
-- of `into_fingerprint`, which is never itself an alias. Ingest records
-- one when a sourcemap uploaded after a bug's first errors de-minifies its
-- frames into a new fingerprint (reason 'sourcemap'); a person, when they
-- merge groups (reason 'merge', created_by naming who). The key makes the
-- first alias of a fingerprint the one every node reads. PostgreSQL
-- dialect, which DuckDB also runs.
CREATE TABLE error_aliases (
    product_id       BIGINT NOT NULL REFERENCES products (id),
    fingerprint      VARCHAR NOT NULL,
    into_fingerprint VARCHAR NOT NULL,
    reason           VARCHAR NOT NULL,
    created_at       TIMESTAMP NOT NULL,
    created_by       VARCHAR NOT NULL,
    PRIMARY KEY (product_id, fingerprint)
);
