package analytics

import (
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
