-- A flag's targeting conditions (docs/flags.md, "Targeting"): the JSON
-- list [{"type", "trait", "op", "value"}], all of which must hold for a
-- user to get the flag. A flag without a row has none. A sibling table
-- rather than a column of flags: DuckDB cannot alter a table with indexes
-- (flags has its unique key index). The row is updated in place (the
-- conditions column has no index) and deleted with its flag. PostgreSQL
-- dialect, which DuckDB also runs.
CREATE TABLE flag_conditions (
    flag_id    BIGINT PRIMARY KEY,
    conditions VARCHAR NOT NULL
);
