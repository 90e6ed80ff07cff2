-- Goals (docs/queries.md, "Goals"): a custom event or a page path the
-- Overview counts conversions of. A goal is either kind 'event', with the
-- event name in event and path empty, or kind 'page', with the path
-- pattern in path (a '*' matches any run of characters) and event empty.
-- Deleting a goal deletes its row: nothing else refers to it, and the
-- conversions are computed from the events at query time.
-- PostgreSQL dialect, which DuckDB also runs.
CREATE SEQUENCE goals_id_seq START 1;
CREATE TABLE goals (
    id         BIGINT PRIMARY KEY DEFAULT nextval('goals_id_seq'),
    product_id BIGINT NOT NULL REFERENCES products (id),
    kind       VARCHAR NOT NULL,
    event      VARCHAR NOT NULL,
    path       VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX goals_product ON goals (product_id);
