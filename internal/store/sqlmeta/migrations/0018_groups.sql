-- Group profiles (companies, teams: docs/ingest.md, "Groups"), per product:
-- one row per group type and key, with the properties last sent for it,
-- merged over the earlier ones, as a JSON object in text. The primary key
-- is never updated, and no index holds a column that is (properties,
-- updated_at): in DuckDB an UPDATE of an indexed column is a delete and an
-- insert, which its unique index can refuse. PostgreSQL dialect.
CREATE TABLE groups (
    product_id  BIGINT NOT NULL REFERENCES products (id),
    group_type  VARCHAR NOT NULL,
    group_key   VARCHAR NOT NULL,
    properties  VARCHAR NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (product_id, group_type, group_key)
);
