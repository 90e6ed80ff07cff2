-- Metadata: workspaces, products and credentials. Written in the PostgreSQL
-- dialect that DuckDB also runs, so the PostgreSQL metadata store can apply
-- the same file.
CREATE SEQUENCE workspaces_id_seq START 1;
CREATE TABLE workspaces (
    id         BIGINT PRIMARY KEY DEFAULT nextval('workspaces_id_seq'),
    name       VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE SEQUENCE products_id_seq START 1;
CREATE TABLE products (
    id           BIGINT PRIMARY KEY DEFAULT nextval('products_id_seq'),
    workspace_id BIGINT NOT NULL REFERENCES workspaces (id),
    name         VARCHAR NOT NULL,
    created_at   TIMESTAMP NOT NULL
);

-- Only the SHA-256 of a key is stored; prefix is the first characters of
-- the plaintext so that people can tell keys apart in a list.
CREATE SEQUENCE api_keys_id_seq START 1;
CREATE TABLE api_keys (
    id           BIGINT PRIMARY KEY DEFAULT nextval('api_keys_id_seq'),
    product_id   BIGINT NOT NULL REFERENCES products (id),
    hash         BYTEA NOT NULL UNIQUE,
    prefix       VARCHAR NOT NULL,
    env          VARCHAR NOT NULL,
    status       VARCHAR NOT NULL,
    rate_limit   INTEGER NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP
);

CREATE SEQUENCE query_tokens_id_seq START 1;
CREATE TABLE query_tokens (
    id           BIGINT PRIMARY KEY DEFAULT nextval('query_tokens_id_seq'),
    product_id   BIGINT NOT NULL REFERENCES products (id),
    hash         BYTEA NOT NULL UNIQUE,
    prefix       VARCHAR NOT NULL,
    status       VARCHAR NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP
);
