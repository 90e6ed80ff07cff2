-- What the per-product sourcemap quota needs (docs/errors.md, "Limits of
-- an upload"). minified_size is each upload's minified file's length, so
-- that a product's usage is a sum of two small columns rather than a read
-- of every file; uploads stored before count theirs in characters, which
-- are its bytes for ASCII. sourcemap_locks holds one row a product, which
-- every upload's transaction updates first: two uploads of one product
-- then take turns across the nodes of a cluster (PostgreSQL makes the
-- second wait until the first commits, and its usage then counts the
-- first's upload); writes counts the uploads made, nothing reads it.
-- PostgreSQL dialect.
ALTER TABLE sourcemaps ADD COLUMN minified_size BIGINT DEFAULT 0;
UPDATE sourcemaps SET minified_size = coalesce(length(minified), 0);

CREATE TABLE sourcemap_locks (
    product_id BIGINT PRIMARY KEY,
    writes     BIGINT NOT NULL
);
