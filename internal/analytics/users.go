package analytics

import (
	"context"
	"errors"
	"time"
)

// User is a person who signs in to the dashboard. Only a password hash is
// kept (argon2id in PHC string form, internal/auth); it never leaves the
// server.
type User struct {
	ID           int64     `json:"id"`
	Email        string    `json:"email"`
	PasswordHash string    `json:"-"`
	CreatedAt    time.Time `json:"createdAt"`
}

// Role is what a user may do in a workspace. Only the owner exists today:
// the person who ran first-run setup, who may do everything.
type Role string

// RoleOwner is the role of the user created by first-run setup.
const RoleOwner Role = "owner"

// Session is a signed-in browser. The cookie carries a random token; only
// its SHA-256 is stored, so a copy of the database cannot sign anyone in.
type Session struct {
	TokenHash []byte
	UserID    int64
	CreatedAt time.Time
	// ExpiresAt slides forward while the session is used (internal/auth).
	ExpiresAt time.Time
}

// ErrUserExists is returned by CreateOwner once first-run setup is done.
var ErrUserExists = errors.New("a user already exists")

// UserStore keeps dashboard users, their workspace memberships and their
// sessions. Lookups of a single row return an error wrapping ErrNotFound
// when the row does not exist.
type UserStore interface {
	// CreateOwner stores u (Email and PasswordHash set), fills in its ID
	// and CreatedAt, and makes it the owner of every workspace, but only
	// while no user exists: first-run setup happens once. When a user
	// already exists, including one created concurrently by another
	// request or node, it stores nothing and returns ErrUserExists.
	CreateOwner(ctx context.Context, u *User) error
	// HasUsers reports whether any user exists, that is, whether first-run
	// setup is done.
	HasUsers(ctx context.Context) (bool, error)
	// UserByEmail returns the user with the given email (compared as
	// stored; callers normalise it first), or ErrNotFound.
	UserByEmail(ctx context.Context, email string) (User, error)
	// User returns one user, or ErrNotFound.
	User(ctx context.Context, id int64) (User, error)
	// UserWorkspaces returns the IDs of the workspaces a user belongs to,
	// in ID order; none when the user belongs to none.
	UserWorkspaces(ctx context.Context, userID int64) ([]int64, error)

	// CreateSession stores a session.
	CreateSession(ctx context.Context, s Session) error
	// SessionByHash returns the session whose token has the given SHA-256,
	// expired or not, or ErrNotFound; the caller checks ExpiresAt.
	SessionByHash(ctx context.Context, hash []byte) (Session, error)
	// ExtendSession moves a session's expiry, or returns ErrNotFound.
	ExtendSession(ctx context.Context, hash []byte, expiresAt time.Time) error
	// DeleteSession removes a session; removing one that does not exist is
	// not an error, so that signing out twice is harmless.
	DeleteSession(ctx context.Context, hash []byte) error
	// DeleteExpiredSessions removes every session that expired before t and
	// returns how many it removed.
	DeleteExpiredSessions(ctx context.Context, t time.Time) (int, error)
}
