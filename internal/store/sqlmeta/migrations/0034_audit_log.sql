-- The audit log of privacy operations (docs/privacy.md, "The audit log"):
-- who asked (actor: "user:ID email", "token:ID" or "admin-socket"), what
-- (action: person_deletion_requested, person_deletion_done,
-- person_export, or a setting's change), on which product, when, and a
-- summary that never names a person: a deletion records how many ids it
-- was asked for, not the ids, since a log that kept them would keep the
-- very personal data the deletion removed. Rows are only appended and
-- read a page at a time, newest first, by product.
-- PostgreSQL dialect, which DuckDB also runs.
CREATE SEQUENCE audit_log_id_seq START 1;
CREATE TABLE audit_log (
    id         BIGINT PRIMARY KEY DEFAULT nextval('audit_log_id_seq'),
    product_id BIGINT NOT NULL,
    actor      VARCHAR NOT NULL,
    action     VARCHAR NOT NULL,
    summary    VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX audit_log_product ON audit_log (product_id, id);
