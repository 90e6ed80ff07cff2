-- Person deletion jobs (docs/privacy.md, "Deleting a person"). A job is
-- pending until a runner takes it, running while it deletes, then done or
-- failed; a job left pending or running by a crash is run again at the
-- next start (every step of a deletion may be repeated). distinct_ids
-- holds the ids (a JSON array) only while the job may still need them:
-- the runner empties it when the job ends, so that a finished job keeps
-- their number and the counts per kind of data (counts, a JSON object),
-- never who they were.
-- PostgreSQL dialect, which DuckDB also runs.
CREATE SEQUENCE person_deletions_id_seq START 1;
CREATE TABLE person_deletions (
    id           BIGINT PRIMARY KEY DEFAULT nextval('person_deletions_id_seq'),
    product_id   BIGINT NOT NULL,
    status       VARCHAR NOT NULL,
    distinct_ids VARCHAR NOT NULL,
    id_count     BIGINT NOT NULL,
    counts       VARCHAR NOT NULL,
    error        VARCHAR NOT NULL,
    actor        VARCHAR NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL
);
CREATE INDEX person_deletions_product ON person_deletions (product_id, id);
CREATE INDEX person_deletions_status ON person_deletions (status);
