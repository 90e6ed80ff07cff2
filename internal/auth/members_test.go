package auth

import (
	"context"
	"regexp"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/duckdb/duckdbtest"
)

// TestInviteExpiry holds an invite to its 7 days on a real DuckDB store
// with a settable clock: a link accepted a second before its expiry
// joins; one a second after is invite_not_found, and its token is not
// spent by the refusal's check of the password first.
func TestInviteExpiry(t *testing.T) {
	ctx := context.Background()
	st := duckdbtest.Open(t)
	ws, _ := st.CreateWorkspace(ctx, "Default")
	clk := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	a := NewAccounts(st, 0, clk.now)
	owner := analytics.User{Email: "owner@example.com", PasswordHash: HashPassword("owner password")}
	if err := st.CreateOwner(ctx, &owner); err != nil {
		t.Fatal(err)
	}

	late, err := a.CreateInvite(ctx, ws.ID, owner.ID, "Late@Example.com ", analytics.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^st_inv_[0-9A-Za-z]{32}$`).MatchString(late.Token) || late.Invite.Email != "late@example.com" ||
		!late.Invite.ExpiresAt.Equal(clk.now().Add(InviteTTL)) || string(late.Invite.TokenHash) != string(Hash(late.Token)) {
		t.Fatalf("CreateInvite = %+v", late)
	}
	clk.add(InviteTTL - 2*time.Second)
	onTime, _ := a.CreateInvite(ctx, ws.ID, owner.ID, "ontime@example.com", analytics.RoleMember)
	// A short password is refused before the token is looked at.
	if _, err := a.AcceptInvite(ctx, late.Token, "short", "198.51.100.1"); code(err) != "invalid_request" {
		t.Errorf("AcceptInvite with a short password = %v; want invalid_request", err)
	}
	clk.add(time.Second) // a second before the first invite expires
	signed, err := a.AcceptInvite(ctx, late.Token, "long enough password", "198.51.100.1")
	if err != nil || signed.User.Email != "late@example.com" || signed.Token == "" {
		t.Fatalf("AcceptInvite a second before expiry = %+v, %v", signed, err)
	}
	clk.add(InviteTTL)
	if _, err := a.AcceptInvite(ctx, onTime.Token, "long enough password", "198.51.100.1"); code(err) != "invite_not_found" {
		t.Errorf("AcceptInvite after expiry = %v; want invite_not_found", err)
	}
	if ms, _ := a.Memberships(ctx, signed.User.ID); len(ms) != 1 || ms[0].Role != analytics.RoleViewer {
		t.Errorf("the invitee's memberships = %+v; want viewer", ms)
	}
}

// TestChangePassword checks the current password, the policy, and that
// the new password signs in and the old one does not.
func TestChangePassword(t *testing.T) {
	ctx := context.Background()
	st := duckdbtest.Open(t)
	st.CreateWorkspace(ctx, "Default")
	clk := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	a := NewAccounts(st, 0, clk.now)
	u := analytics.User{Email: "owner@example.com", PasswordHash: HashPassword("owner password")}
	if err := st.CreateOwner(ctx, &u); err != nil {
		t.Fatal(err)
	}
	s, err := a.Login(ctx, "owner@example.com", "owner password", "198.51.100.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ChangePassword(ctx, u, s.Session.TokenHash, "wrong password", "a new password", "198.51.100.1"); code(err) != "invalid_password" {
		t.Errorf("with a wrong current password = %v; want invalid_password", err)
	}
	if err := a.ChangePassword(ctx, u, s.Session.TokenHash, "owner password", "short", "198.51.100.1"); code(err) != "invalid_request" {
		t.Errorf("with a short new password = %v; want invalid_request", err)
	}
	if err := a.ChangePassword(ctx, u, s.Session.TokenHash, "owner password", "a new password", "198.51.100.1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Authenticate(ctx, s.Token); err != nil {
		t.Errorf("the session that changed the password ended: %v", err)
	}
	if _, err := a.Login(ctx, "owner@example.com", "owner password", "198.51.100.2"); code(err) != "invalid_login" {
		t.Errorf("the old password = %v; want invalid_login", err)
	}
	if _, err := a.Login(ctx, "owner@example.com", "a new password", "198.51.100.2"); err != nil {
		t.Errorf("the new password: %v", err)
	}
}
