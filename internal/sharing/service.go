// Package sharing holds the operations on shared links: read-only public
// links to one product's Overview (docs/dashboard.md, "Shared links") or
// to one of its boards (docs/dashboard.md, "Dashboards"),
// below every door that asks for them. It creates, lists and revokes a
// product's links, opens a link from the secret its URL carries, checks a
// link's password and the short-lived grant that proves it was entered,
// and decides which queries a link may run (Policy). Who the caller is,
// the rate limits and the wire forms (the cookie, JSON) are the
// transport's (internal/httpapi/share.go).
package sharing

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/auth"
)

// Limits of the operations on shared links.
const (
	MaxNameLen = 100
	// MinPasswordLen and MaxPasswordLen bound a link's password: long
	// enough that the rate limits make guessing hopeless, short enough
	// that hashing it costs what any other password does.
	MinPasswordLen = 8
	MaxPasswordLen = 256
	// GrantTTL is how long an entered password is remembered (the
	// cookie's life): a working session, not a standing pass.
	GrantTTL = time.Hour
)

// Refusals of the operations, in the API's vocabulary. A revoked link is
// told apart from an unknown one, so that whoever follows it knows to ask
// for a new one; both are 404s.
var (
	ErrNotFound = analytics.Errorf(analytics.KindNotFound, "shared_link_not_found",
		"There is no shared link with this id in this product.")
	ErrUnknown = analytics.Errorf(analytics.KindNotFound, "shared_link_not_found",
		"This shared link does not exist. Check the address, or ask whoever shared it for a new one.")
	ErrRevoked = analytics.Errorf(analytics.KindNotFound, "shared_link_revoked",
		"This shared link was revoked. Ask whoever shared it for a new one.")
	ErrLocked = analytics.Errorf(analytics.KindUnauthenticated, "shared_link_locked",
		"This shared link is protected by a password: enter it first.")
	ErrWrongPassword = analytics.Errorf(analytics.KindUnauthenticated, "wrong_password",
		"The password is not right. Check it with whoever shared the link.")
)

// Service runs the operations on one metadata store's shared links.
type Service struct {
	Store analytics.SharedLinkStore
	// Max is how many links that are not revoked a product may have.
	Max int
	Now func() time.Time
}

// Created is a new link with its secret, which is shown once.
type Created struct {
	Link   analytics.SharedLink
	Secret string
}

// Create makes a link to productID's Overview named name, protected by
// password when it is not empty. createdBy names who made it.
func (s *Service) Create(ctx context.Context, productID int64, name, password, createdBy string) (Created, error) {
	return s.CreateForBoard(ctx, productID, 0, name, password, createdBy)
}

// CreateForBoard is Create for a link to board boardID of the product
// (0: the Overview), which reaches that board's tiles only
// (docs/dashboard.md, "Dashboards"). A board of another product, or none,
// is analytics.ErrNotFound from the store.
func (s *Service) CreateForBoard(ctx context.Context, productID, boardID int64, name, password, createdBy string) (Created, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n < 1 || n > MaxNameLen {
		return Created{}, analytics.InvalidField("name", "must be 1 to %d characters, not %d", MaxNameLen, n)
	}
	if password != "" {
		if n := utf8.RuneCountInString(password); n < MinPasswordLen || len(password) > MaxPasswordLen {
			return Created{}, analytics.InvalidField("password", "must be %d to %d characters, or left out for a link without one", MinPasswordLen, MaxPasswordLen)
		}
	}
	secret := auth.NewShareSecret()
	l := analytics.SharedLink{ProductID: productID, BoardID: boardID, Name: name, Hash: secret.Hash, Prefix: secret.Prefix, CreatedBy: createdBy}
	if password != "" {
		l.PasswordHash = auth.HashPassword(password)
	}
	if err := s.Store.CreateSharedLink(ctx, &l, s.Max); err != nil {
		return Created{}, err
	}
	return Created{Link: l, Secret: secret.Plaintext}, nil
}

// List returns the product's links that are not revoked, oldest first.
func (s *Service) List(ctx context.Context, productID int64) ([]analytics.SharedLink, error) {
	links, err := s.Store.SharedLinks(ctx, productID)
	if links == nil {
		links = []analytics.SharedLink{}
	}
	return links, err
}

// Revoke revokes the product's link id; from then on its secret opens
// nothing. A link of another product, or one already revoked, is
// ErrNotFound.
func (s *Service) Revoke(ctx context.Context, productID, id int64) error {
	_, err := s.Store.RevokeSharedLink(ctx, productID, id)
	if errors.Is(err, analytics.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// Open returns the link a secret names: ErrUnknown for a malformed or
// unknown secret (a malformed one never reaches the store), ErrRevoked
// for a revoked link. It reads the store every time, with no cache, so
// that a revoke takes effect on the next request on every node.
func (s *Service) Open(ctx context.Context, secret string) (analytics.SharedLink, error) {
	if !auth.ValidShareShape(secret) {
		return analytics.SharedLink{}, ErrUnknown
	}
	l, err := s.Store.SharedLinkByHash(ctx, auth.Hash(secret))
	switch {
	case errors.Is(err, analytics.ErrNotFound):
		return analytics.SharedLink{}, ErrUnknown
	case err != nil:
		return analytics.SharedLink{}, err
	case l.RevokedAt != nil:
		return analytics.SharedLink{}, ErrRevoked
	}
	return l, nil
}

// Unlock checks password against the link's and returns a grant that
// proves it for GrantTTL, with its expiry; a wrong password is
// ErrWrongPassword. A link without a password needs no grant.
func (s *Service) Unlock(l analytics.SharedLink, password string) (string, time.Time, error) {
	if !l.HasPassword {
		return "", time.Time{}, analytics.Errorf(analytics.KindInvalid, "no_password", "This shared link has no password to enter.")
	}
	if len(password) > MaxPasswordLen {
		return "", time.Time{}, ErrWrongPassword
	}
	ok, err := auth.CheckPassword(l.PasswordHash, password)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("checking shared link %d's password: %w", l.ID, err)
	}
	if !ok {
		return "", time.Time{}, ErrWrongPassword
	}
	expires := s.Now().Add(GrantTTL).Truncate(time.Second)
	exp := strconv.FormatInt(expires.Unix(), 10)
	return exp + "." + grantMAC(l, exp), expires, nil
}

// Admit reports whether a request may read through link l: always for a
// link without a password, else only with an unexpired grant that Unlock
// made for this link and its current password. The grant is an HMAC keyed
// by the stored password hash (which never leaves the server), so that it
// needs no state shared between nodes, and revoking the link or changing
// its password ends every grant of it.
func (s *Service) Admit(l analytics.SharedLink, grant string) error {
	if !l.HasPassword {
		return nil
	}
	exp, mac, ok := strings.Cut(grant, ".")
	if !ok {
		return ErrLocked
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !s.Now().Before(time.Unix(unix, 0)) {
		return ErrLocked
	}
	if !hmac.Equal([]byte(mac), []byte(grantMAC(l, exp))) {
		return ErrLocked
	}
	return nil
}

// grantMAC is the MAC of a grant of link l that expires at exp.
func grantMAC(l analytics.SharedLink, exp string) string {
	m := hmac.New(sha256.New, []byte(l.PasswordHash))
	fmt.Fprintf(m, "strata shared link grant\x00%d\x00%s", l.ID, exp)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
