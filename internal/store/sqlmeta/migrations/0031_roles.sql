-- Roles per workspace (docs/security.md, "Roles"): admin, member and
-- viewer. The owner that first-run setup created becomes an admin, who may
-- do everything the owner could.
UPDATE workspace_members SET role = 'admin' WHERE role = 'owner';

-- A removed user keeps their row, so that the rows that name them stay
-- valid, but can neither sign in nor be found: DuckDB can delete neither a
-- row other tables reference nor alter a table that is referenced, so the
-- mark is a table of its own. Adding the email again takes the row back.
-- PostgreSQL dialect, which DuckDB also runs.
CREATE TABLE dashboard_users_removed (
    user_id    BIGINT PRIMARY KEY REFERENCES dashboard_users (id),
    removed_at TIMESTAMP NOT NULL
);
