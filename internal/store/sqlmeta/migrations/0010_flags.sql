-- Feature flags, per product (docs/flags.md). key is unique in the product
-- and never updated (an UPDATE of an indexed column is a delete and an
-- insert in DuckDB, which its unique index can refuse). rollout_bp is the
-- rollout in hundredths of a percent (0–10000), exact; variants is the
-- ordered arms as JSON: [{"key", "weight", "payload"?}], weights in percent.
-- flag_changes is the audit trail: one row a change, kept after the flag is
-- deleted (no foreign key, for that), changes a JSON list of
-- {"field", "from", "to"}. PostgreSQL dialect.
CREATE SEQUENCE flags_id_seq START 1;
CREATE TABLE flags (
    id          BIGINT PRIMARY KEY DEFAULT nextval('flags_id_seq'),
    product_id  BIGINT NOT NULL REFERENCES products (id),
    key         VARCHAR NOT NULL,
    name        VARCHAR NOT NULL,
    description VARCHAR NOT NULL,
    enabled     BOOLEAN NOT NULL,
    rollout_bp  INTEGER NOT NULL,
    variants    VARCHAR NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX flags_product_key ON flags (product_id, key);

CREATE SEQUENCE flag_changes_id_seq START 1;
CREATE TABLE flag_changes (
    id         BIGINT PRIMARY KEY DEFAULT nextval('flag_changes_id_seq'),
    product_id BIGINT NOT NULL,
    flag_id    BIGINT NOT NULL,
    flag_key   VARCHAR NOT NULL,
    action     VARCHAR NOT NULL,
    actor      VARCHAR NOT NULL,
    changes    VARCHAR NOT NULL,
    changed_at TIMESTAMP NOT NULL
);
CREATE INDEX flag_changes_product_flag ON flag_changes (product_id, flag_id);
