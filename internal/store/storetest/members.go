package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"strata/internal/analytics"
)

// testMembers checks roles, removing members and users, passwords and
// invites: the metadata of teammates (docs/security.md, "Roles").
func testMembers(ctx context.Context, t *testing.T, s Meta) {
	ws1, _ := s.CreateWorkspace(ctx, "One")
	ws2, _ := s.CreateWorkspace(ctx, "Two")
	owner := analytics.User{Email: "owner@example.com", PasswordHash: "h-owner"}
	if err := s.CreateOwner(ctx, &owner); err != nil {
		t.Fatal(err)
	}
	if ms, err := s.Memberships(ctx, owner.ID); err != nil || !slices.Equal(ms, []analytics.Membership{
		{WorkspaceID: ws1.ID, Role: analytics.RoleAdmin}, {WorkspaceID: ws2.ID, Role: analytics.RoleAdmin}}) {
		t.Fatalf("the owner's memberships = %+v, %v; want admin of both", ms, err)
	}

	// A user added to one workspace is that workspace's member only.
	viewer := analytics.User{Email: "viewer@example.com", PasswordHash: "h-viewer"}
	if err := s.CreateUser(ctx, &viewer, []analytics.Membership{{WorkspaceID: ws1.ID, Role: analytics.RoleViewer}}); err != nil || viewer.ID == 0 {
		t.Fatalf("CreateUser = %+v, %v", viewer, err)
	}
	dup := analytics.User{Email: "viewer@example.com", PasswordHash: "x"}
	if err := s.CreateUser(ctx, &dup, nil); !errors.Is(err, analytics.ErrUserExists) {
		t.Errorf("CreateUser with a current user's email = %v; want ErrUserExists", err)
	}
	members, err := s.WorkspaceMembers(ctx, ws1.ID)
	if err != nil || len(members) != 2 || members[0].UserID != owner.ID || members[1].Email != "viewer@example.com" || members[1].Role != analytics.RoleViewer {
		t.Errorf("WorkspaceMembers(1) = %+v, %v", members, err)
	}
	if members, _ := s.WorkspaceMembers(ctx, ws2.ID); len(members) != 1 {
		t.Errorf("WorkspaceMembers(2) = %+v; want the owner only", members)
	}

	// Roles change, but never so that a workspace has no admin.
	if err := s.SetMemberRole(ctx, ws1.ID, owner.ID, analytics.RoleMember); !errors.Is(err, analytics.ErrLastAdmin) {
		t.Errorf("demoting the last admin = %v; want ErrLastAdmin", err)
	}
	if err := s.RemoveMember(ctx, ws1.ID, owner.ID); !errors.Is(err, analytics.ErrLastAdmin) {
		t.Errorf("removing the last admin = %v; want ErrLastAdmin", err)
	}
	if err := s.RemoveUser(ctx, owner.ID); !errors.Is(err, analytics.ErrLastAdmin) {
		t.Errorf("removing the user who is the last admin = %v; want ErrLastAdmin", err)
	}
	if err := s.SetMemberRole(ctx, ws1.ID, viewer.ID, analytics.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMemberRole(ctx, ws1.ID, owner.ID, analytics.RoleMember); err != nil {
		t.Errorf("demoting an admin while another is left = %v", err)
	}
	if err := s.SetMemberRole(ctx, ws2.ID, viewer.ID, analytics.RoleMember); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("SetMemberRole of a non-member = %v; want ErrNotFound", err)
	}
	if ms, _ := s.Memberships(ctx, owner.ID); ms[0].Role != analytics.RoleMember || ms[1].Role != analytics.RoleAdmin {
		t.Errorf("after the changes the owner's memberships = %+v", ms)
	}
	s.SetMemberRole(ctx, ws1.ID, owner.ID, analytics.RoleAdmin)

	// A password change ends every other session of that user only.
	now := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	session := func(b byte, userID int64) analytics.Session {
		sess := analytics.Session{TokenHash: bytes.Repeat([]byte{b}, 32), UserID: userID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := s.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		return sess
	}
	keep, other, theirs := session(1, viewer.ID), session(2, viewer.ID), session(3, owner.ID)
	if err := s.SetPassword(ctx, viewer.ID, "h-new", keep.TokenHash); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.User(ctx, viewer.ID); got.PasswordHash != "h-new" {
		t.Errorf("after SetPassword the hash is %q", got.PasswordHash)
	}
	if _, err := s.SessionByHash(ctx, keep.TokenHash); err != nil {
		t.Errorf("the kept session: %v", err)
	}
	if _, err := s.SessionByHash(ctx, other.TokenHash); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("the user's other session survived a password change: %v", err)
	}
	if _, err := s.SessionByHash(ctx, theirs.TokenHash); err != nil {
		t.Errorf("another user's session: %v", err)
	}
	if err := s.SetPassword(ctx, viewer.ID+100, "x", nil); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("SetPassword(unknown) = %v; want ErrNotFound", err)
	}

	// Removing a member from their only workspace ends their sessions and
	// removes the user: they can no longer be found or sign in.
	if err := s.RemoveMember(ctx, ws1.ID, viewer.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionByHash(ctx, keep.TokenHash); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a removed member's session survived: %v", err)
	}
	if _, err := s.UserByEmail(ctx, "viewer@example.com"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a removed user is still found by email: %v", err)
	}
	if _, err := s.User(ctx, viewer.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a removed user is still found by id: %v", err)
	}
	if err := s.RemoveMember(ctx, ws1.ID, viewer.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("removing a member twice = %v; want ErrNotFound", err)
	}
	if list, _ := s.ListUsers(ctx); len(list) != 1 || list[0].ID != owner.ID || len(list[0].Memberships) != 2 {
		t.Errorf("ListUsers = %+v; want the owner alone, in both workspaces", list)
	}

	// Invites: listed per workspace, revoked, accepted once, refused when
	// expired; accepting one takes back a removed user's row.
	invite := func(email string, role analytics.Role, b byte, expires time.Time) analytics.Invite {
		inv := analytics.Invite{WorkspaceID: ws1.ID, Email: email, Role: role, TokenHash: bytes.Repeat([]byte{b}, 32),
			CreatedBy: owner.ID, CreatedAt: now, ExpiresAt: expires}
		if err := s.CreateInvite(ctx, &inv); err != nil || inv.ID == 0 {
			t.Fatalf("CreateInvite = %+v, %v", inv, err)
		}
		return inv
	}
	again := invite("viewer@example.com", analytics.RoleMember, 10, now.Add(time.Hour))
	revoked := invite("revoked@example.com", analytics.RoleViewer, 11, now.Add(time.Hour))
	expired := invite("late@example.com", analytics.RoleViewer, 12, now.Add(-time.Second))
	taken := invite("owner@example.com", analytics.RoleViewer, 13, now.Add(time.Hour))
	if list, err := s.ListInvites(ctx, ws1.ID); err != nil || len(list) != 4 || list[0].Email != "viewer@example.com" || !bytes.Equal(list[0].TokenHash, again.TokenHash) {
		t.Errorf("ListInvites = %+v, %v", list, err)
	}
	if list, _ := s.ListInvites(ctx, ws2.ID); len(list) != 0 {
		t.Errorf("another workspace's invites: %+v", list)
	}
	if err := s.DeleteInvite(ctx, ws2.ID, revoked.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("revoking an invite through another workspace = %v; want ErrNotFound", err)
	}
	if err := s.DeleteInvite(ctx, ws1.ID, revoked.ID); err != nil {
		t.Fatal(err)
	}
	var u analytics.User
	if _, err := s.AcceptInvite(ctx, revoked.TokenHash, now, &analytics.User{PasswordHash: "x"}); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("accepting a revoked invite = %v; want ErrNotFound", err)
	}
	if _, err := s.AcceptInvite(ctx, expired.TokenHash, now, &analytics.User{PasswordHash: "x"}); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("accepting an expired invite = %v; want ErrNotFound", err)
	}
	if _, err := s.AcceptInvite(ctx, taken.TokenHash, now, &analytics.User{PasswordHash: "x"}); !errors.Is(err, analytics.ErrUserExists) {
		t.Errorf("accepting an invite of a current user's email = %v; want ErrUserExists", err)
	}
	u = analytics.User{PasswordHash: "h-back"}
	inv, err := s.AcceptInvite(ctx, again.TokenHash, now, &u)
	if err != nil || inv.ID != again.ID || u.ID != viewer.ID || u.Email != "viewer@example.com" {
		t.Fatalf("AcceptInvite = %+v, %+v, %v; want the removed user's row back", inv, u, err)
	}
	if got, err := s.UserByEmail(ctx, "viewer@example.com"); err != nil || got.PasswordHash != "h-back" {
		t.Errorf("the accepted user = %+v, %v", got, err)
	}
	if ms, _ := s.Memberships(ctx, u.ID); !slices.Equal(ms, []analytics.Membership{{WorkspaceID: ws1.ID, Role: analytics.RoleMember}}) {
		t.Errorf("the accepted user's memberships = %+v", ms)
	}
	if _, err := s.AcceptInvite(ctx, again.TokenHash, now, &analytics.User{PasswordHash: "x"}); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("accepting an invite twice = %v; want ErrNotFound", err)
	}
	if list, _ := s.ListInvites(ctx, ws1.ID); len(list) != 2 {
		t.Errorf("after accepting and revoking, the invites are %+v; want the expired and the refused one", list)
	}

	// The operator removes a user: sessions and memberships go.
	sess := session(4, u.ID)
	if err := s.RemoveUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionByHash(ctx, sess.TokenHash); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a removed user's session survived: %v", err)
	}
	if ms, _ := s.Memberships(ctx, u.ID); len(ms) != 0 {
		t.Errorf("a removed user's memberships: %+v", ms)
	}
	if err := s.RemoveUser(ctx, u.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("removing a user twice = %v; want ErrNotFound", err)
	}
}
