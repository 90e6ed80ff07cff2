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

// Role is what a user may do in a workspace (docs/security.md, "Roles"):
// an admin everything, including keys, tokens, members and deleting data;
// a member everything else; a viewer only reads. The person who ran
// first-run setup is an admin of every workspace.
type Role string

// The roles, from the least to the most allowed.
const (
	RoleViewer Role = "viewer"
	RoleMember Role = "member"
	RoleAdmin  Role = "admin"
)

// Rank orders the roles: a role may do what every role of a lower or
// equal rank may. An unknown role ranks 0, below every known one, so
// that it is allowed nothing.
func (r Role) Rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleMember:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// ParseRole checks a role's name.
func ParseRole(s string) (Role, error) {
	if r := Role(s); r.Rank() > 0 {
		return r, nil
	}
	return "", Errorf(KindInvalid, "invalid_request", "role: must be admin, member or viewer, not %q", s)
}

// Membership is a user's role in one workspace.
type Membership struct {
	WorkspaceID int64 `json:"workspaceId"`
	Role        Role  `json:"role"`
}

// Member is a user as listed among a workspace's members.
type Member struct {
	UserID    int64     `json:"userId"`
	Email     string    `json:"email"`
	Role      Role      `json:"role"`
	CreatedAt time.Time `json:"createdAt"`
}

// UserAccount is a user with the workspaces they belong to, as the
// operator's "strata users list" shows them.
type UserAccount struct {
	User
	Memberships []Membership `json:"memberships"`
}

// Invite is a pending invitation to a workspace. The link carries a random
// token of which only the SHA-256 is stored; the invite is deleted when it
// is accepted or revoked, so that it serves once.
type Invite struct {
	ID          int64     `json:"id"`
	WorkspaceID int64     `json:"workspaceId"`
	Email       string    `json:"email"`
	Role        Role      `json:"role"`
	TokenHash   []byte    `json:"-"`
	CreatedBy   int64     `json:"createdBy"`
	CreatedAt   time.Time `json:"createdAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// ErrLastAdmin refuses a change that would leave a workspace without an
// admin, who alone can invite and manage members.
var ErrLastAdmin = Errorf(KindConflict, "last_admin",
	"This is the workspace's last admin: make another member an admin first.")

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

	// Memberships returns a user's roles, in workspace ID order.
	Memberships(ctx context.Context, userID int64) ([]Membership, error)
	// WorkspaceMembers returns a workspace's members, oldest first.
	WorkspaceMembers(ctx context.Context, workspaceID int64) ([]Member, error)
	// SetMemberRole changes a member's role: ErrNotFound when the user is
	// not a member, ErrLastAdmin when it would leave no admin.
	SetMemberRole(ctx context.Context, workspaceID, userID int64, role Role) error
	// RemoveMember takes a user out of a workspace and deletes all their
	// sessions, in one transaction; a user left in no workspace is
	// removed (RemoveUser). ErrNotFound when the user is not a member,
	// ErrLastAdmin when they are its last admin.
	RemoveMember(ctx context.Context, workspaceID, userID int64) error
	// CreateUser stores u (Email and PasswordHash set) with memberships
	// and fills in its ID and CreatedAt. An email of a removed user takes
	// that user's row back; one of a current user is ErrUserExists.
	CreateUser(ctx context.Context, u *User, memberships []Membership) error
	// ListUsers returns the current users with their memberships, in ID
	// order.
	ListUsers(ctx context.Context) ([]UserAccount, error)
	// RemoveUser deletes a user's sessions and memberships and marks the
	// user removed, so that they can neither sign in nor be found, in one
	// transaction. ErrNotFound when there is no such current user,
	// ErrLastAdmin when they are the last admin of a workspace.
	RemoveUser(ctx context.Context, userID int64) error
	// SetPassword replaces a user's password hash and deletes all their
	// sessions but the one whose token hash is keep (nil: all), in one
	// transaction; ErrNotFound when there is no such current user.
	SetPassword(ctx context.Context, userID int64, hash string, keep []byte) error

	// CreateInvite stores inv (every field but ID set) and fills in its ID.
	CreateInvite(ctx context.Context, inv *Invite) error
	// ListInvites returns a workspace's invites, expired or not, oldest
	// first.
	ListInvites(ctx context.Context, workspaceID int64) ([]Invite, error)
	// DeleteInvite revokes one of a workspace's invites, or returns
	// ErrNotFound.
	DeleteInvite(ctx context.Context, workspaceID, id int64) error
	// AcceptInvite consumes the invite whose token has the given SHA-256
	// and has not expired at now, and creates u (Email is taken from the
	// invite, PasswordHash set) as a member with the invite's role, in one
	// transaction: ErrNotFound when there is no such invite (used,
	// revoked, expired or never issued), ErrUserExists when the email is a
	// current user's, which leaves the invite as it was.
	AcceptInvite(ctx context.Context, hash []byte, now time.Time, u *User) (Invite, error)
}
