package auth

import (
	"context"
	"errors"
	"strings"
	"time"

	"strata/internal/analytics"
)

// Teammates: invites by a one-time link, roles, and passwords
// (docs/security.md, "Invites" and "Roles").

// The invite policy.
const (
	// InviteTTL is how long an invite link stays valid.
	InviteTTL = 7 * 24 * time.Hour
	// InvitePrefix starts an invite token, which is 32 base62 characters
	// after it, about 190 bits: as a setup token, beyond guessing, and
	// acceptance attempts are rate limited besides.
	InvitePrefix    = "st_inv_"
	inviteRandomLen = 32
	// inviteAttemptsPerAddr is how many invite acceptances one client
	// address may try a minute. Accepting hashes a password, as a sign-in
	// checks one, so the budget bounds the CPU an address can spend too.
	inviteAttemptsPerAddr = 10
)

// Errors of invites and passwords.
var (
	ErrBadInvite = analytics.Errorf(analytics.KindNotFound, "invite_not_found",
		"This invite link is not valid: it was used, revoked, or it expired (links last 7 days). Ask an admin of the workspace for a new one.")
	ErrInviteeExists = analytics.Errorf(analytics.KindConflict, "user_exists",
		"A user with this email already exists. Sign in with it, or ask the operator to add that user to the workspace.")
	ErrBadCurrentPassword = analytics.Errorf(analytics.KindForbidden, "invalid_password",
		"The current password is not correct.")
)

// Memberships returns the workspaces a user belongs to, with their roles.
func (a *Accounts) Memberships(ctx context.Context, userID int64) ([]analytics.Membership, error) {
	return a.users.Memberships(ctx, userID)
}

// NewInvite is an invite as created: Token is the plaintext that the link
// carries, shown once.
type NewInvite struct {
	Token  string
	Invite analytics.Invite
}

// CreateInvite invites email into a workspace with role, on behalf of the
// admin byUserID. An email that is already a user's is refused: the link
// would create a second account.
func (a *Accounts) CreateInvite(ctx context.Context, workspaceID, byUserID int64, email string, role analytics.Role) (NewInvite, error) {
	email, err := normaliseEmail(email)
	if err != nil {
		return NewInvite{}, err
	}
	if _, err := analytics.ParseRole(string(role)); err != nil {
		return NewInvite{}, err
	}
	switch _, err := a.users.UserByEmail(ctx, email); {
	case err == nil:
		return NewInvite{}, ErrInviteeExists
	case !errors.Is(err, analytics.ErrNotFound):
		return NewInvite{}, err
	}
	token := InvitePrefix + randomBase62(inviteRandomLen)
	now := a.now().UTC().Truncate(time.Microsecond)
	inv := analytics.Invite{WorkspaceID: workspaceID, Email: email, Role: role, TokenHash: Hash(token),
		CreatedBy: byUserID, CreatedAt: now, ExpiresAt: now.Add(InviteTTL)}
	if err := a.users.CreateInvite(ctx, &inv); err != nil {
		return NewInvite{}, err
	}
	return NewInvite{Token: token, Invite: inv}, nil
}

// AcceptInvite creates the invited user with password and signs them in.
// clientAddr is the address the attempt came from: acceptances are rate
// limited per address like sign-ins, so that a guesser gets ten tries a
// minute at a 190-bit token. The password is checked before the token is
// used, so that a person who picks a short one can correct it.
func (a *Accounts) AcceptInvite(ctx context.Context, token, password, clientAddr string) (Signed, error) {
	if ok, wait := a.attempts.Allow(bucketID("invite", clientAddr), inviteAttemptsPerAddr); !ok {
		return Signed{}, &analytics.Error{Kind: analytics.KindRateLimited, Code: "too_many_attempts",
			Message: "Too many invite attempts from this address. Wait a minute and try again.", RetryAfter: max(wait, time.Second)}
	}
	rest, ok := strings.CutPrefix(token, InvitePrefix)
	if !ok || !isBase62(rest, inviteRandomLen) {
		return Signed{}, ErrBadInvite
	}
	if err := checkNewPassword(password); err != nil {
		return Signed{}, err
	}
	u := analytics.User{PasswordHash: HashPassword(password)}
	_, err := a.users.AcceptInvite(ctx, Hash(token), a.now(), &u)
	switch {
	case errors.Is(err, analytics.ErrNotFound):
		return Signed{}, ErrBadInvite
	case errors.Is(err, analytics.ErrUserExists):
		return Signed{}, ErrInviteeExists
	case err != nil:
		return Signed{}, signInFull(err)
	}
	return a.newSession(ctx, u)
}

// ChangePassword sets a signed-in user's new password after checking
// their current one, and ends every other session of theirs: whoever else
// had the old password is signed out. Attempts share the sign-in budget of
// the user's email, so that a stolen session cannot guess the password.
func (a *Accounts) ChangePassword(ctx context.Context, u analytics.User, sessionHash []byte, current, next, clientAddr string) error {
	if err := a.throttle(u.Email, clientAddr); err != nil {
		return err
	}
	ok, err := CheckPassword(u.PasswordHash, current)
	if err != nil {
		return err
	}
	if !ok {
		return ErrBadCurrentPassword
	}
	if err := checkNewPassword(next); err != nil {
		return err
	}
	return a.users.SetPassword(ctx, u.ID, HashPassword(next), sessionHash)
}

// CheckNewPassword applies the password policy (at least MinPasswordLen
// characters), for the operator's commands.
func CheckNewPassword(p string) error { return checkNewPassword(p) }

// NormaliseEmail trims and lower-cases an email and checks it, for the
// operator's commands.
func NormaliseEmail(s string) (string, error) { return normaliseEmail(s) }

// GeneratePassword returns a random password of 20 base62 characters,
// about 119 bits, for "strata users reset-password" to print.
func GeneratePassword() string { return randomBase62(20) }
