// The contract test keeps openapi.yaml and the code that serves it from
// drifting apart (the package's doc is in openapi.go).

package api

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"strata/internal/ingest"
	"strata/internal/query"
)

// codePatterns find the error codes the server can send. The per-event
// rejection codes are typed (ingest.RejectReasons) and are read from there.
var codePatterns = []*regexp.Regexp{
	regexp.MustCompile(`Errorf\([^,]+, "([a-z_]+)"`),
	regexp.MustCompile(`Code:\s+"([a-z_]+)"`),
}

// codeSources are the packages whose errors reach HTTP clients.
var codeSources = []string{
	"../internal/analytics", // AsError: the "internal" answer to any unexpected failure
	"../internal/ingest",
	"../internal/httpapi",
	"../internal/auth",
	"../internal/query",
	"../internal/messages",     // campaign_not_active on the SDK's message and survey paths
	"../internal/app",          // storage_full, /readyz
	"../internal/store/duckdb", // storage_unavailable while a failed write is recovered from
}

// readSpec returns openapi.yaml.
func readSpec(t *testing.T) string {
	t.Helper()
	spec, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(spec)
}

// documented reports whether spec documents code as a code: as the value
// of a code or const key, in backquotes, or as an item of an enum list. A
// bare word in prose ("an internal error") does not count.
func documented(spec, code string) bool {
	q := regexp.QuoteMeta(code)
	re := regexp.MustCompile(`(?m)(?:(?:code|const):\s+` + q + `\s*$|` + "`" + q + "`" +
		`|^\s*-\s+` + q + `\s*$|[\[,]\s*` + q + `\s*[,\]])`)
	return re.MatchString(spec)
}

// TestEveryCodeIsDocumented reads the ingest, HTTP, auth and query sources
// and checks that every code they can answer with appears in openapi.yaml.
func TestEveryCodeIsDocumented(t *testing.T) {
	spec := readSpec(t)
	var files []string
	for _, dir := range codeSources {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(m) == 0 {
			t.Fatalf("no Go sources in %s (%v); is the list of packages stale?", dir, err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	codes := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range codePatterns {
			for _, m := range re.FindAllSubmatch(src, -1) {
				codes[string(m[1])] = true
			}
		}
	}
	for _, reason := range ingest.RejectReasons {
		codes[string(reason)] = true
	}
	if len(codes) < 30 {
		t.Fatalf("found only %d codes in the sources; the patterns are stale", len(codes))
	}
	for _, code := range []string{"invalid_request", "query_not_found", "body_too_large", "missing_credentials", "internal", "not_found"} {
		if !codes[code] {
			t.Errorf("code %q was not found in the sources; the patterns or the source list are stale", code)
		}
	}
	for code := range codes {
		if !documented(spec, code) {
			t.Errorf("code %q is sent by the server but not documented in openapi.yaml", code)
		}
	}
}

// TestRejectionCodes holds the RejectionCode enum of openapi.yaml equal to
// ingest.RejectReasons, in the same order: a reason added to the code is
// documented, and a documented one is one the server can send.
func TestRejectionCodes(t *testing.T) {
	spec := readSpec(t)
	_, block, ok := strings.Cut(spec, "\n    RejectionCode:\n")
	if !ok {
		t.Fatal("openapi.yaml has no RejectionCode schema")
	}
	_, block, ok = strings.Cut(block, "\n      enum:\n")
	if !ok {
		t.Fatal("RejectionCode has no enum")
	}
	var documented []string
	for _, line := range strings.Split(block, "\n") {
		item, ok := strings.CutPrefix(line, "        - ")
		if !ok {
			break
		}
		documented = append(documented, strings.TrimSpace(item))
	}
	var reasons []string
	for _, r := range ingest.RejectReasons {
		reasons = append(reasons, string(r))
	}
	if !slices.Equal(documented, reasons) {
		t.Errorf("RejectionCode enum in openapi.yaml:\n%v\ningest.RejectReasons:\n%v", documented, reasons)
	}
}

// routePattern matches a route registration with a method, such as
// mux.Handle("POST /api/v1/query/funnel", …), or fast.handle("POST /e", …)
// for the routes served on fasthttp directly.
var routePattern = regexp.MustCompile(`(?:mux|fast)\.[Hh]andle\("([A-Z]+) (/[^"]*)"`)

// servedRoutes returns the "METHOD /path" routes registered in routes.go.
func servedRoutes(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("../internal/httpapi/routes.go")
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	for _, m := range routePattern.FindAllSubmatch(src, -1) {
		routes[string(m[1])+" "+string(m[2])] = true
	}
	// A shared link's reads are dispatched under /share/{secret}/ by
	// share.go: its own two routes (case "…":) and the allowlist
	// (shareRoutes, "…": handler).
	share, err := os.ReadFile("../internal/httpapi/share.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range shareRoutePattern.FindAllSubmatch(share, -1) {
		routes[string(m[1])+" /share/{secret}"+string(m[2])] = true
	}
	return routes
}

// shareRoutePattern matches a route of share.go's dispatcher, such as
// `case "GET /api/v1/share":` or `"POST /api/v1/query/trend": s.…`.
var shareRoutePattern = regexp.MustCompile(`"([A-Z]+) (/api/v1/[^"]*)":`)

// httpMethods are the operation keys of an OpenAPI path item.
var httpMethods = map[string]bool{
	"get": true, "put": true, "post": true, "delete": true,
	"options": true, "head": true, "patch": true, "trace": true,
}

// documentedRoutes reads the operations of openapi.yaml's top-level paths
// object with a line scan: a path is a two-space-indented key starting with
// "/", an operation a four-space-indented HTTP method key under it.
func documentedRoutes(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pathKey := regexp.MustCompile(`^  (/[^\s:]*):\s*$`)
	opKey := regexp.MustCompile(`^    ([a-z]+):\s*$`)
	ops := map[string]bool{}
	inPaths, path := false, ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if !strings.HasPrefix(line, " ") { // a top-level key
			inPaths, path = strings.HasPrefix(line, "paths:"), ""
			continue
		}
		if !inPaths {
			continue
		}
		if m := pathKey.FindStringSubmatch(line); m != nil {
			path = m[1]
			continue
		}
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			path = "" // another two-space key: not a path
			continue
		}
		if m := opKey.FindStringSubmatch(line); m != nil && path != "" && httpMethods[m[1]] {
			ops[strings.ToUpper(m[1])+" "+path] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ops
}

// TestEveryRouteIsDocumented checks that every route registered with a
// method in routes.go is an operation of openapi.yaml under the same path
// (path parameters as written), and that openapi.yaml documents no
// operation the server does not register. OPTIONS routes and the catch-all "/"
// are not operations of their own.
func TestEveryRouteIsDocumented(t *testing.T) {
	served := servedRoutes(t)
	documented := documentedRoutes(t)
	if len(served) < 10 {
		t.Fatalf("found only %d routes in routes.go; the pattern is stale", len(served))
	}
	if len(documented) < 5 {
		t.Fatalf("found only %d operations in openapi.yaml; the line scan is stale", len(documented))
	}
	var missing, extra []string
	for r := range served {
		method, path, _ := strings.Cut(r, " ")
		if method == "OPTIONS" || path == "/" {
			continue
		}
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for op := range documented {
		if !served[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, r := range missing {
		t.Errorf("route %q is served (internal/httpapi/routes.go) but not documented in openapi.yaml", r)
	}
	for _, op := range extra {
		t.Errorf("operation %q is documented in openapi.yaml but not registered in internal/httpapi/routes.go", op)
	}
}

// TestFunnelLimits holds the funnel limits openapi.yaml states, which the
// dashboard's generated limits.gen.ts reads, equal to the ones the server
// applies: the window's bounds and default, the number of steps and the
// placeholder steps.
func TestFunnelLimits(t *testing.T) {
	spec := readSpec(t)
	_, block, _ := strings.Cut(spec, "\n    FunnelRequest:\n")
	block, _, _ = strings.Cut(block, "\n    FunnelStep:\n")
	value := func(after, key string) string {
		t.Helper()
		_, rest, ok := strings.Cut(block, after)
		m := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(key) + `:\s*(.+)$`).FindStringSubmatch(rest)
		if !ok || m == nil {
			t.Fatalf("FunnelRequest has no %s after %q", key, after)
		}
		return strings.TrimSpace(m[1])
	}
	for _, c := range []struct {
		after, key string
		want       int
	}{
		{"windowHours:", "minimum", 1},
		{"windowHours:", "maximum", query.MaxWindowHours},
		{"windowHours:", "default", query.DefaultWindowHours},
		{"steps:", "minItems", query.MinSteps},
		{"steps:", "maxItems", query.MaxSteps},
	} {
		if got := value(c.after, c.key); got != strconv.Itoa(c.want) {
			t.Errorf("FunnelRequest %s %s is %s in openapi.yaml, %d in the server", c.after, c.key, got, c.want)
		}
	}
	if got, want := value("x-placeholder:", "value"), "["+strings.Join(query.PlaceholderSteps, ", ")+"]"; got != want {
		t.Errorf("placeholder steps are %s in openapi.yaml, %s in the server", got, want)
	}
}
