-- Annotations: markers on time-series charts (deploys, incidents), kept per
-- workspace. A workspace annotation (query_id NULL) is drawn on every chart;
-- a query annotation only on the chart of saved query query_id. query_id has
-- no foreign key: DuckDB cannot cascade a delete, so deleting a saved query
-- deletes its annotations in the same transaction instead (sqlmeta).
-- marked_at is the marker's position, UTC. PostgreSQL dialect.
CREATE SEQUENCE annotations_id_seq START 1;
CREATE TABLE annotations (
    id           BIGINT PRIMARY KEY DEFAULT nextval('annotations_id_seq'),
    workspace_id BIGINT NOT NULL REFERENCES workspaces (id),
    scope        VARCHAR NOT NULL,
    query_id     BIGINT,
    marked_at    TIMESTAMP NOT NULL,
    label        VARCHAR NOT NULL,
    description  VARCHAR NOT NULL,
    color        VARCHAR NOT NULL,
    created_by   VARCHAR NOT NULL,
    created_at   TIMESTAMP NOT NULL
);
CREATE INDEX annotations_workspace_marked ON annotations (workspace_id, marked_at);
CREATE INDEX annotations_query ON annotations (query_id);
