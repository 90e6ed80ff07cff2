-- A product's time zone (docs/queries.md, "Time zones"): an IANA name
-- its dates and buckets follow. A product without a row is in UTC, the
-- default, so that existing products answer as before. A table of its own
-- rather than a column of products: DuckDB cannot alter a table other
-- tables reference by foreign key. PostgreSQL dialect, which DuckDB also
-- runs.
CREATE TABLE product_time_zones (
    product_id BIGINT PRIMARY KEY REFERENCES products (id),
    time_zone  VARCHAR NOT NULL
);
