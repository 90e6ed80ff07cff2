-- Invitations to a workspace (docs/security.md, "Invites"). The link
-- carries a random token; only its SHA-256 is stored. An invite is deleted
-- when it is accepted or revoked, so that it serves once, and is refused
-- after expires_at. created_by names the admin who invited, without a
-- foreign key, so that removing that admin does not need to touch it.
-- PostgreSQL dialect, which DuckDB also runs.
CREATE SEQUENCE workspace_invites_id_seq START 1;
CREATE TABLE workspace_invites (
    id           BIGINT PRIMARY KEY DEFAULT nextval('workspace_invites_id_seq'),
    workspace_id BIGINT NOT NULL REFERENCES workspaces (id),
    email        VARCHAR NOT NULL,
    role         VARCHAR NOT NULL,
    token_hash   BYTEA NOT NULL UNIQUE,
    created_by   BIGINT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP NOT NULL
);
CREATE INDEX workspace_invites_workspace ON workspace_invites (workspace_id);
