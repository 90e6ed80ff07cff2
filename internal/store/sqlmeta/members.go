package sqlmeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"strata/internal/analytics"
)

// Workspace members, their roles, removed users and invites (migrations
// 0031 and 0032).

// Memberships returns a user's roles, in workspace ID order.
func (s *Store) Memberships(ctx context.Context, userID int64) ([]analytics.Membership, error) {
	return QueryAll(ctx, s.conn(), "listing a user's memberships", scanMembership,
		`SELECT workspace_id, role FROM workspace_members WHERE user_id = $1 ORDER BY workspace_id`, userID)
}

func scanMembership(r Scanner) (analytics.Membership, error) {
	var m analytics.Membership
	err := r.Scan(&m.WorkspaceID, &m.Role)
	return m, err
}

// WorkspaceMembers returns a workspace's members, oldest first.
func (s *Store) WorkspaceMembers(ctx context.Context, workspaceID int64) ([]analytics.Member, error) {
	return QueryAll(ctx, s.conn(), "listing members", func(r Scanner) (analytics.Member, error) {
		var m analytics.Member
		err := r.Scan(&m.UserID, &m.Email, &m.Role, &m.CreatedAt)
		return m, err
	}, `SELECT m.user_id, u.email, m.role, m.created_at
	    FROM workspace_members m JOIN dashboard_users u ON u.id = m.user_id
	    WHERE m.workspace_id = $1 ORDER BY m.created_at, m.user_id`, workspaceID)
}

// memberRole returns a member's role in a workspace, or ErrNotFound.
func memberRole(ctx context.Context, q Querier, workspaceID, userID int64) (analytics.Role, error) {
	var role analytics.Role
	err := q.QueryRowContext(ctx, `SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2`,
		workspaceID, userID).Scan(&role)
	if err != nil {
		return role, notFound(err, "member")
	}
	return role, nil
}

// otherAdmins counts a workspace's admins other than userID.
func otherAdmins(ctx context.Context, q Querier, workspaceID, userID int64) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM workspace_members WHERE workspace_id = $1 AND role = $2 AND user_id <> $3`,
		workspaceID, string(analytics.RoleAdmin), userID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting admins: %w", err)
	}
	return n, nil
}

// SetMemberRole changes a member's role, unless that would leave the
// workspace without an admin. The check and the change run in one
// transaction; two admins demoting each other at the same instant on
// PostgreSQL could still both pass it (docs/security.md, "Roles").
func (s *Store) SetMemberRole(ctx context.Context, workspaceID, userID int64, role analytics.Role) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("changing a role: %w", err)
	}
	defer tx.Rollback()
	old, err := memberRole(ctx, tx, workspaceID, userID)
	if err != nil {
		return err
	}
	if old == role {
		return nil
	}
	if old == analytics.RoleAdmin {
		if n, err := otherAdmins(ctx, tx, workspaceID, userID); err != nil {
			return err
		} else if n == 0 {
			return analytics.ErrLastAdmin
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE workspace_members SET role = $1 WHERE workspace_id = $2 AND user_id = $3`,
		string(role), workspaceID, userID); err != nil {
		return fmt.Errorf("changing a role: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("changing a role: %w", err)
	}
	return nil
}

// RemoveMember takes a user out of a workspace and ends their sessions; a
// user left in no workspace is marked removed.
func (s *Store) RemoveMember(ctx context.Context, workspaceID, userID int64) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("removing a member: %w", err)
	}
	defer tx.Rollback()
	role, err := memberRole(ctx, tx, workspaceID, userID)
	if err != nil {
		return err
	}
	if role == analytics.RoleAdmin {
		if n, err := otherAdmins(ctx, tx, workspaceID, userID); err != nil {
			return err
		} else if n == 0 {
			return analytics.ErrLastAdmin
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID); err != nil {
		return fmt.Errorf("removing a member: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("ending a removed member's sessions: %w", err)
	}
	var left int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM workspace_members WHERE user_id = $1`, userID).Scan(&left); err != nil {
		return fmt.Errorf("removing a member: %w", err)
	}
	if left == 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO dashboard_users_removed (user_id, removed_at) VALUES ($1, $2)`, userID, s.stamp()); err != nil {
			return fmt.Errorf("removing a member: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("removing a member: %w", err)
	}
	return nil
}

// CreateUser stores a user with memberships, or takes back the row of a
// removed user with that email.
func (s *Store) CreateUser(ctx context.Context, u *analytics.User, memberships []analytics.Membership) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("creating a user: %w", err)
	}
	defer tx.Rollback()
	if err := s.createUser(ctx, tx, u, memberships); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("creating a user: %w", err)
	}
	return nil
}

func (s *Store) createUser(ctx context.Context, tx Querier, u *analytics.User, memberships []analytics.Membership) error {
	u.CreatedAt = s.stamp()
	var id int64
	var removed bool
	err := tx.QueryRowContext(ctx,
		`SELECT id, id IN (SELECT user_id FROM dashboard_users_removed) FROM dashboard_users WHERE email = $1`, u.Email).Scan(&id, &removed)
	switch {
	case err == nil && !removed:
		return analytics.ErrUserExists
	case err == nil:
		// The row of a removed user: theirs again, with the new password.
		u.ID = id
		if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_users_removed WHERE user_id = $1`, id); err != nil {
			return fmt.Errorf("creating a user: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE dashboard_users SET password_hash = $1 WHERE id = $2`, u.PasswordHash, id); err != nil {
			return fmt.Errorf("creating a user: %w", err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT created_at FROM dashboard_users WHERE id = $1`, id).Scan(&u.CreatedAt); err != nil {
			return fmt.Errorf("creating a user: %w", err)
		}
	case errors.Is(err, sql.ErrNoRows):
		if err := tx.QueryRowContext(ctx,
			`INSERT INTO dashboard_users (email, password_hash, created_at) VALUES ($1, $2, $3) RETURNING id`,
			u.Email, u.PasswordHash, u.CreatedAt).Scan(&u.ID); err != nil {
			return fmt.Errorf("creating a user: %w", err)
		}
	default:
		return fmt.Errorf("creating a user: %w", err)
	}
	for _, m := range memberships {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO workspace_members (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)`,
			m.WorkspaceID, u.ID, string(m.Role), s.stamp()); err != nil {
			return fmt.Errorf("adding a member: %w", err)
		}
	}
	return nil
}

// ListUsers returns the current users with their memberships.
func (s *Store) ListUsers(ctx context.Context) ([]analytics.UserAccount, error) {
	users, err := QueryAll(ctx, s.conn(), "listing users", scanUser,
		`SELECT `+userColumns+` FROM dashboard_users WHERE true`+currentUser+` ORDER BY id`)
	if err != nil {
		return nil, err
	}
	out := make([]analytics.UserAccount, 0, len(users))
	for _, u := range users {
		ms, err := s.Memberships(ctx, u.ID)
		if err != nil {
			return nil, err
		}
		if ms == nil {
			ms = []analytics.Membership{}
		}
		out = append(out, analytics.UserAccount{User: u, Memberships: ms})
	}
	return out, nil
}

// RemoveUser ends a user's sessions and memberships and marks them
// removed, unless they are the last admin of a workspace.
func (s *Store) RemoveUser(ctx context.Context, userID int64) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("removing a user: %w", err)
	}
	defer tx.Rollback()
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM dashboard_users WHERE id = $1`+currentUser, userID).Scan(&n); err != nil {
		return fmt.Errorf("removing a user: %w", err)
	} else if n == 0 {
		return fmt.Errorf("user %d: %w", userID, analytics.ErrNotFound)
	}
	ms, err := QueryAll(ctx, tx, "listing a user's memberships", scanMembership,
		`SELECT workspace_id, role FROM workspace_members WHERE user_id = $1`, userID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Role != analytics.RoleAdmin {
			continue
		}
		if n, err := otherAdmins(ctx, tx, m.WorkspaceID, userID); err != nil {
			return err
		} else if n == 0 {
			return analytics.ErrLastAdmin
		}
	}
	for _, q := range []string{
		`DELETE FROM workspace_members WHERE user_id = $1`,
		`DELETE FROM dashboard_sessions WHERE user_id = $1`,
	} {
		if _, err := tx.ExecContext(ctx, q, userID); err != nil {
			return fmt.Errorf("removing a user: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO dashboard_users_removed (user_id, removed_at) VALUES ($1, $2)`, userID, s.stamp()); err != nil {
		return fmt.Errorf("removing a user: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("removing a user: %w", err)
	}
	return nil
}

// SetPassword replaces a user's password hash and ends their other
// sessions.
func (s *Store) SetPassword(ctx context.Context, userID int64, hash string, keep []byte) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("setting a password: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE dashboard_users SET password_hash = $1 WHERE id = $2`+currentUser, hash, userID)
	if err != nil {
		return fmt.Errorf("setting a password: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("user %d: %w", userID, analytics.ErrNotFound)
	}
	if keep == nil {
		keep = []byte{}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE user_id = $1 AND token_hash <> $2`, userID, keep); err != nil {
		return fmt.Errorf("ending a user's other sessions: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("setting a password: %w", err)
	}
	return nil
}

const inviteColumns = `id, workspace_id, email, role, token_hash, created_by, created_at, expires_at`

func scanInvite(r Scanner) (analytics.Invite, error) {
	var inv analytics.Invite
	err := r.Scan(&inv.ID, &inv.WorkspaceID, &inv.Email, &inv.Role, &inv.TokenHash, &inv.CreatedBy, &inv.CreatedAt, &inv.ExpiresAt)
	return inv, err
}

// CreateInvite stores an invite.
func (s *Store) CreateInvite(ctx context.Context, inv *analytics.Invite) error {
	if err := s.conn().QueryRowContext(ctx,
		`INSERT INTO workspace_invites (workspace_id, email, role, token_hash, created_by, created_at, expires_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		inv.WorkspaceID, inv.Email, string(inv.Role), inv.TokenHash, inv.CreatedBy, utc(inv.CreatedAt), utc(inv.ExpiresAt)).Scan(&inv.ID); err != nil {
		return fmt.Errorf("creating an invite: %w", err)
	}
	return nil
}

// ListInvites returns a workspace's invites, oldest first.
func (s *Store) ListInvites(ctx context.Context, workspaceID int64) ([]analytics.Invite, error) {
	return QueryAll(ctx, s.conn(), "listing invites", scanInvite,
		`SELECT `+inviteColumns+` FROM workspace_invites WHERE workspace_id = $1 ORDER BY id`, workspaceID)
}

// DeleteInvite revokes one of a workspace's invites.
func (s *Store) DeleteInvite(ctx context.Context, workspaceID, id int64) error {
	res, err := s.conn().ExecContext(ctx, `DELETE FROM workspace_invites WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err != nil {
		return fmt.Errorf("revoking an invite: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("invite %d: %w", id, analytics.ErrNotFound)
	}
	return nil
}

// AcceptInvite consumes a valid invite and creates its user, in one
// transaction. The invite is deleted first: of two acceptances racing,
// the second deletes nothing (PostgreSQL) or fails on the conflict
// (DuckDB), and either way creates no user.
func (s *Store) AcceptInvite(ctx context.Context, hash []byte, now time.Time, u *analytics.User) (analytics.Invite, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return analytics.Invite{}, fmt.Errorf("accepting an invite: %w", err)
	}
	defer tx.Rollback()
	inv, err := queryOne(ctx, tx, "invite", scanInvite,
		`DELETE FROM workspace_invites WHERE token_hash = $1 AND expires_at > $2 RETURNING `+inviteColumns, hash, utc(now))
	if err != nil {
		return inv, err
	}
	u.Email = inv.Email
	if err := s.createUser(ctx, tx, u, []analytics.Membership{{WorkspaceID: inv.WorkspaceID, Role: inv.Role}}); err != nil {
		return inv, err
	}
	if err := tx.Commit(); err != nil {
		return inv, fmt.Errorf("accepting an invite: %w", err)
	}
	return inv, nil
}
