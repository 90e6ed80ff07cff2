-- The horizons of the kept visits (migration 0030, and
-- internal/store/duckdb/visits.go, "Across a restart"): written by a
-- clean close of the store in the same transaction that drops the visits
-- a pending late mark can touch, and read and deleted by the next open in
-- one transaction. A row says that every visit of its product and
-- environment starting before horizon is in the table visits, and that
-- an event stored with a time before settled is late. A store that did
-- not close cleanly leaves no row, and its visits are built again.
CREATE TABLE visit_horizons (
    product_id BIGINT NOT NULL,
    env        VARCHAR NOT NULL,
    horizon    TIMESTAMP NOT NULL,
    settled    TIMESTAMP NOT NULL,
    PRIMARY KEY (product_id, env)
);
