-- A shared link to one board (docs/dashboard.md, "Dashboards"): a row
-- here makes the shared link link_id a board's link, which reaches that
-- board's tiles only, instead of the product's Overview. A sibling table
-- rather than a column of shared_links: DuckDB cannot alter a table with
-- indexes. Deleting a board revokes its links and keeps these rows, so
-- that a link of a deleted board never becomes an Overview link.
-- PostgreSQL dialect, which DuckDB also runs.
CREATE TABLE board_links (
    link_id  BIGINT PRIMARY KEY,
    board_id BIGINT NOT NULL
);
CREATE INDEX board_links_board ON board_links (board_id);
