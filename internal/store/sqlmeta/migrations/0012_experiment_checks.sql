-- What the sample-ratio check needs (docs/experiments.md). started_at is
-- when an experiment was first started (the results read from that day when
-- it has no start date); sample_ratio is the latest check with enough
-- exposures, as JSON {"checkedAt", "pValue", "mismatch", "arms"}, or NULL.
-- leases lets one node at a time run a periodic job: a node holds the lease
-- named for the job until expires_at, and renews it while it runs.
-- PostgreSQL dialect.
ALTER TABLE experiments ADD COLUMN started_at TIMESTAMP;
ALTER TABLE experiments ADD COLUMN sample_ratio VARCHAR;

CREATE TABLE leases (
    name       VARCHAR PRIMARY KEY,
    holder     VARCHAR NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
