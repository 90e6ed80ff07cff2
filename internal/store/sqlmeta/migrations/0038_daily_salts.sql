-- The cookieless mode's daily salts (docs/privacy.md, "Cookieless mode"):
-- one random salt per UTC day (days since 1970-01-01), shared by every
-- node so that they derive the same visitor ids. A salt is deleted when
-- its day is over (DailySalt keeps the previous day's as well, for a node
-- whose clock runs behind), so that no visitor id can be computed again.
-- PostgreSQL dialect, which DuckDB also runs.
CREATE TABLE daily_salts (
    day  BIGINT PRIMARY KEY,
    salt BYTEA NOT NULL
);
