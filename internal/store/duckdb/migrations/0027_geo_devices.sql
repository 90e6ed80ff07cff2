-- Where the client was and the size of its screen, found at ingest
-- (docs/ingest.md, "Geography" and "Devices"): the country's ISO code, the
-- region and city when the GeoIP database names them, and the viewport's
-- size class. NULL when unknown, and on events stored before this
-- migration. The client address itself is never stored.
ALTER TABLE events ADD COLUMN country VARCHAR;
ALTER TABLE events ADD COLUMN region VARCHAR;
ALTER TABLE events ADD COLUMN city VARCHAR;
ALTER TABLE events ADD COLUMN screen_class VARCHAR;
