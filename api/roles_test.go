package api

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// roleRoutePattern matches a route of routes.go with what wraps its
// handler: `mux.Handle("GET /api/v1/flags", asViewer(h(…)))`.
var roleRoutePattern = regexp.MustCompile(`mux\.Handle\("([A-Z]+) (/[^"]*)", ([A-Za-z]+)\(([A-Za-z]*)`)

// TestEveryRouteDeclaresItsRole holds each operation's x-strata-role in
// openapi.yaml to the least role routes.go declares for its route
// (asViewer, asMember, asAdmin, or leastRole of a named role constant),
// and "none" to a route that declares none. The e2e matrix
// (e2e/roles_test.go) then checks what the server does with it.
func TestEveryRouteDeclaresItsRole(t *testing.T) {
	src, err := os.ReadFile("../internal/httpapi/routes.go")
	if err != nil {
		t.Fatal(err)
	}
	// Role constants the table may name through leastRole.
	consts := map[string]string{}
	files, _ := filepath.Glob("../internal/httpapi/*.go")
	constPattern := regexp.MustCompile(`(?m)^const (\w+) = analytics\.Role(Viewer|Member|Admin)$`)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range constPattern.FindAllSubmatch(b, -1) {
			consts[string(m[1])] = strings.ToLower(string(m[2]))
		}
	}
	declared := map[string]string{}
	for _, m := range roleRoutePattern.FindAllSubmatch(src, -1) {
		route, wrap, arg := string(m[1])+" "+string(m[2]), string(m[3]), string(m[4])
		switch wrap {
		case "asViewer", "asMember", "asAdmin":
			declared[route] = strings.ToLower(strings.TrimPrefix(wrap, "as"))
		case "leastRole":
			if consts[arg] == "" {
				t.Errorf("route %s: leastRole(%s) names no role constant this test can read", route, arg)
			}
			declared[route] = consts[arg]
		default:
			declared[route] = "none"
		}
	}
	if len(declared) < 80 {
		t.Fatalf("found only %d routes in routes.go; the pattern is stale", len(declared))
	}
	roles := specRoles(t)
	for route, role := range declared {
		if spec, ok := roles[route]; ok && spec != role {
			t.Errorf("route %s declares %s in routes.go but x-strata-role %s in openapi.yaml", route, role, spec)
		}
	}
	for route, role := range roles {
		if role == "" {
			t.Errorf("operation %s has no x-strata-role in openapi.yaml", route)
		}
	}
}

// specRoles returns each operation's x-strata-role, "" when it has none.
func specRoles(t *testing.T) map[string]string {
	t.Helper()
	pathKey := regexp.MustCompile(`^  (/\S*):\s*$`)
	opKey := regexp.MustCompile(`^    (get|post|put|patch|delete|head|options):\s*$`)
	roleKey := regexp.MustCompile(`^      x-strata-role: (\S+)\s*$`)
	roles := map[string]string{}
	var path, op string
	inPaths := false
	for line := range strings.SplitSeq(readSpec(t), "\n") {
		switch {
		case line == "paths:":
			inPaths = true
			continue
		case inPaths && line != "" && line[0] != ' ':
			inPaths = false
		}
		if !inPaths {
			continue
		}
		if m := pathKey.FindStringSubmatch(line); m != nil {
			path = m[1]
		} else if m := opKey.FindStringSubmatch(line); m != nil && path != "" {
			op = strings.ToUpper(m[1]) + " " + path
			roles[op] = ""
		} else if m := roleKey.FindStringSubmatch(line); m != nil && op != "" {
			roles[op] = m[1]
		}
	}
	return roles
}
