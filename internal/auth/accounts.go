package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"net/mail"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/ratelimit"
)

// Accounts signs dashboard users up, in and out. First-run setup creates the
// owner while no user exists; sign-in checks an argon2id password hash and
// is rate limited per email and client address; a session is a random
// 32-byte token in a cookie, of which only the SHA-256 is stored, and it
// expires after TTL without use (each use slides the expiry forward).
type Accounts struct {
	users analytics.UserStore
	ttl   time.Duration
	now   func() time.Time
	// attempts holds the sign-in buckets. They live in this process's
	// memory: with several nodes each node allows its own budget, which is
	// documented and still far too little for guessing a 10-character
	// password.
	attempts *ratelimit.Limiter

	// setupToken is the one-time secret that first-run setup must present
	// (IssueSetupToken), "" when none is valid. It lives in this process's
	// memory only: it is printed to the log of the node that issued it, so
	// only that node can check it, and a restart issues a new one.
	setupMu    sync.Mutex
	setupToken string
}

// The session and sign-in policy.
const (
	// DefaultSessionTTL is how long a session lasts without being used.
	DefaultSessionTTL = 14 * 24 * time.Hour
	// extendEvery is how stale an expiry may get before a request moves it,
	// so that a busy dashboard writes about once an hour, not per request.
	extendEvery = time.Hour
	// MinPasswordLen and maxPasswordLen bound a password, in characters.
	MinPasswordLen = 10
	maxPasswordLen = 1000
	maxEmailLen    = 254
	// Sign-in attempts allowed per minute for one email from one address,
	// and for any emails from one address. Each bucket starts full and
	// refills at its rate, so a person who mistypes a few times is never
	// held up, and a guesser gets five tries a minute.
	attemptsPerEmail = 5
	attemptsPerAddr  = 20
)

// NewAccounts returns the account service over users. ttl is the idle
// lifetime of a session (zero means DefaultSessionTTL); now is the clock.
func NewAccounts(users analytics.UserStore, ttl time.Duration, now func() time.Time) *Accounts {
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	return &Accounts{users: users, ttl: ttl, now: now, attempts: ratelimit.New(now)}
}

// TTL is the idle lifetime of a session.
func (a *Accounts) TTL() time.Duration { return a.ttl }

// Errors of the account service, in the vocabulary the HTTP layer maps to
// statuses.
var (
	ErrSetupDone = analytics.Errorf(analytics.KindConflict, "setup_complete",
		"The dashboard is already set up. Sign in with the owner's email and password.")
	ErrBadLogin = analytics.Errorf(analytics.KindUnauthenticated, "invalid_login",
		"The email or password is not correct.")
	ErrNotSignedIn = analytics.Errorf(analytics.KindUnauthenticated, "not_signed_in",
		"Sign in to the dashboard first: the session cookie is missing, unknown or expired.")
	ErrBadSetupToken = analytics.Errorf(analytics.KindForbidden, "invalid_setup_token",
		"The setup token is missing or wrong. Open the address the server printed in its log when it started "+
			"(\"first-run setup: open this address to create the owner\"); each start prints a new one.")
)

// SetupTokenLen is the length of a setup token: 32 base62 characters, as
// the random part of an API key, about 190 bits, far beyond guessing, so
// that setup attempts need no throttle of their own.
const SetupTokenLen = 32

// IssueSetupToken makes a new one-time setup token, replacing any earlier
// one, and returns it for the caller to print. The server calls it at
// start while no owner exists: setup then needs a secret that only someone
// who can read the server's log has, which a web page that reached the
// server through DNS rebinding does not (docs/security.md).
func (a *Accounts) IssueSetupToken() string {
	t := randomBase62(SetupTokenLen)
	a.setupMu.Lock()
	a.setupToken = t
	a.setupMu.Unlock()
	return t
}

// validSetupToken reports, in constant time, whether token is the setup
// token in force.
func (a *Accounts) validSetupToken(token string) bool {
	a.setupMu.Lock()
	want := a.setupToken
	a.setupMu.Unlock()
	return want != "" && subtle.ConstantTimeCompare([]byte(token), []byte(want)) == 1
}

// voidSetupToken ends the setup token once the owner exists.
func (a *Accounts) voidSetupToken() {
	a.setupMu.Lock()
	a.setupToken = ""
	a.setupMu.Unlock()
}

// Signed is the result of setup or sign-in: the user, the plaintext
// session token for the cookie, and the session as stored.
type Signed struct {
	User    analytics.User
	Token   string
	Session analytics.Session
}

// Setup creates the owner and signs them in, once, for a caller that
// presents the setup token (IssueSetupToken).
//
// The checks run in this order. When a user exists it returns ErrSetupDone
// whatever the token: that says no more than GET /api/v1/dashboard/config
// tells anyone, and after setup there is no token left to present. Then a
// missing or wrong token is ErrBadSetupToken, before the email and password
// are looked at, so that a caller without the token learns nothing about
// what setup would accept. A setup that fails on its email or password
// keeps the token, so that the person can correct them; one that succeeds
// voids it.
func (a *Accounts) Setup(ctx context.Context, token, email, password string) (Signed, error) {
	if has, err := a.users.HasUsers(ctx); err != nil {
		return Signed{}, err
	} else if has {
		return Signed{}, ErrSetupDone
	}
	if !a.validSetupToken(token) {
		return Signed{}, ErrBadSetupToken
	}
	email, err := normaliseEmail(email)
	if err != nil {
		return Signed{}, err
	}
	if err := checkNewPassword(password); err != nil {
		return Signed{}, err
	}
	u := analytics.User{Email: email, PasswordHash: HashPassword(password)}
	if err := a.users.CreateOwner(ctx, &u); errors.Is(err, analytics.ErrUserExists) {
		return Signed{}, ErrSetupDone
	} else if err != nil {
		return Signed{}, err
	}
	a.voidSetupToken()
	return a.newSession(ctx, u)
}

// SetupDone reports whether first-run setup has created the owner.
func (a *Accounts) SetupDone(ctx context.Context) (bool, error) { return a.users.HasUsers(ctx) }

// Login checks an email and password and starts a session. clientAddr is
// the address the attempt came from, for rate limiting. Every failure,
// unknown email or wrong password, is ErrBadLogin and takes as long.
func (a *Accounts) Login(ctx context.Context, email, password, clientAddr string) (Signed, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if err := a.throttle(email, clientAddr); err != nil {
		return Signed{}, err
	}
	if email == "" || password == "" || len(password) > 4*maxPasswordLen {
		return Signed{}, ErrBadLogin
	}
	u, err := a.users.UserByEmail(ctx, email)
	switch {
	case errors.Is(err, analytics.ErrNotFound):
		CheckPassword(dummyHash(), password)
		return Signed{}, ErrBadLogin
	case err != nil:
		return Signed{}, err
	}
	ok, err := CheckPassword(u.PasswordHash, password)
	if err != nil {
		return Signed{}, fmt.Errorf("checking password of user %d: %w", u.ID, err)
	}
	if !ok {
		return Signed{}, ErrBadLogin
	}
	return a.newSession(ctx, u)
}

// throttle takes one attempt from the email's bucket for this address and
// from the address's own, and refuses with 429 when either is empty.
func (a *Accounts) throttle(email, addr string) error {
	okEmail, waitEmail := a.attempts.Allow(bucketID("email", email, addr), attemptsPerEmail)
	okAddr, waitAddr := a.attempts.Allow(bucketID("addr", addr), attemptsPerAddr)
	if okEmail && okAddr {
		return nil
	}
	return &analytics.Error{Kind: analytics.KindRateLimited, Code: "too_many_attempts",
		Message:    "Too many sign-in attempts. Wait a minute and try again.",
		RetryAfter: max(waitEmail, waitAddr, time.Second)}
}

// bucketID names a rate-limit bucket by its parts; the limiter keys
// buckets by number, and a 64-bit hash collision is harmless here.
func bucketID(parts ...string) int64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}

// newSession stores a fresh session for u. Expired sessions are swept
// here, at sign-in, which is rare enough to cost nothing and frequent
// enough to keep the table small.
//
// A session must be stored to be checked later, so on a full disk, where
// nothing can be stored, signing in is refused (503 storage_full) with a
// message that says so; sessions signed in before go on working.
func (a *Accounts) newSession(ctx context.Context, u analytics.User) (Signed, error) {
	now := a.now().UTC().Truncate(time.Microsecond)
	if _, err := a.users.DeleteExpiredSessions(ctx, now); err != nil {
		return Signed{}, signInFull(err)
	}
	token := newSessionToken()
	s := analytics.Session{TokenHash: Hash(token), UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(a.ttl)}
	if err := a.users.CreateSession(ctx, s); err != nil {
		return Signed{}, signInFull(err)
	}
	return Signed{User: u, Token: token, Session: s}, nil
}

// signInFull words a refusal for lack of disk space for the person
// signing in; other errors pass unchanged.
func signInFull(err error) error {
	if !analytics.IsStorageFull(err) {
		return err
	}
	return &analytics.Error{Kind: analytics.KindUnavailable, Code: analytics.CodeStorageFull,
		Message:    "The server's disk is full, and signing in stores a session. Free space on the server, then sign in again; browsers already signed in keep working.",
		RetryAfter: 30 * time.Second, Err: err}
}

// Authenticate returns the user and session of a cookie's token, moving
// the expiry forward when it is more than extendEvery old. A missing,
// unknown or expired token is ErrNotSignedIn; an expired session is
// deleted.
func (a *Accounts) Authenticate(ctx context.Context, token string) (analytics.User, analytics.Session, error) {
	if !validSessionToken(token) {
		return analytics.User{}, analytics.Session{}, ErrNotSignedIn
	}
	hash := Hash(token)
	s, err := a.users.SessionByHash(ctx, hash)
	if errors.Is(err, analytics.ErrNotFound) {
		return analytics.User{}, s, ErrNotSignedIn
	} else if err != nil {
		return analytics.User{}, s, err
	}
	now := a.now().UTC().Truncate(time.Microsecond)
	if !now.Before(s.ExpiresAt) {
		if err := a.users.DeleteSession(ctx, hash); err != nil {
			return analytics.User{}, s, err
		}
		return analytics.User{}, s, ErrNotSignedIn
	}
	if s.ExpiresAt.Sub(now) < a.ttl-extendEvery {
		expires := now.Add(a.ttl)
		switch err := a.users.ExtendSession(ctx, hash, expires); {
		case err == nil:
			s.ExpiresAt = expires
		case errors.Is(err, analytics.ErrNotFound):
			return analytics.User{}, s, ErrNotSignedIn // signed out meanwhile
		case analytics.IsStorageFull(err):
			// The server's disk is full: the session goes on with the
			// expiry it has, and is extended once there is room.
		default:
			return analytics.User{}, s, err
		}
	}
	u, err := a.users.User(ctx, s.UserID)
	if errors.Is(err, analytics.ErrNotFound) {
		return u, s, ErrNotSignedIn
	}
	return u, s, err
}

// Logout ends the session of a cookie's token; an unknown token is not an
// error, so that signing out twice is harmless.
func (a *Accounts) Logout(ctx context.Context, token string) error {
	if !validSessionToken(token) {
		return nil
	}
	return a.users.DeleteSession(ctx, Hash(token))
}

// Workspaces returns the IDs of the workspaces a user may see.
func (a *Accounts) Workspaces(ctx context.Context, userID int64) ([]int64, error) {
	return a.users.UserWorkspaces(ctx, userID)
}

// sessionTokenLen is the length of a session token: 32 random bytes in
// unpadded base64url.
const sessionTokenLen = 43

func newSessionToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func validSessionToken(s string) bool {
	if len(s) != sessionTokenLen {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// normaliseEmail trims and lower-cases an email and checks that it is a
// bare address (no display name), so that one person has one spelling.
func normaliseEmail(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > maxEmailLen {
		return "", analytics.Errorf(analytics.KindInvalid, "invalid_request", "email: must be an email address such as owner@example.com")
	}
	return s, nil
}

// checkNewPassword applies the password policy: at least MinPasswordLen
// characters. Length is what makes a password hard to guess; composition
// rules are not imposed (NIST SP 800-63B).
func checkNewPassword(p string) error {
	switch n := utf8.RuneCountInString(p); {
	case n < MinPasswordLen:
		return analytics.Errorf(analytics.KindInvalid, "invalid_request", "password: must be at least %d characters long", MinPasswordLen)
	case n > maxPasswordLen:
		return analytics.Errorf(analytics.KindInvalid, "invalid_request", "password: must be at most %d characters long", maxPasswordLen)
	}
	return nil
}
