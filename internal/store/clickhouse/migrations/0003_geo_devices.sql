-- Where the client was and the size of its screen, found at ingest
-- (docs/ingest.md, "Geography" and "Devices"): the country's ISO code, the
-- region and city when the GeoIP database names them, and the viewport's
-- size class; '' when unknown, and on events stored before this migration.
-- The client address itself is never stored. Applied to each table of the
-- deployment, as 0002 is, and in one ALTER for the same reason (18.16 has
-- no ADD COLUMN IF NOT EXISTS; alreadyApplied).
ALTER TABLE `{db}`.{table}
    ADD COLUMN country String,
    ADD COLUMN region String,
    ADD COLUMN city String,
    ADD COLUMN screen_class String;
