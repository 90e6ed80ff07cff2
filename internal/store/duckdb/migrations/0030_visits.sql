-- Visits kept for the settled past (docs/queries.md, "Sessions", and
-- internal/store/duckdb/visits.go): one row per visit of human events,
-- computed by the server's visits refresher with the rule the sessions
-- statement applies, so that the sessions query reads the past from here
-- and builds only the recent tail from events. start stays a timestamp:
-- a visit's bucket is computed from it at query time, in the range's time
-- zone. The rows of a product and environment are trusted only up to the
-- horizon the server holds in memory, and are rebuilt from events after
-- each start of the server.
CREATE TABLE visits (
    product_id   BIGINT NOT NULL,
    env          VARCHAR NOT NULL,
    uid          UINTEGER NOT NULL,
    sid          VARCHAR NOT NULL,
    start        TIMESTAMP NOT NULL,
    "end"        TIMESTAMP NOT NULL,
    pageviews    BIGINT NOT NULL,
    interactions BIGINT NOT NULL,
    entry        VARCHAR,
    exit         VARCHAR
);
