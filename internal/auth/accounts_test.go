package auth

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
	"strata/internal/store/duckdb/duckdbtest"
)

func TestPassword(t *testing.T) {
	h := HashPassword("correct horse battery")
	if !regexp.MustCompile(`^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`).MatchString(h) {
		t.Fatalf("hash %q is not the expected PHC string", h)
	}
	if h == HashPassword("correct horse battery") {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	for _, c := range []struct {
		password string
		want     bool
	}{{"correct horse battery", true}, {"correct horse batterY", false}, {"", false}} {
		if ok, err := CheckPassword(h, c.password); err != nil || ok != c.want {
			t.Errorf("CheckPassword(%q) = %v, %v; want %v", c.password, ok, err, c.want)
		}
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=1,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		strings.Replace(h, "m=19456", "m=99999999", 1), strings.Replace(h, "v=19", "v=16", 1)} {
		if _, err := CheckPassword(bad, "x"); err == nil {
			t.Errorf("CheckPassword accepted the stored string %q", bad)
		}
	}
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func code(err error) string {
	var e *analytics.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return "<" + err.Error() + ">"
}

// TestAccounts runs setup, sign-in, sliding expiry and sign-out against a
// real DuckDB metadata store.
func TestAccounts(t *testing.T) {
	ctx := context.Background()
	st := duckdbtest.Open(t)
	ws, _ := st.CreateWorkspace(ctx, "Default")
	clk := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	a := NewAccounts(st, 0, clk.now)

	if done, err := a.SetupDone(ctx); err != nil || done {
		t.Fatalf("SetupDone on a fresh store = %v, %v", done, err)
	}
	// Before a token is issued nothing is accepted, not even "".
	if _, err := a.Setup(ctx, "", "owner@example.com", "long enough password"); code(err) != "invalid_setup_token" {
		t.Errorf("Setup before any token = %v; want invalid_setup_token", err)
	}
	first := a.IssueSetupToken()
	token := a.IssueSetupToken()
	if !regexp.MustCompile(`^[0-9A-Za-z]{32}$`).MatchString(token) || token == first {
		t.Fatalf("setup tokens %q, %q", first, token)
	}
	// A missing, wrong or replaced token is refused before the email and
	// password are looked at.
	for _, bad := range []string{"", first, token[:31], token + "x", strings.ToLower(token)} {
		if bad == token {
			continue
		}
		var e *analytics.Error
		_, err := a.Setup(ctx, bad, "not an email", "short")
		if !errors.As(err, &e) || e.Code != "invalid_setup_token" || e.Kind != analytics.KindForbidden {
			t.Errorf("Setup with token %q = %v; want invalid_setup_token", bad, err)
		}
	}
	for _, c := range []struct{ email, password, want string }{
		{"not an email", "long enough password", "email:"},
		{"Owner <owner@example.com>", "long enough password", "email:"},
		{"owner@example.com", "short", "password:"},
		{"owner@example.com", "ninechars", "password: must be at least 10"},
	} {
		_, err := a.Setup(ctx, token, c.email, c.password)
		var e *analytics.Error
		if !errors.As(err, &e) || e.Kind != analytics.KindInvalid || !strings.HasPrefix(e.Message, c.want) {
			t.Errorf("Setup(%q, %q) = %v; want invalid_request %q…", c.email, c.password, err, c.want)
		}
	}
	// The refusals above kept the token: the person can correct a typo.
	signed, err := a.Setup(ctx, token, "  Owner@Example.com ", "ten chars!")
	if err != nil {
		t.Fatal(err)
	}
	if signed.User.Email != "owner@example.com" || len(signed.Token) != 43 || !signed.Session.ExpiresAt.Equal(clk.now().Add(DefaultSessionTTL)) {
		t.Errorf("Setup = %+v", signed)
	}
	if got, _ := a.Workspaces(ctx, signed.User.ID); len(got) != 1 || got[0] != ws.ID {
		t.Errorf("owner's workspaces = %v", got)
	}
	// Once the owner exists, every setup is setup_complete, with the old
	// token or without one, and the token is void.
	for _, tok := range []string{token, "", "wrong"} {
		if _, err := a.Setup(ctx, tok, "other@example.com", "another password"); code(err) != "setup_complete" {
			t.Errorf("second Setup with token %q = %v; want setup_complete", tok, err)
		}
	}
	if a.validSetupToken(token) {
		t.Error("the setup token is still valid after setup")
	}

	if _, err := a.Login(ctx, "owner@example.com", "wrong password", "10.0.0.1"); code(err) != "invalid_login" {
		t.Errorf("wrong password: %v", err)
	}
	if _, err := a.Login(ctx, "nobody@example.com", "ten chars!", "10.0.0.1"); code(err) != "invalid_login" {
		t.Errorf("unknown email: %v", err)
	}
	login, err := a.Login(ctx, "OWNER@example.com", "ten chars!", "10.0.0.1")
	if err != nil || login.User.ID != signed.User.ID || login.Token == signed.Token {
		t.Fatalf("Login = %+v, %v", login, err)
	}

	// A session is known, slides forward when used after an hour, and
	// ends after the TTL without use.
	if u, s, err := a.Authenticate(ctx, login.Token); err != nil || u.ID != login.User.ID || !s.ExpiresAt.Equal(login.Session.ExpiresAt) {
		t.Errorf("Authenticate = %+v, %+v, %v", u, s, err)
	}
	clk.add(2 * time.Hour)
	if _, s, err := a.Authenticate(ctx, login.Token); err != nil || !s.ExpiresAt.Equal(clk.now().Add(DefaultSessionTTL)) {
		t.Errorf("after 2 h the expiry is %v, %v; want it moved to %v", s.ExpiresAt, err, clk.now().Add(DefaultSessionTTL))
	}
	for _, bad := range []string{"", "short", strings.Repeat("A", 43), login.Token + "x"} {
		if _, _, err := a.Authenticate(ctx, bad); code(err) != "not_signed_in" {
			t.Errorf("Authenticate(%q) = %v", bad, err)
		}
	}
	clk.add(DefaultSessionTTL)
	if _, _, err := a.Authenticate(ctx, login.Token); code(err) != "not_signed_in" {
		t.Errorf("an expired session: %v", err)
	}
	if _, err := st.SessionByHash(ctx, Hash(login.Token)); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("the expired session was not deleted: %v", err)
	}
	again, err := a.Login(ctx, "owner@example.com", "ten chars!", "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Logout(ctx, again.Token); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Authenticate(ctx, again.Token); code(err) != "not_signed_in" {
		t.Errorf("after Logout: %v", err)
	}
	if err := a.Logout(ctx, again.Token); err != nil {
		t.Errorf("a second Logout: %v", err)
	}
}

// TestLoginThrottle checks that guesses for one email from one address are
// refused after five a minute, while another address and the steady rate
// still get through.
func TestLoginThrottle(t *testing.T) {
	ctx := context.Background()
	st := duckdbtest.Open(t)
	st.CreateWorkspace(ctx, "Default")
	clk := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	a := NewAccounts(st, 0, clk.now)
	if _, err := a.Setup(ctx, a.IssueSetupToken(), "owner@example.com", "the right password"); err != nil {
		t.Fatal(err)
	}
	for i := range attemptsPerEmail {
		if _, err := a.Login(ctx, "owner@example.com", "guess", "203.0.113.9"); code(err) != "invalid_login" {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	_, err := a.Login(ctx, "owner@example.com", "the right password", "203.0.113.9")
	var e *analytics.Error
	if !errors.As(err, &e) || e.Code != "too_many_attempts" || e.Kind != analytics.KindRateLimited || e.RetryAfter < time.Second {
		t.Fatalf("sixth attempt = %v; want too_many_attempts with a Retry-After", err)
	}
	if _, err := a.Login(ctx, "owner@example.com", "the right password", "198.51.100.1"); err != nil {
		t.Errorf("another address is held up too: %v", err)
	}
	clk.add(60 * time.Second / attemptsPerEmail)
	if _, err := a.Login(ctx, "owner@example.com", "the right password", "203.0.113.9"); err != nil {
		t.Errorf("after the refill interval: %v", err)
	}
	// One address trying many emails runs out too.
	clk.add(time.Hour)
	n := 0
	for i := range 2 * attemptsPerAddr {
		if _, err := a.Login(ctx, "user"+string(rune('a'+i))+"@example.com", "guess", "192.0.2.7"); code(err) == "too_many_attempts" {
			n++
		}
	}
	if n != attemptsPerAddr {
		t.Errorf("%d of %d attempts on many emails from one address were refused; want %d", n, 2*attemptsPerAddr, attemptsPerAddr)
	}
}

// TestTokenLastUsed checks that a query token's use is recorded in batches,
// as a key's is, so the settings page can show it.
func TestTokenLastUsed(t *testing.T) {
	ctx := context.Background()
	st, p := duckdbtest.Product(t)
	secret := NewQueryToken()
	tok := analytics.QueryToken{ProductID: p.ID, Hash: secret.Hash, Prefix: secret.Prefix}
	if err := st.CreateQueryToken(ctx, &tok); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	kr := NewKeyring(st, time.Minute, func() time.Time { return now })
	if _, err := kr.AuthenticateBearer(ctx, secret.Plaintext); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.QueryTokenByHash(ctx, tok.Hash); got.LastUsedAt != nil {
		t.Fatalf("recorded before the flush: %v", got.LastUsedAt)
	}
	if err := kr.FlushLastUsed(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.QueryTokenByHash(ctx, tok.Hash); got.LastUsedAt == nil || !got.LastUsedAt.Equal(now) {
		t.Errorf("token last used = %v; want %v", got.LastUsedAt, now)
	}
}

// TestAccountsOnFullDisk checks sign-in while the store takes no writes
// (the server's disk is below its floor): signing in, which stores a
// session, is refused with 503 storage_full and a message that says so; a
// session signed in before still authenticates, keeping its expiry when it
// is due to slide; once writes are allowed again it slides.
func TestAccountsOnFullDisk(t *testing.T) {
	ctx := context.Background()
	var full sync.Mutex
	refuse := false
	st, err := duckdb.Open(ctx, t.TempDir(), duckdb.Options{WriteGate: func() error {
		full.Lock()
		defer full.Unlock()
		if refuse {
			return &analytics.Error{Kind: analytics.KindUnavailable, Code: analytics.CodeStorageFull, Message: "full"}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	setFull := func(v bool) { full.Lock(); refuse = v; full.Unlock() }
	clk := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	a := NewAccounts(st, 0, clk.now)
	signed, err := a.Setup(ctx, a.IssueSetupToken(), "owner@example.com", "ten chars!")
	if err != nil {
		t.Fatal(err)
	}

	setFull(true)
	_, err = a.Login(ctx, "owner@example.com", "ten chars!", "10.0.0.1")
	var e *analytics.Error
	if !errors.As(err, &e) || e.Code != analytics.CodeStorageFull || e.Kind != analytics.KindUnavailable || !strings.Contains(e.Message, "signing in") {
		t.Errorf("Login on a full disk = %v; want 503 storage_full saying that signing in stores a session", err)
	}
	clk.add(2 * time.Hour)
	u, s, err := a.Authenticate(ctx, signed.Token)
	if err != nil || u.ID != signed.User.ID || !s.ExpiresAt.Equal(signed.Session.ExpiresAt) {
		t.Errorf("Authenticate on a full disk, due to slide = %+v, %+v, %v; want the user, expiry unchanged", u, s, err)
	}

	setFull(false)
	if _, s, err := a.Authenticate(ctx, signed.Token); err != nil || !s.ExpiresAt.Equal(clk.now().Add(DefaultSessionTTL)) {
		t.Errorf("Authenticate once there is room = %+v, %v; want the expiry moved to %v", s, err, clk.now().Add(DefaultSessionTTL))
	}
	if _, err := a.Login(ctx, "owner@example.com", "ten chars!", "10.0.0.1"); err != nil {
		t.Errorf("Login once there is room: %v", err)
	}
}
