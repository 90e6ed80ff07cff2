package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestInvitesAndMembers drives teammates on the real binary: an admin
// invites by a one-time link, the invitee joins with the invite's role and
// is refused what the role may not do; a link works once and not after it
// is revoked; roles change, the last admin can be neither demoted nor
// removed, a removed member's session ends at once; a password change
// ends the user's other sessions; and acceptance attempts are rate
// limited per address.
func TestInvitesAndMembers(t *testing.T) {
	s := startServer(t, t.TempDir())
	owner := setupOwner(t, s)
	p := s.ProductID
	r := owner.do(t, "GET", "/api/v1/session", nil)
	ms, _ := r.JSON(t)["memberships"].([]any)
	if len(ms) != 1 || ms[0].(map[string]any)["role"] != "admin" {
		t.Fatalf("the owner's session: %s; want admin of the one workspace", r.Body)
	}
	ws := int64(ms[0].(map[string]any)["workspaceId"].(float64))
	wsPath := fmt.Sprintf("/api/v1/workspaces/%d", ws)

	viewerToken := invite(t, owner, ws, "Viewer@Example.com", "viewer")
	memberToken := invite(t, owner, ws, "member@example.com", "member")
	if r := owner.do(t, "POST", wsPath+"/invites", map[string]string{"email": "owner@example.com", "role": "viewer"}); r.Status != 409 || r.ErrorCode(t) != "user_exists" {
		t.Errorf("inviting the owner's own email: %d %s; want 409 user_exists", r.Status, r.Body)
	}
	r = owner.do(t, "GET", wsPath+"/invites", nil)
	if items, _ := r.JSON(t)["items"].([]any); len(items) != 2 || strings.Contains(string(r.Body), "st_inv_") {
		t.Fatalf("the invites: %s; want two, without their tokens", r.Body)
	}
	memberInviteID := int64(r.JSON(t)["items"].([]any)[1].(map[string]any)["id"].(float64))

	// A wrong or malformed token joins no one; a short password is
	// refused before the token is spent.
	anon := &browser{s: s}
	for _, tok := range []string{"st_inv_" + strings.Repeat("A", 32), "nonsense"} {
		if r := anon.do(t, "POST", "/api/v1/invites/accept", map[string]string{"token": tok, "password": "long enough password"}); r.Status != 404 || r.ErrorCode(t) != "invite_not_found" {
			t.Errorf("accepting token %q: %d %s; want 404 invite_not_found", tok, r.Status, r.Body)
		}
	}
	if r := anon.do(t, "POST", "/api/v1/invites/accept", map[string]string{"token": viewerToken, "password": "short"}); r.Status != 400 {
		t.Errorf("accepting with a short password: %d %s; want 400", r.Status, r.Body)
	}
	viewer := accept(t, s, viewerToken, "viewer password 1")
	if r := anon.do(t, "POST", "/api/v1/invites/accept", map[string]string{"token": viewerToken, "password": "another password"}); r.Status != 404 || r.ErrorCode(t) != "invite_not_found" {
		t.Errorf("accepting a link twice: %d %s; want 404 invite_not_found", r.Status, r.Body)
	}
	r = viewer.do(t, "GET", "/api/v1/session", nil)
	if !strings.Contains(string(r.Body), `"email":"viewer@example.com"`) || !strings.Contains(string(r.Body), `"role":"viewer"`) {
		t.Errorf("the viewer's session: %s", r.Body)
	}

	// The viewer reads and may not write.
	annotation := map[string]any{"date": "2026-11-01T10:00:00Z", "label": "Launch", "color": "emerald", "scope": "workspace"}
	if r := viewer.do(t, "GET", fmt.Sprintf("/api/v1/annotations?product=%d", p), nil); r.Status != 200 {
		t.Errorf("the viewer lists annotations: %d %s", r.Status, r.Body)
	}
	if r := viewer.do(t, "POST", fmt.Sprintf("/api/v1/annotations?product=%d", p), annotation); r.Status != 403 || r.ErrorCode(t) != "role_forbidden" {
		t.Errorf("the viewer creates an annotation: %d %s; want 403 role_forbidden", r.Status, r.Body)
	}
	if r := viewer.do(t, "GET", wsPath+"/members", nil); r.Status != 403 || r.ErrorCode(t) != "role_forbidden" {
		t.Errorf("the viewer lists members: %d %s; want 403 role_forbidden", r.Status, r.Body)
	}

	// A revoked invite's link is dead.
	if r := owner.do(t, "DELETE", fmt.Sprintf("%s/invites/%d", wsPath, memberInviteID), nil); r.Status != 204 {
		t.Fatalf("revoking: %d %s", r.Status, r.Body)
	}
	if r := anon.do(t, "POST", "/api/v1/invites/accept", map[string]string{"token": memberToken, "password": "member password 1"}); r.Status != 404 {
		t.Errorf("accepting a revoked invite: %d %s; want 404", r.Status, r.Body)
	}

	// The admin makes the viewer a member, whose write then passes.
	r = owner.do(t, "GET", wsPath+"/members", nil)
	items, _ := r.JSON(t)["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("members: %s", r.Body)
	}
	ownerID := int64(items[0].(map[string]any)["userId"].(float64))
	viewerID := int64(items[1].(map[string]any)["userId"].(float64))
	if r := owner.do(t, "PATCH", fmt.Sprintf("%s/members/%d", wsPath, viewerID), map[string]string{"role": "member"}); r.Status != 204 {
		t.Fatalf("changing the role: %d %s", r.Status, r.Body)
	}
	if r := viewer.do(t, "POST", fmt.Sprintf("/api/v1/annotations?product=%d", p), annotation); r.Status != 201 {
		t.Errorf("the member creates an annotation: %d %s; want 201", r.Status, r.Body)
	}

	// The last admin stays.
	if r := owner.do(t, "PATCH", fmt.Sprintf("%s/members/%d", wsPath, ownerID), map[string]string{"role": "viewer"}); r.Status != 409 || r.ErrorCode(t) != "last_admin" {
		t.Errorf("demoting the last admin: %d %s; want 409 last_admin", r.Status, r.Body)
	}
	if r := owner.do(t, "DELETE", fmt.Sprintf("%s/members/%d", wsPath, ownerID), nil); r.Status != 409 || r.ErrorCode(t) != "last_admin" {
		t.Errorf("removing the last admin: %d %s; want 409 last_admin", r.Status, r.Body)
	}

	// A password change needs the current password and ends the user's
	// other sessions, not this one.
	other := &browser{s: s}
	r = other.do(t, "POST", "/api/v1/session", map[string]string{"email": "viewer@example.com", "password": "viewer password 1"})
	if r.Status != 200 {
		t.Fatalf("signing in a second browser: %d %s", r.Status, r.Body)
	}
	other.cookie = strings.Split(r.Header.Get("Set-Cookie"), ";")[0]
	if r := viewer.do(t, "PUT", "/api/v1/session/password", map[string]string{"currentPassword": "wrong password!", "newPassword": "a new password 2"}); r.Status != 403 || r.ErrorCode(t) != "invalid_password" {
		t.Errorf("changing the password with a wrong current one: %d %s; want 403 invalid_password", r.Status, r.Body)
	}
	if r := viewer.do(t, "PUT", "/api/v1/session/password", map[string]string{"currentPassword": "viewer password 1", "newPassword": "a new password 2"}); r.Status != 204 {
		t.Fatalf("changing the password: %d %s", r.Status, r.Body)
	}
	if r := other.do(t, "GET", "/api/v1/session", nil); r.Status != 401 {
		t.Errorf("the other session after a password change: %d %s; want 401", r.Status, r.Body)
	}
	if r := viewer.do(t, "GET", "/api/v1/session", nil); r.Status != 200 {
		t.Errorf("the session that changed the password: %d %s; want 200", r.Status, r.Body)
	}
	if r := anon.do(t, "POST", "/api/v1/session", map[string]string{"email": "viewer@example.com", "password": "a new password 2"}); r.Status != 200 {
		t.Errorf("signing in with the new password: %d %s", r.Status, r.Body)
	}

	// Removing the member ends their session at once.
	if r := owner.do(t, "DELETE", fmt.Sprintf("%s/members/%d", wsPath, viewerID), nil); r.Status != 204 {
		t.Fatalf("removing: %d %s", r.Status, r.Body)
	}
	if r := viewer.do(t, "GET", fmt.Sprintf("/api/v1/annotations?product=%d", p), nil); r.Status != 401 {
		t.Errorf("a removed member's session: %d %s; want 401", r.Status, r.Body)
	}
	if r := anon.do(t, "POST", "/api/v1/session", map[string]string{"email": "viewer@example.com", "password": "a new password 2"}); r.Status != 401 {
		t.Errorf("a removed member signs in: %d %s; want 401", r.Status, r.Body)
	}

	// Acceptance attempts are limited per address: ten a minute, then 429
	// with Retry-After. (Three were spent above.)
	limited := 0
	for i := 0; i < 12; i++ {
		r := anon.do(t, "POST", "/api/v1/invites/accept", map[string]string{"token": "st_inv_" + strings.Repeat("B", 32), "password": "long enough password"})
		if r.Status == 429 {
			if r.ErrorCode(t) != "too_many_attempts" || r.Header.Get("Retry-After") == "" {
				t.Errorf("the refusal: %d %v %s", r.Status, r.Header, r.Body)
			}
			limited++
		}
	}
	if limited < 5 {
		t.Errorf("%d of 12 acceptance attempts refused after the budget; want the budget of 10 a minute to hold", limited)
	}
}

// TestUsersCLI runs strata users through a running server's admin socket
// and on the store: add prints a generated password that signs in, a
// password read from stdin works too, reset-password ends the user's
// sessions, remove ends them and signs the user out for good, and the last
// admin cannot be removed.
func TestUsersCLI(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	setupOwner(t, s)
	signIn := func(email, password string) (*browser, int) {
		b := &browser{s: s}
		r := b.do(t, "POST", "/api/v1/session", map[string]string{"email": email, "password": password})
		b.cookie = strings.Split(r.Header.Get("Set-Cookie"), ";")[0]
		return b, r.Status
	}
	generated := strings.TrimSpace(cli(t, dir, "users", "add", "ops@example.com", "--role", "viewer"))
	if len(generated) != 20 {
		t.Fatalf("users add printed %q; want a 20-character password", generated)
	}
	ops, status := signIn("ops@example.com", generated)
	if status != 200 {
		t.Fatalf("signing in with the generated password: %d", status)
	}
	if r := ops.do(t, "GET", "/api/v1/session", nil); !strings.Contains(string(r.Body), `"role":"viewer"`) {
		t.Errorf("the added user's session: %s; want viewer", r.Body)
	}
	if _, errOut, code := cliResult(dir, "users", "add", "ops@example.com"); code == 0 || !strings.Contains(errOut, "already a user") {
		t.Errorf("adding the same email again: exit %d, %s", code, errOut)
	}

	// reset-password from stdin: the old sessions end.
	cmd := exec.Command(binary, "users", "reset-password", "ops@example.com", "--password-stdin", "--data", dir)
	cmd.Stdin = strings.NewReader("from standard input\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reset-password: %v %s", err, out)
	}
	if r := ops.do(t, "GET", "/api/v1/session", nil); r.Status != 401 {
		t.Errorf("a session after reset-password: %d; want 401", r.Status)
	}
	ops, status = signIn("ops@example.com", "from standard input")
	if status != 200 {
		t.Fatalf("signing in with the reset password: %d", status)
	}
	if out := cli(t, dir, "users", "list"); !strings.Contains(out, "ops@example.com") || !strings.Contains(out, ":viewer") || !strings.Contains(out, "owner@example.com") {
		t.Errorf("users list:\n%s", out)
	}

	// remove: the session ends at once, and so does signing in.
	cli(t, dir, "users", "remove", "ops@example.com")
	if r := ops.do(t, "GET", "/api/v1/session", nil); r.Status != 401 {
		t.Errorf("a removed user's session: %d; want 401", r.Status)
	}
	if _, status := signIn("ops@example.com", "from standard input"); status != 401 {
		t.Errorf("a removed user signs in: %d; want 401", status)
	}
	if _, errOut, code := cliResult(dir, "users", "remove", "owner@example.com"); code == 0 || !strings.Contains(errOut, "last admin") {
		t.Errorf("removing the last admin: exit %d, %s", code, errOut)
	}

	// Without the server the commands open the store.
	s.Stop()
	if out := cli(t, dir, "users", "list", "--json"); !strings.Contains(out, `"email":"owner@example.com"`) || strings.Contains(out, "ops@example.com") {
		t.Errorf("users list on the store:\n%s", out)
	}
	if out := strings.TrimSpace(cli(t, dir, "users", "reset-password", "owner@example.com")); len(out) != 20 {
		t.Errorf("reset-password on the store printed %q", out)
	}
}
