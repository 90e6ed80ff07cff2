-- Dense user ids (DuckDB only). Each product numbers its users 0, 1, 2, …
-- in order of first appearance; events carry the number in uid. Queries
-- group and join on uid: DuckDB aggregates a small dense key with an array
-- instead of a hash table (perfect hashing), and counts unique users as
-- bits in a bitmap (bitstring_agg), several times faster than hashing the
-- 64-bit user_id. The server keeps the mapping in memory and appends new
-- users here before the events that use them.
CREATE TABLE users (
    product_id  BIGINT NOT NULL,
    distinct_id VARCHAR NOT NULL,
    uid         UINTEGER NOT NULL
);
INSERT INTO users
SELECT product_id, distinct_id,
       (row_number() OVER (PARTITION BY product_id ORDER BY min(ts), distinct_id) - 1)::UINTEGER
FROM events GROUP BY product_id, distinct_id;
ALTER TABLE events ADD COLUMN uid UINTEGER;
UPDATE events SET uid = u.uid FROM users u
WHERE u.product_id = events.product_id AND u.distinct_id = events.distinct_id;
