-- What people decided about error groups (docs/errors.md, "Groups"): one
-- row per product and fingerprint once its status was set. A group without
-- a row is open. resolved_release is the release a resolved group was fixed
-- in; an event of another release after changed_at reopens it (a
-- regression, decided when groups are listed). PostgreSQL dialect.
CREATE TABLE error_groups (
    product_id       BIGINT NOT NULL REFERENCES products (id),
    fingerprint      VARCHAR NOT NULL,
    status           VARCHAR NOT NULL,
    resolved_release VARCHAR NOT NULL,
    changed_at       TIMESTAMP NOT NULL,
    changed_by       VARCHAR NOT NULL,
    PRIMARY KEY (product_id, fingerprint)
);
