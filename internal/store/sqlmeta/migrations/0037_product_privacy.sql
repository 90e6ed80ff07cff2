-- What a product asks of its browser SDKs (docs/privacy.md, "Cookieless
-- mode" and "Opting out"): cookieless mode, and honouring Global Privacy
-- Control and Do Not Track. A product without a row asks neither, the
-- default. A table of its own, as product_time_zones (0029): DuckDB cannot
-- alter a table other tables reference by foreign key. PostgreSQL dialect,
-- which DuckDB also runs.
CREATE TABLE product_privacy (
    product_id      BIGINT PRIMARY KEY REFERENCES products (id),
    cookieless      BOOLEAN NOT NULL,
    respect_signals BOOLEAN NOT NULL
);
