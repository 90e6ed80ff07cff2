package sqlmeta

import (
	"context"
	"fmt"
	"time"

	"strata/internal/analytics"
)

// The dashboard's users, memberships and sessions (migration 0008).

var _ analytics.UserStore = (*Store)(nil)

// CreateOwner stores the first user as the owner of every workspace, in
// one transaction that also claims the single row of dashboard_setup: of
// two setups racing, on one database or across nodes, the second fails on
// that row's primary key and leaves nothing behind. Any failure once a
// user exists is reported as ErrUserExists, whatever error the database
// chose for the lost race.
func (s *Store) CreateOwner(ctx context.Context, u *analytics.User) error {
	if has, err := s.HasUsers(ctx); err != nil {
		return err
	} else if has {
		return analytics.ErrUserExists
	}
	u.CreatedAt = s.stamp()
	err := s.createOwner(ctx, u)
	if err == nil {
		return nil
	}
	// Losing a race to another setup fails on the one-row setup table,
	// possibly before the winner has committed (DuckDB reports the
	// conflict at once): give the winner a moment to show.
	for wait := 0; wait < 20; wait++ {
		if has, herr := s.HasUsers(ctx); herr == nil && has {
			return analytics.ErrUserExists
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
	return err
}

func (s *Store) createOwner(ctx context.Context, u *analytics.User) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("creating owner: %w", err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx,
		`INSERT INTO dashboard_users (email, password_hash, created_at) VALUES ($1, $2, $3) RETURNING id`,
		u.Email, u.PasswordHash, u.CreatedAt).Scan(&u.ID); err != nil {
		return fmt.Errorf("creating owner: %w", err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO dashboard_setup (id, owner_id, completed_at) VALUES (1, $1, $2)`, u.ID, u.CreatedAt); err != nil {
		return fmt.Errorf("recording setup: %w", err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO workspace_members (workspace_id, user_id, role, created_at)
		 SELECT id, $1, $2, $3 FROM workspaces`, u.ID, string(analytics.RoleAdmin), u.CreatedAt); err != nil {
		return fmt.Errorf("adding owner to workspaces: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("creating owner: %w", err)
	}
	return nil
}

// HasUsers reports whether first-run setup is done.
func (s *Store) HasUsers(ctx context.Context) (bool, error) {
	var n int64
	if err := s.conn().QueryRowContext(ctx, `SELECT count(*) FROM dashboard_users`).Scan(&n); err != nil {
		return false, fmt.Errorf("counting users: %w", err)
	}
	return n > 0, nil
}

const userColumns = `id, email, password_hash, created_at`

func scanUser(r Scanner) (analytics.User, error) {
	var u analytics.User
	err := r.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.CreatedAt)
	return u, err
}

// currentUser is the condition that a dashboard_users row is not a
// removed user's (migration 0031).
const currentUser = ` AND id NOT IN (SELECT user_id FROM dashboard_users_removed)`

// UserByEmail returns the current user with the given email.
func (s *Store) UserByEmail(ctx context.Context, email string) (analytics.User, error) {
	return queryOne(ctx, s.conn(), "user by email", scanUser, `SELECT `+userColumns+` FROM dashboard_users WHERE email = $1`+currentUser, email)
}

// User returns one current user.
func (s *Store) User(ctx context.Context, id int64) (analytics.User, error) {
	return queryOne(ctx, s.conn(), fmt.Sprintf("user %d", id), scanUser, `SELECT `+userColumns+` FROM dashboard_users WHERE id = $1`+currentUser, id)
}

// UserWorkspaces returns the workspaces a user belongs to, in ID order.
func (s *Store) UserWorkspaces(ctx context.Context, userID int64) ([]int64, error) {
	return QueryAll(ctx, s.conn(), "listing a user's workspaces", func(r Scanner) (id int64, err error) {
		err = r.Scan(&id)
		return id, err
	}, `SELECT workspace_id FROM workspace_members WHERE user_id = $1 ORDER BY workspace_id`, userID)
}

// CreateSession stores a session.
func (s *Store) CreateSession(ctx context.Context, sess analytics.Session) error {
	if _, err := s.conn().ExecContext(ctx,
		`INSERT INTO dashboard_sessions (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		sess.TokenHash, sess.UserID, utc(sess.CreatedAt), utc(sess.ExpiresAt)); err != nil {
		return fmt.Errorf("creating session: %w", err)
	}
	return nil
}

// SessionByHash returns the session with the given token hash.
func (s *Store) SessionByHash(ctx context.Context, hash []byte) (analytics.Session, error) {
	var sess analytics.Session
	err := s.conn().QueryRowContext(ctx,
		`SELECT token_hash, user_id, created_at, expires_at FROM dashboard_sessions WHERE token_hash = $1`, hash).
		Scan(&sess.TokenHash, &sess.UserID, &sess.CreatedAt, &sess.ExpiresAt)
	if err != nil {
		return sess, notFound(err, "session")
	}
	return sess, nil
}

// ExtendSession moves a session's expiry.
func (s *Store) ExtendSession(ctx context.Context, hash []byte, expiresAt time.Time) error {
	res, err := s.conn().ExecContext(ctx, `UPDATE dashboard_sessions SET expires_at = $1 WHERE token_hash = $2`, utc(expiresAt), hash)
	if err != nil {
		return fmt.Errorf("extending session: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("extending session: %w", analytics.ErrNotFound)
	}
	return nil
}

// DeleteSession removes a session, if it exists.
func (s *Store) DeleteSession(ctx context.Context, hash []byte) error {
	if _, err := s.conn().ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE token_hash = $1`, hash); err != nil {
		return fmt.Errorf("deleting session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes the sessions that expired before t.
func (s *Store) DeleteExpiredSessions(ctx context.Context, t time.Time) (int, error) {
	res, err := s.conn().ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE expires_at < $1`, utc(t))
	if err != nil {
		return 0, fmt.Errorf("deleting expired sessions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("deleting expired sessions: %w", err)
	}
	return int(n), nil
}

// utc is a time as stored: UTC to the microsecond both databases keep.
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
