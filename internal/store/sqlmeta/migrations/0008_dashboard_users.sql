-- Dashboard users, their workspace memberships and their sign-in sessions
-- (internal/auth). The table is dashboard_users because DuckDB's events
-- side already has a users table (0004). password_hash is an argon2id PHC
-- string; sessions keep only the SHA-256 of the random token the cookie
-- carries. PostgreSQL dialect, the same file in both stores.
CREATE SEQUENCE dashboard_users_id_seq START 1;
CREATE TABLE dashboard_users (
    id            BIGINT PRIMARY KEY DEFAULT nextval('dashboard_users_id_seq'),
    email         VARCHAR NOT NULL UNIQUE,
    password_hash VARCHAR NOT NULL,
    created_at    TIMESTAMP NOT NULL
);

CREATE TABLE workspace_members (
    workspace_id BIGINT NOT NULL REFERENCES workspaces (id),
    user_id      BIGINT NOT NULL REFERENCES dashboard_users (id),
    role         VARCHAR NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);

-- First-run setup creates the owner once. This one-row table makes that
-- hold under concurrency: the setup transaction inserts row 1 beside the
-- user, so a second setup racing it fails on the primary key and commits
-- nothing, on either database.
CREATE TABLE dashboard_setup (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    owner_id     BIGINT NOT NULL REFERENCES dashboard_users (id),
    completed_at TIMESTAMP NOT NULL
);

-- expires_at has no index: DuckDB updates an indexed column as a delete and
-- an insert, which its primary-key check refuses within one transaction,
-- and the expiry sweep is rare and the table small.
CREATE TABLE dashboard_sessions (
    token_hash BYTEA PRIMARY KEY,
    user_id    BIGINT NOT NULL REFERENCES dashboard_users (id),
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
