-- Saved queries: a named funnel, trend or retention definition, kept per
-- product and re-run from the dashboard's Saved list. definition is the
-- query's request body as validated when it was saved. PostgreSQL dialect.
CREATE SEQUENCE saved_queries_id_seq START 1;
CREATE TABLE saved_queries (
    id         BIGINT PRIMARY KEY DEFAULT nextval('saved_queries_id_seq'),
    product_id BIGINT NOT NULL REFERENCES products (id),
    kind       VARCHAR NOT NULL,
    name       VARCHAR NOT NULL,
    definition VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
