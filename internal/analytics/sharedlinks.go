package analytics

import (
	"context"
	"time"
)

// SharedLink is a read-only public link to one product's Overview
// (docs/dashboard.md, "Shared links"). Only the SHA-256 of its secret is
// stored (Hash) and, when it has a password, only the password's argon2id
// hash; neither is ever sent to a client.
type SharedLink struct {
	ID        int64  `json:"id"`
	ProductID int64  `json:"productId"`
	Name      string `json:"name"`
	// Prefix is the secret's first characters ("st_share_abcd"), enough
	// to tell links apart in a list and far too few to guess the rest.
	Prefix       string     `json:"prefix"`
	Hash         []byte     `json:"-"`
	PasswordHash string     `json:"-"`
	HasPassword  bool       `json:"hasPassword"`
	CreatedAt    time.Time  `json:"createdAt"`
	CreatedBy    string     `json:"createdBy"`
	RevokedAt    *time.Time `json:"revokedAt,omitempty"`
	// BoardID, when not 0, makes this a link to that board of the
	// product, which reaches the board's tiles only, rather than to
	// the Overview (docs/dashboard.md, "Dashboards").
	BoardID int64 `json:"boardId,omitempty"`
}

// SharedLinkStore keeps the products' shared links.
type SharedLinkStore interface {
	// CreateSharedLink stores l and fills in its ID and creation time,
	// unless the product already has max links that are not revoked (max
	// 0: no cap); then nothing is stored and the answer is
	// SharedLinksFull.
	CreateSharedLink(ctx context.Context, l *SharedLink, max int) error
	// SharedLinks returns a product's links that are not revoked, oldest
	// first.
	SharedLinks(ctx context.Context, productID int64) ([]SharedLink, error)
	// SharedLinkByHash returns the link, revoked or not, whose secret has
	// this SHA-256, or ErrNotFound.
	SharedLinkByHash(ctx context.Context, hash []byte) (SharedLink, error)
	// RevokeSharedLink sets the revoked time of the product's link id and
	// returns it; a link of another product, or one already revoked, is
	// ErrNotFound.
	RevokeSharedLink(ctx context.Context, productID, id int64) (SharedLink, error)
}

// SharedLinksFull is the refusal of a shared link past a product's cap.
func SharedLinksFull(max int) error {
	return Errorf(KindConflict, "shared_links_full",
		"This product already has %d shared links, the most it may have; revoke one it no longer needs first.", max)
}
