-- Dense event-name ids (DuckDB only). Every event name gets a number, in
-- order of first appearance, and events carry it in eid. Queries filter on
-- the integer, which DuckDB compares faster than the string (about a fifth
-- off a funnel's scans on the benchmark). Like users, the server keeps the
-- mapping in memory and stores new names before the events that use them.
CREATE TABLE event_names (
    name VARCHAR NOT NULL,
    eid  UINTEGER NOT NULL
);
INSERT INTO event_names
SELECT event, (row_number() OVER (ORDER BY min(received_at), event) - 1)::UINTEGER
FROM events GROUP BY event;
ALTER TABLE events ADD COLUMN eid UINTEGER;
UPDATE events SET eid = n.eid FROM event_names n WHERE n.name = events.event;
