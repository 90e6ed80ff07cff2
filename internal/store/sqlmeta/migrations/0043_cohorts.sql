-- Cohorts (docs/queries.md, "Cohorts"): a product's saved sets of
-- persons. kind is static (members uploaded) or dynamic (members computed
-- from definition, a JSON object of groups of conditions; '' for static).
-- The members live in the event store's cohort_members, one set per
-- generation: generation is the set readers use (0 before the first),
-- last_generation the latest handed out to a computation or upload, size
-- and computed_at describe the current set. state is pending, computing,
-- ready or failed (error says why); started_at is when the running
-- computation began, so that one a dead node left behind is taken over.
-- PostgreSQL dialect, which DuckDB also runs.
CREATE SEQUENCE cohorts_id_seq START 1;
CREATE TABLE cohorts (
    id              BIGINT PRIMARY KEY DEFAULT nextval('cohorts_id_seq'),
    product_id      BIGINT NOT NULL REFERENCES products (id),
    name            VARCHAR NOT NULL,
    description     VARCHAR NOT NULL,
    kind            VARCHAR NOT NULL,
    definition      VARCHAR NOT NULL,
    generation      BIGINT NOT NULL,
    last_generation BIGINT NOT NULL,
    size            BIGINT NOT NULL,
    computed_at     TIMESTAMP,
    state           VARCHAR NOT NULL,
    error           VARCHAR NOT NULL,
    started_at      TIMESTAMP,
    created_by      VARCHAR NOT NULL,
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL
);
CREATE INDEX cohorts_product ON cohorts (product_id);
