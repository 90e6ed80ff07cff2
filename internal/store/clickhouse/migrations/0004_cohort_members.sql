-- Cohort members (docs/queries.md, "Cohorts"): the distinct ids of one
-- generation of a cohort. Readers always name product, cohort and
-- generation, so none sees a set half written; older generations are
-- deleted by a mutation once a newer one is current.
--
-- Not an events table: the store fills in {cohort_table} and
-- {cohort_engine} beside each events table (migrations.go, tableSet). On
-- one server, cohort_members with the MergeTree engine; on a cluster,
-- cohort_members_local on each shard and a Distributed cohort_members
-- over them on every server, sharded by the id's hash, so that a query on
-- any node reads every member (item 4's filters use GLOBAL IN).
CREATE TABLE IF NOT EXISTS `{db}`.{cohort_table} (
    product_id  Int64,
    cohort_id   Int64,
    generation  Int64,
    distinct_id String
) {cohort_engine};
