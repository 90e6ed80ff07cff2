-- Dashboards (docs/dashboard.md, "Dashboards"): a product's named boards of
-- saved insights. A board's date range (date_from, date_to, '' for the
-- range on screen) and filters (a JSON array of the query API's filters,
-- as validated) apply to every tile when it runs. A tile shows one saved
-- query of the board's product (query_id) or one of the Overview's cards
-- (card, query_id NULL); position orders the tiles, width (1-4 columns)
-- and height (1 small, 2 large) size them. No foreign keys between these
-- tables or to saved_queries: DuckDB checks a key against the rows a
-- transaction started with, so deleting a saved query or a board with its
-- tiles in one transaction would be refused; the store deletes the tiles
-- in the same transaction instead (sqlmeta/boards.go). PostgreSQL dialect,
-- which DuckDB also runs.
CREATE SEQUENCE boards_id_seq START 1;
CREATE TABLE boards (
    id          BIGINT PRIMARY KEY DEFAULT nextval('boards_id_seq'),
    product_id  BIGINT NOT NULL REFERENCES products (id),
    name        VARCHAR NOT NULL,
    description VARCHAR NOT NULL,
    date_from   VARCHAR NOT NULL,
    date_to     VARCHAR NOT NULL,
    filters     VARCHAR NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL,
    created_by  VARCHAR NOT NULL
);
CREATE INDEX boards_product ON boards (product_id);
CREATE SEQUENCE board_tiles_id_seq START 1;
CREATE TABLE board_tiles (
    id         BIGINT PRIMARY KEY DEFAULT nextval('board_tiles_id_seq'),
    board_id   BIGINT NOT NULL,
    product_id BIGINT NOT NULL,
    query_id   BIGINT,
    card       VARCHAR NOT NULL,
    position   INTEGER NOT NULL,
    width      INTEGER NOT NULL,
    height     INTEGER NOT NULL
);
CREATE INDEX board_tiles_board ON board_tiles (board_id);
CREATE INDEX board_tiles_query ON board_tiles (query_id);
