package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
)

// specOperation is one operation of api/openapi.yaml with the least role
// it declares in x-strata-role.
type specOperation struct {
	method, path, role string
}

// specOperations reads every operation of api/openapi.yaml with its
// x-strata-role. An operation without one fails t: a new route must say
// who may call it.
func specOperations(t *testing.T) []specOperation {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pathKey := regexp.MustCompile(`^  (/\S*):\s*$`)
	opKey := regexp.MustCompile(`^    (get|post|put|patch|delete|head|options):\s*$`)
	roleKey := regexp.MustCompile(`^      x-strata-role: (\S+)\s*$`)
	var ops []specOperation
	var path string
	inPaths := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "paths:" {
			inPaths = true
			continue
		}
		if inPaths && line != "" && line[0] != ' ' {
			break
		}
		if !inPaths {
			continue
		}
		if m := pathKey.FindStringSubmatch(line); m != nil {
			path = m[1]
			continue
		}
		if m := opKey.FindStringSubmatch(line); m != nil && path != "" {
			ops = append(ops, specOperation{method: strings.ToUpper(m[1]), path: path})
			continue
		}
		if m := roleKey.FindStringSubmatch(line); m != nil && len(ops) > 0 {
			ops[len(ops)-1].role = m[1]
		}
	}
	if len(ops) < 50 {
		t.Fatalf("found only %d operations in openapi.yaml; the line scan is stale", len(ops))
	}
	for _, op := range ops {
		switch op.role {
		case "none", "viewer", "member", "admin":
		default:
			t.Errorf("operation %s %s declares x-strata-role %q; want none, viewer, member or admin", op.method, op.path, op.role)
		}
	}
	return ops
}

// twoWorkspaces makes a data directory with workspaces A and B, one
// product each, before the server first opens it, and returns their ids.
func twoWorkspaces(t *testing.T, dir string) (wsA, productA, wsB, productB int64) {
	t.Helper()
	ctx := context.Background()
	st, err := duckdb.Open(ctx, dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ps [2]analytics.Product
	for i, name := range []string{"A", "B"} {
		w, err := st.CreateWorkspace(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if ps[i], err = st.CreateProduct(ctx, w.ID, "Product "+name); err != nil {
			t.Fatal(err)
		}
	}
	return ps[0].WorkspaceID, ps[0].ID, ps[1].WorkspaceID, ps[1].ID
}

// invite has admin invite email into workspace ws with role and returns
// the token of the link.
func invite(t *testing.T, admin *browser, ws int64, email, role string) string {
	t.Helper()
	r := admin.do(t, "POST", fmt.Sprintf("/api/v1/workspaces/%d/invites", ws), map[string]string{"email": email, "role": role})
	if r.Status != 201 {
		t.Fatalf("invite %s as %s: %d %s", email, role, r.Status, r.Body)
	}
	link, _ := r.JSON(t)["url"].(string)
	_, token, ok := strings.Cut(link, "/invite#")
	if !ok || !strings.HasPrefix(token, "st_inv_") || !strings.HasPrefix(link, admin.s.URL) {
		t.Fatalf("invite link %q; want %s/invite#st_inv_…", link, admin.s.URL)
	}
	return token
}

// accept accepts an invite in a fresh browser and returns it signed in.
func accept(t *testing.T, s *server, token, password string) *browser {
	t.Helper()
	b := &browser{s: s}
	r := b.do(t, "POST", "/api/v1/invites/accept", map[string]string{"token": token, "password": password})
	if r.Status != 201 {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	b.cookie = strings.Split(r.Header.Get("Set-Cookie"), ";")[0]
	return b
}

// matrixRequest is the request the matrix sends for op on behalf of a
// session: path parameters filled in with workspace ws and product p (and
// an id that names nothing for the rest), ?product=p on the routes that
// take the product from the query, and an empty JSON object as the body
// of a write. What the handler makes of it (a 400, a 404) does not matter:
// only whether the role check let it through.
func matrixRequest(op specOperation, ws, p int64) (string, any) {
	path := op.path
	switch {
	case strings.HasPrefix(path, "/api/v1/workspaces/{id}"):
		path = strings.Replace(path, "{id}", fmt.Sprint(ws), 1)
	case strings.HasPrefix(path, "/api/v1/products/{id}"):
		path = strings.Replace(path, "{id}", fmt.Sprint(p), 1)
	}
	path = regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "999999")
	if !strings.HasPrefix(op.path, "/api/v1/products") && !strings.HasPrefix(op.path, "/api/v1/workspaces") {
		path += "?" + url.Values{"product": {fmt.Sprint(p)}}.Encode()
	}
	if op.method == "GET" || op.method == "DELETE" {
		return path, nil
	}
	return path, map[string]any{}
}

var roleRank = map[string]int{"viewer": 1, "member": 2, "admin": 3}

// TestRoleMatrix sends every operation of api/openapi.yaml that declares a
// role as a viewer, a member and an admin of the product's workspace: a
// role below the declared one gets 403 role_forbidden, the others get past
// the role check. Then a member of workspace A only sends each of them for
// workspace B's product and workspace and gets 404 (tenant isolation).
// The operations come from the document, whose every operation must
// declare a role (TestEveryRouteDeclaresItsRole in api/ holds the route
// table to the same), so a new route is in the matrix as soon as it is
// documented.
func TestRoleMatrix(t *testing.T) {
	dir := t.TempDir()
	wsA, pA, wsB, pB := twoWorkspaces(t, dir)
	s := startServer(t, dir)
	owner := setupOwner(t, s)
	sessions := map[string]*browser{
		"admin":  owner,
		"member": accept(t, s, invite(t, owner, wsA, "member@example.com", "member"), "member password 1"),
		"viewer": accept(t, s, invite(t, owner, wsA, "viewer@example.com", "viewer"), "viewer password 1"),
	}
	// The member's session says what the dashboard hides by.
	r := sessions["member"].do(t, "GET", "/api/v1/session", nil)
	ms, _ := r.JSON(t)["memberships"].([]any)
	if len(ms) != 1 || fmt.Sprint(ms[0].(map[string]any)["role"]) != "member" || int64(ms[0].(map[string]any)["workspaceId"].(float64)) != wsA {
		t.Fatalf("the member's session: %s; want member of workspace %d only", r.Body, wsA)
	}

	ops := specOperations(t)
	var gated []specOperation
	for _, op := range ops {
		if roleRank[op.role] > 0 {
			gated = append(gated, op)
		}
	}
	// Every change a lower role could make runs before the admin's, and
	// the admin's destructive calls name ids that do not exist.
	sort.SliceStable(gated, func(i, j int) bool { return gated[i].method == "GET" && gated[j].method != "GET" })
	counts := map[string]int{}
	for _, role := range []string{"viewer", "member", "admin"} {
		b := sessions[role]
		for _, op := range gated {
			path, body := matrixRequest(op, wsA, pA)
			r := b.do(t, op.method, path, body)
			code := ""
			if r.Status >= 400 {
				code = r.ErrorCode(t)
			}
			refused := r.Status == 403 && code == "role_forbidden"
			switch {
			case roleRank[role] < roleRank[op.role]:
				if !refused {
					t.Errorf("%s %s as %s (declares %s): %d %s; want 403 role_forbidden", op.method, path, role, op.role, r.Status, r.Body)
				}
				counts["refused"]++
			case refused || code == "role_undeclared" || r.Status == 401:
				t.Errorf("%s %s as %s (declares %s): %d %s; want it past the role check", op.method, path, role, op.role, r.Status, r.Body)
			default:
				counts["allowed"]++
			}
		}
	}
	t.Logf("%d gated operations of %d; %d refusals and %d passes checked", len(gated), len(ops), counts["refused"], counts["allowed"])
	if len(gated) < 60 || counts["refused"] < 40 {
		t.Errorf("only %d gated operations and %d refusals; the matrix is not reaching the route table", len(gated), counts["refused"])
	}

	// Tenant isolation: workspace B's product and workspace do not exist
	// for a member of A alone, whatever the route's role.
	member := sessions["member"]
	for _, op := range gated {
		if op.path == "/api/v1/products" {
			continue // no product in the request; the list is checked below
		}
		if op.path == "/api/v1/admin/backups" {
			// Server-wide: it names no workspace, writes under the
			// operator's --backup-dir and answers only the manifest
			// (docs/security.md, "Backups").
			continue
		}
		path, body := matrixRequest(op, wsB, pB)
		r := member.do(t, op.method, path, body)
		if r.Status != 404 {
			t.Errorf("%s %s for workspace B as a member of A: %d %s; want 404", op.method, path, r.Status, r.Body)
		}
	}
	r = member.do(t, "GET", "/api/v1/products", nil)
	items, _ := r.JSON(t)["items"].([]any)
	if len(items) != 1 || int64(items[0].(map[string]any)["id"].(float64)) != pA {
		t.Errorf("a member of A lists products %s; want product %d alone", r.Body, pA)
	}
}
