-- Shared links (docs/dashboard.md, "Shared links"): a read-only public
-- link to one product's Overview. Like a query token, the link's secret
-- is stored only as its SHA-256 (hash), with a few shown characters
-- (prefix) to tell links apart; the optional password only as an argon2id
-- PHC string, as the dashboard accounts' are. A revoked link keeps its row
-- (revoked_at set), so that it answers "revoked" rather than "unknown".
-- PostgreSQL dialect, which DuckDB also runs.
CREATE SEQUENCE shared_links_id_seq START 1;
CREATE TABLE shared_links (
    id            BIGINT PRIMARY KEY DEFAULT nextval('shared_links_id_seq'),
    product_id    BIGINT NOT NULL REFERENCES products (id),
    name          VARCHAR NOT NULL,
    hash          BYTEA NOT NULL UNIQUE,
    prefix        VARCHAR NOT NULL,
    password_hash VARCHAR NOT NULL,
    created_at    TIMESTAMP NOT NULL,
    created_by    VARCHAR NOT NULL,
    revoked_at    TIMESTAMP
);
CREATE INDEX shared_links_product ON shared_links (product_id);
