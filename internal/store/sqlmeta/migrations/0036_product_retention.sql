-- A product's retention periods (docs/privacy.md, "Retention"), in days:
-- how long its events, its error occurrences ($exception events) and its
-- session replays are kept before the retention job deletes them. 0 is
-- the default (events and errors forever, replays for the server-wide
-- --replay-retention); a product without a row has every default. A table
-- of its own, as product_time_zones (0029): DuckDB cannot alter a table
-- other tables reference by foreign key. PostgreSQL dialect, which DuckDB
-- also runs.
CREATE TABLE product_retention (
    product_id   BIGINT PRIMARY KEY REFERENCES products (id),
    events_days  INTEGER NOT NULL,
    errors_days  INTEGER NOT NULL,
    replays_days INTEGER NOT NULL
);
