-- One row per product that has started a recorded session: what an append
-- that starts sessions locks (ON CONFLICT DO UPDATE of its row) while it
-- counts the product's rows of replay_sessions against the cap on sessions
-- (--replay-max-sessions, docs/replay.md, "Limits"). Taken after the
-- sessions' rows, and only by appends that started one, so that appends
-- to sessions already stored never wait for it and two appends cannot
-- lock rows in opposite orders. The count is always read from
-- replay_sessions, so nothing here can drift from it. PostgreSQL dialect,
-- which DuckDB also runs (the table stays empty on embedded servers, whose
-- replays are segment files).
CREATE TABLE replay_products (
    product_id BIGINT PRIMARY KEY
);
