-- Person profiles (docs/ingest.md, "Person profiles"), per product: one
-- row per distinct id that sent an event, with the latest value of each
-- property identify, $set and $set_once gave it (a JSON object in text)
-- and when its events were first and last seen. The profile updater
-- writes them after the events are stored (internal/persons). As for
-- groups (0018), no index holds a column that is updated: in DuckDB an
-- UPDATE of an indexed column is a delete and an insert, which the
-- primary key can refuse; the people list's order (last_seen) is sorted
-- from a scan of the product's rows (docs/queries.md, "People").
-- PostgreSQL dialect, which DuckDB also runs.
CREATE TABLE persons (
    product_id  BIGINT NOT NULL REFERENCES products (id),
    distinct_id VARCHAR NOT NULL,
    properties  VARCHAR NOT NULL,
    first_seen  TIMESTAMP NOT NULL,
    last_seen   TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (product_id, distinct_id)
);
