-- How many sessions each product keeps (its rows of replay_sessions), in
-- the product's row of replay_products, so that an append that starts
-- sessions reads the count from the row it locks for the cap on sessions
-- (--replay-max-sessions, docs/replay.md, "Limits") rather than counting
-- up to the cap's rows of replay_sessions under that lock, once per request
-- that starts one. The transactions that add or remove sessions' rows keep
-- it in step, in the same transaction (sqlmeta/replay.go): an append adds
-- the sessions it started (and takes off those it refused again), a
-- delete takes off the rows it deleted. Filled from the sessions already
-- stored; every product that has one gets its row. The column is not
-- declared NOT NULL, which DuckDB cannot add to a table, but every row has
-- a count: the default, then what the statements add. PostgreSQL dialect,
-- which DuckDB also runs (the tables stay empty on embedded servers, whose
-- replays are segment files).
ALTER TABLE replay_products ADD COLUMN sessions BIGINT DEFAULT 0;
INSERT INTO replay_products (product_id)
SELECT DISTINCT product_id FROM replay_sessions
ON CONFLICT (product_id) DO NOTHING;
UPDATE replay_products SET sessions = (
    SELECT count(*) FROM replay_sessions WHERE replay_sessions.product_id = replay_products.product_id
);
