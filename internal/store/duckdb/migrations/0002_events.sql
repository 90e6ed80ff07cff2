-- Events (DuckDB only: the ClickHouse event store has its own schema).
-- No indexes: DuckDB prunes row groups by their min/max zone maps,
-- and an index would only slow the appender down. user_id is a 64-bit hash
-- (FNV-1a) of distinct_id computed at ingest, so that queries group and
-- join on an integer. properties holds the compact JSON text exactly as
-- ingest validated it; VARCHAR rather than JSON because DuckDB's appender
-- re-encodes values bound for JSON columns, and the json_* functions read
-- VARCHAR as well.
CREATE TABLE events (
    uuid         UUID NOT NULL,
    product_id   BIGINT NOT NULL,
    env          VARCHAR NOT NULL,
    ts           TIMESTAMP NOT NULL,
    received_at  TIMESTAMP NOT NULL,
    event        VARCHAR NOT NULL,
    distinct_id  VARCHAR NOT NULL,
    user_id      UBIGINT NOT NULL,
    url          VARCHAR,
    path         VARCHAR,
    referrer     VARCHAR,
    user_agent   VARCHAR,
    browser      VARCHAR,
    os           VARCHAR,
    device_type  VARCHAR,
    is_bot       BOOLEAN NOT NULL,
    bot_name     VARCHAR,
    bot_category VARCHAR,
    properties   VARCHAR NOT NULL
);
