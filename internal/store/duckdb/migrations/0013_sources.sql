-- Where a visit came from, found at ingest (docs/ingest.md, "Sources and
-- channels"): the source (a known name or the referring domain), the
-- channel, and the page URL's UTM tags. NULL when they do not apply, and
-- on events stored before this migration.
ALTER TABLE events ADD COLUMN source VARCHAR;
ALTER TABLE events ADD COLUMN channel VARCHAR;
ALTER TABLE events ADD COLUMN utm_source VARCHAR;
ALTER TABLE events ADD COLUMN utm_medium VARCHAR;
ALTER TABLE events ADD COLUMN utm_campaign VARCHAR;
