-- Where a visit came from, found at ingest (docs/ingest.md, "Sources and
-- channels"): the source, the channel and the page URL's UTM tags; '' when
-- they do not apply, and on events stored before this migration. Applied
-- to each table of the deployment (events_local and the Distributed events
-- alike), so that both know the columns.
--
-- 18.16 workaround: it has no ADD COLUMN IF NOT EXISTS (current releases
-- do), so the five columns are added by one ALTER, which ClickHouse applies
-- whole or not at all, and migrateTable takes "the column exists" from a
-- run that stopped before its record as done (alreadyApplied).
ALTER TABLE `{db}`.{table}
    ADD COLUMN source String,
    ADD COLUMN channel String,
    ADD COLUMN utm_source String,
    ADD COLUMN utm_medium String,
    ADD COLUMN utm_campaign String;
