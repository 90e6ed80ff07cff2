-- Cohort members (docs/queries.md, "Cohorts"): the distinct ids of one
-- generation of a cohort, written by a computation or an upload in
-- batches, then made current in the metadata store's cohorts row, then
-- the other generations deleted. Readers always name product, cohort and
-- generation, so none sees a set half written. No key: an upload's
-- duplicate ids are counted once by the readers (count(DISTINCT …)), and
-- the rows are only inserted and deleted.
CREATE TABLE cohort_members (
    product_id  BIGINT NOT NULL,
    cohort_id   BIGINT NOT NULL,
    generation  BIGINT NOT NULL,
    distinct_id VARCHAR NOT NULL
);
