package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"strata/internal/analytics"
)

// testUsers checks first-run setup, memberships, sessions and renaming a
// product: the metadata the dashboard signs in with.
func testUsers(ctx context.Context, t *testing.T, s Meta) {
	if has, err := s.HasUsers(ctx); err != nil || has {
		t.Fatalf("HasUsers on an empty store = %v, %v", has, err)
	}
	ws1, _ := s.CreateWorkspace(ctx, "One")
	ws2, _ := s.CreateWorkspace(ctx, "Two")
	owner := analytics.User{Email: "owner@example.com", PasswordHash: "$argon2id$v=19$m=1,t=1,p=1$c2FsdA$aGFzaA"}
	if err := s.CreateOwner(ctx, &owner); err != nil || owner.ID == 0 || owner.CreatedAt.IsZero() {
		t.Fatalf("CreateOwner = %+v, %v", owner, err)
	}
	if has, err := s.HasUsers(ctx); err != nil || !has {
		t.Errorf("HasUsers after setup = %v, %v", has, err)
	}
	second := analytics.User{Email: "second@example.com", PasswordHash: "x"}
	if err := s.CreateOwner(ctx, &second); !errors.Is(err, analytics.ErrUserExists) {
		t.Errorf("a second CreateOwner = %v; want ErrUserExists", err)
	}
	if _, err := s.UserByEmail(ctx, "second@example.com"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("the refused second owner was stored: %v", err)
	}
	got, err := s.UserByEmail(ctx, "owner@example.com")
	if err != nil || got.ID != owner.ID || got.PasswordHash != owner.PasswordHash || !got.CreatedAt.Equal(owner.CreatedAt) {
		t.Errorf("UserByEmail = %+v, %v; want %+v", got, err, owner)
	}
	if got, err := s.User(ctx, owner.ID); err != nil || got.Email != owner.Email {
		t.Errorf("User(%d) = %+v, %v", owner.ID, got, err)
	}
	if _, err := s.User(ctx, owner.ID+100); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("User(unknown) = %v; want ErrNotFound", err)
	}
	if ws, err := s.UserWorkspaces(ctx, owner.ID); err != nil || !slices.Equal(ws, []int64{ws1.ID, ws2.ID}) {
		t.Errorf("UserWorkspaces = %v, %v; want the owner in both workspaces", ws, err)
	}
	if ws, err := s.UserWorkspaces(ctx, owner.ID+100); err != nil || len(ws) != 0 {
		t.Errorf("UserWorkspaces(unknown) = %v, %v; want none", ws, err)
	}

	now := time.Date(2026, 11, 23, 10, 0, 0, 123456000, time.UTC)
	a := analytics.Session{TokenHash: bytes.Repeat([]byte{7}, 32), UserID: owner.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	b := analytics.Session{TokenHash: bytes.Repeat([]byte{8}, 32), UserID: owner.ID, CreatedAt: now, ExpiresAt: now.Add(-time.Minute)}
	for _, sess := range []analytics.Session{a, b} {
		if err := s.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateSession(ctx, a); err == nil {
		t.Error("two sessions with one token hash were accepted")
	}
	if got, err := s.SessionByHash(ctx, a.TokenHash); err != nil || got.UserID != owner.ID ||
		!got.ExpiresAt.Equal(a.ExpiresAt) || !got.CreatedAt.Equal(now) || !bytes.Equal(got.TokenHash, a.TokenHash) {
		t.Errorf("SessionByHash = %+v, %v; want %+v", got, err, a)
	}
	if _, err := s.SessionByHash(ctx, bytes.Repeat([]byte{9}, 32)); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("SessionByHash(unknown) = %v; want ErrNotFound", err)
	}
	later := now.Add(48 * time.Hour)
	if err := s.ExtendSession(ctx, a.TokenHash, later); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.SessionByHash(ctx, a.TokenHash); !got.ExpiresAt.Equal(later) {
		t.Errorf("after ExtendSession expires %v; want %v", got.ExpiresAt, later)
	}
	if err := s.ExtendSession(ctx, bytes.Repeat([]byte{9}, 32), later); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("ExtendSession(unknown) = %v; want ErrNotFound", err)
	}
	if n, err := s.DeleteExpiredSessions(ctx, now); err != nil || n != 1 {
		t.Errorf("DeleteExpiredSessions = %d, %v; want the one expired session", n, err)
	}
	if _, err := s.SessionByHash(ctx, b.TokenHash); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("the expired session is still there: %v", err)
	}
	for range 2 { // deleting twice is harmless
		if err := s.DeleteSession(ctx, a.TokenHash); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SessionByHash(ctx, a.TokenHash); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("the deleted session is still there: %v", err)
	}

	p, _ := s.CreateProduct(ctx, ws1.ID, "Old name")
	if err := s.RenameProduct(ctx, p.ID, "New name ü"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Product(ctx, p.ID); got.Name != "New name ü" || got.WorkspaceID != ws1.ID {
		t.Errorf("after RenameProduct: %+v", got)
	}
	if err := s.RenameProduct(ctx, p.ID+100, "x"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("RenameProduct(unknown) = %v; want ErrNotFound", err)
	}

	// A product's time zone is UTC until set; setting it twice keeps the
	// last, on this product only, and a renamed product keeps its zone.
	if p.TimeZone != "UTC" {
		t.Errorf("a new product's zone is %q; want UTC", p.TimeZone)
	}
	other, _ := s.CreateProduct(ctx, ws1.ID, "Other")
	for _, zone := range []string{"Asia/Kathmandu", "Europe/Berlin"} {
		if err := s.SetProductTimeZone(ctx, p.ID, zone); err != nil {
			t.Fatal(err)
		}
	}
	s.RenameProduct(ctx, p.ID, "Zoned")
	if got, _ := s.Product(ctx, p.ID); got.TimeZone != "Europe/Berlin" || got.Name != "Zoned" {
		t.Errorf("after SetProductTimeZone: %+v", got)
	}
	if got, _ := s.Product(ctx, other.ID); got.TimeZone != "UTC" {
		t.Errorf("another product's zone: %+v", got)
	}
	if list, _ := s.ListProducts(ctx, ws1.ID); !slices.ContainsFunc(list, func(x analytics.Product) bool { return x.ID == p.ID && x.TimeZone == "Europe/Berlin" }) {
		t.Errorf("ListProducts: %+v", list)
	}
	if err := s.SetProductTimeZone(ctx, p.ID+100, "UTC"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("SetProductTimeZone(unknown) = %v; want ErrNotFound", err)
	}

	// The settings page lists when each query token was last used.
	tok := analytics.QueryToken{ProductID: p.ID, Hash: bytes.Repeat([]byte{4}, 32), Prefix: "st_tok_wxyz"}
	if err := s.CreateQueryToken(ctx, &tok); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchQueryTokens(ctx, map[int64]time.Time{tok.ID: now, tok.ID + 100: now}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.QueryTokenByHash(ctx, tok.Hash); got.LastUsedAt == nil || !got.LastUsedAt.Equal(now) {
		t.Errorf("after TouchQueryTokens: %+v", got)
	}
}

// testOwnerRace runs several first-run setups at once: exactly one wins,
// the others get ErrUserExists, and one user is stored.
func testOwnerRace(ctx context.Context, t *testing.T, s Meta) {
	if _, err := s.CreateWorkspace(ctx, "Default"); err != nil {
		t.Fatal(err)
	}
	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := analytics.User{Email: fmt.Sprintf("owner%d@example.com", i), PasswordHash: "x"}
			errs[i] = s.CreateOwner(ctx, &u)
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, analytics.ErrUserExists):
			t.Errorf("setup %d: %v; want nil or ErrUserExists", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d setups won; want exactly one", won)
	}
	stored := 0
	for i := range n {
		if _, err := s.UserByEmail(ctx, fmt.Sprintf("owner%d@example.com", i)); err == nil {
			stored++
		}
	}
	if stored != 1 {
		t.Errorf("%d users stored; want 1", stored)
	}
}
