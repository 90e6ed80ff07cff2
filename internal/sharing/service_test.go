package sharing

import (
	"context"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/store/duckdb/duckdbtest"
)

// TestOperations runs the shared-link operations on a real DuckDB store
// with two products: a create is validated before anything is stored, its
// secret opens the link and is not what is stored; a revoke reaches only
// its own product and makes the secret answer "revoked" at once; a
// password is checked, and the grant it gives admits the link until it
// expires, not another link, and not once tampered with.
func TestOperations(t *testing.T) {
	ctx := context.Background()
	st, a := duckdbtest.Product(t)
	b := duckdbtest.NewProduct(t, st, "B")
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	svc := &Service{Store: st, Max: 3, Now: func() time.Time { return now }}
	code := func(err error) string { return analytics.AsError(err).Code }

	for _, bad := range []struct{ name, password string }{{"", ""}, {"  ", ""}, {strings.Repeat("n", MaxNameLen+1), ""}, {"ok", "short"}} {
		if _, err := svc.Create(ctx, a.ID, bad.name, bad.password, "test"); code(err) != "invalid_request" {
			t.Errorf("create %q/%q: %v, want invalid_request", bad.name, bad.password, err)
		}
	}
	if l, _ := svc.List(ctx, a.ID); len(l) != 0 {
		t.Fatalf("refused creates stored %v", l)
	}

	open, err := svc.Create(ctx, a.ID, " Board ", "", "user 1")
	if err != nil {
		t.Fatal(err)
	}
	if open.Link.Name != "Board" || !strings.HasPrefix(open.Secret, "st_share_") || !strings.HasPrefix(open.Secret, open.Link.Prefix) {
		t.Errorf("created %+v secret %q", open.Link, open.Secret)
	}
	if string(open.Link.Hash) == open.Secret || strings.Contains(string(open.Link.Hash), open.Secret[9:]) {
		t.Error("the stored hash holds the secret")
	}
	got, err := svc.Open(ctx, open.Secret)
	if err != nil || got.ID != open.Link.ID || got.ProductID != a.ID {
		t.Fatalf("open: %+v %v", got, err)
	}
	if err := svc.Admit(got, ""); err != nil {
		t.Errorf("a link without a password needs no grant: %v", err)
	}
	for _, s := range []string{"", "st_share_", open.Secret + "x", "st_tok_" + open.Secret[9:], "st_share_" + strings.Repeat("A", 32)} {
		if _, err := svc.Open(ctx, s); code(err) != "shared_link_not_found" {
			t.Errorf("open %q: %v, want shared_link_not_found", s, err)
		}
	}

	locked, err := svc.Create(ctx, a.ID, "Investors", "correct horse", "user 1")
	if err != nil {
		t.Fatal(err)
	}
	if !locked.Link.HasPassword || strings.Contains(locked.Link.PasswordHash, "correct horse") || !strings.HasPrefix(locked.Link.PasswordHash, "$argon2id$") {
		t.Errorf("password stored as %q", locked.Link.PasswordHash)
	}
	l, _ := svc.Open(ctx, locked.Secret)
	if err := svc.Admit(l, ""); code(err) != "shared_link_locked" {
		t.Errorf("no grant: %v", err)
	}
	if _, _, err := svc.Unlock(l, "wrong horse"); code(err) != "wrong_password" {
		t.Errorf("a wrong password: %v", err)
	}
	grant, expires, err := svc.Unlock(l, "correct horse")
	if err != nil || !expires.Equal(now.Add(GrantTTL)) {
		t.Fatalf("unlock: %q %v %v", grant, expires, err)
	}
	if err := svc.Admit(l, grant); err != nil {
		t.Errorf("the grant: %v", err)
	}
	// Another link with the same password does not take this grant.
	other, _ := svc.Create(ctx, a.ID, "Other", "correct horse", "user 1")
	ol, _ := svc.Open(ctx, other.Secret)
	if err := svc.Admit(ol, grant); code(err) != "shared_link_locked" {
		t.Errorf("a grant of another link: %v", err)
	}
	exp, mac, _ := strings.Cut(grant, ".")
	for _, g := range []string{exp + "." + mac[:len(mac)-1] + "A", "9999999999." + mac, exp, mac} {
		if g == grant {
			continue
		}
		if err := svc.Admit(l, g); code(err) != "shared_link_locked" {
			t.Errorf("a tampered grant %q: %v", g, err)
		}
	}
	now = now.Add(GrantTTL)
	if err := svc.Admit(l, grant); code(err) != "shared_link_locked" {
		t.Errorf("an expired grant: %v", err)
	}

	// The cap: a fourth link is refused.
	if _, err := svc.Create(ctx, a.ID, "Fourth", "", "user 1"); code(err) != "shared_links_full" {
		t.Errorf("past the cap: %v", err)
	}
	// B cannot revoke A's link; A can, and the secret is refused at once.
	if err := svc.Revoke(ctx, b.ID, open.Link.ID); code(err) != "shared_link_not_found" {
		t.Errorf("revoke through B: %v", err)
	}
	if _, err := svc.Open(ctx, open.Secret); err != nil {
		t.Errorf("a link B failed to revoke: %v", err)
	}
	if err := svc.Revoke(ctx, a.ID, open.Link.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Open(ctx, open.Secret); code(err) != "shared_link_revoked" {
		t.Errorf("a revoked link: %v", err)
	}
	if err := svc.Revoke(ctx, a.ID, open.Link.ID); code(err) != "shared_link_not_found" {
		t.Errorf("revoke twice: %v", err)
	}
	if list, _ := svc.List(ctx, a.ID); len(list) != 2 || list[0].ID != locked.Link.ID {
		t.Errorf("list after revoke: %+v", list)
	}
}

// TestPolicy checks which queries a link may run: the Overview's (page
// views, by the shared columns) pass; another event, an event property,
// the full URL or a group aggregation is refused, in a series, a filter
// or a breakdown.
func TestPolicy(t *testing.T) {
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	now := time.Now()
	trend := func(body string) error {
		q, err := query.ParseTrend([]byte(body), sc, now)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return CheckTrend(q)
	}
	for _, ok := range []string{
		`{"series":[{"event":"$pageview","math":"unique_users"},{"event":"$pageview"}]}`,
		`{"series":[{"event":"$pageview"}],"breakdown":"source","filters":[{"property":"source","operator":"is_set"}]}`,
		`{"series":[{"event":"$pageview"}],"breakdown":"path"}`,
	} {
		if err := trend(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		`{"series":[{"event":"signup"}]}`,
		`{"series":[{"event":"$pageview"},{"event":"$exception"}]}`,
		`{"series":[{"event":"$pageview"}],"breakdown":"properties.email"}`,
		`{"series":[{"event":"$pageview"}],"breakdown":"url"}`,
		`{"series":[{"event":"$pageview"}],"filters":[{"property":"properties.plan","operator":"is_set"}]}`,
		`{"series":[{"event":"$pageview","filters":[{"property":"url","operator":"is_set"}]}]}`,
		`{"series":[{"event":"$pageview"}],"aggregateBy":"company"}`,
		`{"series":[{"event":"$pageview"}],"filters":[{"property":"cohort","operator":"in","value":3}]}`,
		`{"series":[{"event":"$pageview","filters":[{"property":"person.email","operator":"eq","value":"a@x.example"}]}]}`,
	} {
		if err := trend(bad); analytics.AsError(err).Code != "not_shared" {
			t.Errorf("%s: %v, want not_shared", bad, err)
		}
	}
	ret := func(body string) error {
		q, err := query.ParseRetention([]byte(body), sc, now)
		if err != nil {
			t.Fatal(err)
		}
		return CheckRetention(q)
	}
	if err := ret(`{"startEvent":"$pageview","period":"month"}`); err != nil {
		t.Errorf("the Overview's retention: %v", err)
	}
	if err := ret(`{"startEvent":"$pageview","returnEvent":"purchase"}`); err == nil {
		t.Error("a retention of another event passed")
	}
	if err := ret(`{"startEvent":"$pageview","filters":[{"property":"country","operator":"eq","value":"DE"}]}`); err != nil {
		t.Errorf("a retention by a shared column: %v", err)
	}
	for _, bad := range []string{
		`{"startEvent":"$pageview","filters":[{"property":"properties.email","operator":"is_set"}]}`,
		`{"startEvent":"$pageview","filters":[{"property":"cohort","operator":"not_in","value":3}]}`,
		`{"startEvent":"$pageview","filters":[{"property":"person.plan","operator":"eq","value":"pro"}]}`,
	} {
		if err := ret(bad); analytics.AsError(err).Code != "not_shared" {
			t.Errorf("retention %s: %v, want not_shared", bad, err)
		}
	}
	sessions := func(body string) error {
		q, err := query.ParseSessions([]byte(body), sc, now)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return CheckSessions(q)
	}
	for _, ok := range []string{`{}`, `{"filters":[{"property":"country","operator":"eq","value":"DE"}]}`} {
		if err := sessions(ok); err != nil {
			t.Errorf("sessions %s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		`{"filters":[{"property":"properties.email","operator":"is_set"}]}`,
		`{"filters":[{"property":"url","operator":"contains","value":"token="}]}`,
		`{"filters":[{"property":"cohort","operator":"in","value":3}]}`,
	} {
		if err := sessions(bad); analytics.AsError(err).Code != "not_shared" {
			t.Errorf("sessions %s: %v, want not_shared", bad, err)
		}
	}
	res := EventNames(query.EventNamesResult{Events: []query.EventName{{Name: "signup", Count: 3}, {Name: "$pageview", Count: 9}}, ProductHasEvents: true})
	if len(res.Events) != 1 || res.Events[0].Name != "$pageview" || !res.ProductHasEvents {
		t.Errorf("event names: %+v", res)
	}
}
