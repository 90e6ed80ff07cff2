-- Sourcemaps, per product, release and minified file URL (docs/errors.md,
-- "Sourcemaps"): in the metadata store so that every node has them. map
-- and minified are text (JSON and JavaScript, checked UTF-8 at upload);
-- minified is NULL when only the map was uploaded. An upload for the same
-- product, release and URL replaces the earlier one, in one transaction.
-- PostgreSQL dialect.
CREATE SEQUENCE sourcemaps_id_seq START 1;
CREATE TABLE sourcemaps (
    id         BIGINT PRIMARY KEY DEFAULT nextval('sourcemaps_id_seq'),
    product_id BIGINT NOT NULL REFERENCES products (id),
    release    VARCHAR NOT NULL,
    url        VARCHAR NOT NULL,
    size       BIGINT NOT NULL,
    map        VARCHAR NOT NULL,
    minified   VARCHAR,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX sourcemaps_release ON sourcemaps (product_id, release, url);
