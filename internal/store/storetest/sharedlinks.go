package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"strata/internal/analytics"
)

// testSharedLinks checks the shared links: a link is found by the hash of
// its secret with what was stored, a product lists only its own links that
// are not revoked, a revoke through another product finds nothing, a
// revoked link is still found by its hash with its revoked time (so that
// it answers "revoked"), and the cap counts only links that are not
// revoked, refusing past it with nothing stored.
func testSharedLinks(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	create := func(p int64, name, hash, password string, max int) (analytics.SharedLink, error) {
		l := analytics.SharedLink{ProductID: p, Name: name, Hash: []byte(hash), Prefix: "st_share_" + hash[:4],
			PasswordHash: password, CreatedBy: "user 1"}
		err := s.CreateSharedLink(ctx, &l, max)
		return l, err
	}
	l1, err := create(a.ID, "Board", "hash-one-0000000", "", 2)
	if err != nil || l1.ID == 0 || l1.CreatedAt.IsZero() || l1.HasPassword {
		t.Fatalf("create: %+v %v", l1, err)
	}
	l2, err := create(a.ID, "Investors", "hash-two-0000000", "$argon2id$stored", 2)
	if err != nil || !l2.HasPassword {
		t.Fatalf("create with a password: %+v %v", l2, err)
	}
	if _, err := create(b.ID, "B's", "hash-b-000000000", "", 2); err != nil {
		t.Fatal(err)
	}
	// The cap: a third link of A is refused, and nothing is stored.
	if _, err := create(a.ID, "Third", "hash-three-00000", "", 2); analytics.AsError(err).Kind != analytics.KindConflict {
		t.Fatalf("a link past the cap: %v, want a conflict", err)
	}
	if _, err := s.SharedLinkByHash(ctx, []byte("hash-three-00000")); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a refused link is stored: %v", err)
	}

	got, err := s.SharedLinkByHash(ctx, []byte("hash-two-0000000"))
	if err != nil || got.ID != l2.ID || got.ProductID != a.ID || got.Name != "Investors" || got.PasswordHash != "$argon2id$stored" ||
		!got.HasPassword || got.Prefix != "st_share_hash" || got.CreatedBy != "user 1" || !got.CreatedAt.Equal(l2.CreatedAt) || got.RevokedAt != nil {
		t.Errorf("by hash: %+v %v, want %+v", got, err, l2)
	}
	if _, err := s.SharedLinkByHash(ctx, []byte("unknown")); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("an unknown hash: %v", err)
	}
	list, err := s.SharedLinks(ctx, a.ID)
	if err != nil || len(list) != 2 || list[0].ID != l1.ID || list[1].ID != l2.ID {
		t.Fatalf("A's links: %+v %v", list, err)
	}

	// B cannot revoke A's link.
	if _, err := s.RevokeSharedLink(ctx, b.ID, l1.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("revoking A's link as B: %v", err)
	}
	r, err := s.RevokeSharedLink(ctx, a.ID, l1.ID)
	if err != nil || r.ID != l1.ID || r.RevokedAt == nil {
		t.Fatalf("revoke: %+v %v", r, err)
	}
	if _, err := s.RevokeSharedLink(ctx, a.ID, l1.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("revoking twice: %v", err)
	}
	if got, err := s.SharedLinkByHash(ctx, []byte("hash-one-0000000")); err != nil || got.RevokedAt == nil {
		t.Errorf("a revoked link by hash: %+v %v, want it with its revoked time", got, err)
	}
	if list, _ := s.SharedLinks(ctx, a.ID); len(list) != 1 || list[0].ID != l2.ID {
		t.Errorf("A's links after a revoke: %+v", list)
	}
	// A revoked link frees its place under the cap.
	if _, err := create(a.ID, "Third", "hash-three-00000", "", 2); err != nil {
		t.Errorf("a link after a revoke: %v", err)
	}
	if list, _ := s.SharedLinks(ctx, b.ID); len(list) != 1 || list[0].Name != "B's" || !bytes.Equal(list[0].Hash, []byte("hash-b-000000000")) {
		t.Errorf("B's links: %+v", list)
	}
}
