-- The people list's order on PostgreSQL (docs/queries.md, "People"): a
-- product's persons latest seen first, ties by distinct id, read from
-- this index a page at a time instead of sorting every person of the
-- product. PostgreSQL only: DuckDB sorts a scan of the columns fast and
-- uses no index for an ORDER BY, and in DuckDB an index on last_seen,
-- which every profile write updates, would make each update a delete and
-- an insert (migration 0041).
CREATE INDEX persons_by_last_seen ON persons (product_id, last_seen DESC, distinct_id);
