package e2e

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The package's tests take about seven minutes in a row, and most of that
// time a test waits on its servers rather than using a core. `make
// test-go` therefore runs them as two processes side by side, each with
// STRATA_E2E_SHARD set to its share ("1/2", "2/2"): shardPattern turns the
// share into a -test.run pattern that names its tests.

// shardSeconds is what the slowest tests took alone on a quiet 2-core
// machine (go test -json, 2026-11-29), so that the shares come out even:
// a test not listed counts as defaultShardSeconds. Only the balance
// depends on these; every test runs in one share whatever they say.
var shardSeconds = map[string]float64{
	"TestPartialRolloutExperiments":          53,
	"TestSurveyReadsNeverBreakIngest":        37,
	"TestHeavyQueriesAreAnsweredOrRefused":   35,
	"TestFullDiskStart":                      17,
	"TestUpgradeFromPreviousRelease":         13,
	"TestAnnotationLimitHoldsAcrossNodes":    11,
	"TestRateLimitHoldsAcrossNodes":          10,
	"TestCrashLosesNothingAcknowledged":      10,
	"TestHostileSourcemapsKeepMemoryBounded": 9,
	"TestQueriesMatchReference":              8,
	"TestErrorAlertsOnTwoNodes":              8,
	"TestReplayReadMemory":                   8,
	"TestErrorAlerts":                        8,
}

const defaultShardSeconds = 2.5

// shardPattern returns the -test.run pattern of share k of n ("k/n") of
// the tests declared in the _test.go files of dir: the tests, slowest
// first, each given to the share with the least time so far.
func shardPattern(share, dir string) (string, error) {
	k, n, err := parseShare(share)
	if err != nil {
		return "", err
	}
	names, err := testNames(dir)
	if err != nil {
		return "", err
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(shardCost(b), shardCost(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	load := make([]float64, n)
	var mine []string
	for _, name := range names {
		least := 0
		for i := range load {
			if load[i] < load[least] {
				least = i
			}
		}
		load[least] += shardCost(name)
		if least == k-1 {
			mine = append(mine, regexp.QuoteMeta(name))
		}
	}
	if len(mine) == 0 {
		return "", fmt.Errorf("STRATA_E2E_SHARD=%s: no tests in this share", share)
	}
	return "^(" + strings.Join(mine, "|") + ")$", nil
}

func shardCost(name string) float64 {
	if s, ok := shardSeconds[name]; ok {
		return s
	}
	return defaultShardSeconds
}

// parseShare reads "k/n", 1 ≤ k ≤ n.
func parseShare(share string) (k, n int, err error) {
	a, b, ok := strings.Cut(share, "/")
	k, errK := strconv.Atoi(a)
	n, errN := strconv.Atoi(b)
	if !ok || errK != nil || errN != nil || n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("STRATA_E2E_SHARD=%q: want k/n with 1 ≤ k ≤ n", share)
	}
	return k, n, nil
}

// testNames lists the top-level TestXxx(t *testing.T) functions declared
// in dir's _test.go files.
func testNames(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" ||
				fn.Type.Params == nil || len(fn.Type.Params.List) != 1 {
				continue
			}
			if star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr); ok {
				if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "T" {
					names = append(names, fn.Name.Name)
				}
			}
		}
	}
	return names, nil
}

// TestShardsCoverEveryTestOnce checks that the shares of one, two and
// three processes together name every test of the package exactly once.
func TestShardsCoverEveryTestOnce(t *testing.T) {
	names, err := testNames(".")
	if err != nil || len(names) < 100 || !slices.Contains(names, "TestShardsCoverEveryTestOnce") || slices.Contains(names, "TestMain") {
		t.Fatalf("the package's tests: %d %v", len(names), err)
	}
	for n := 1; n <= 3; n++ {
		seen := map[string]int{}
		for k := 1; k <= n; k++ {
			pattern, err := shardPattern(fmt.Sprintf("%d/%d", k, n), ".")
			if err != nil {
				t.Fatal(err)
			}
			re := regexp.MustCompile(pattern)
			for _, name := range names {
				if re.MatchString(name) {
					seen[name]++
				}
			}
		}
		for _, name := range names {
			if seen[name] != 1 {
				t.Errorf("%s is in %d of %d shares", name, seen[name], n)
			}
		}
	}
	for _, bad := range []string{"", "0/2", "3/2", "1", "a/b"} {
		if _, err := shardPattern(bad, "."); err == nil {
			t.Errorf("STRATA_E2E_SHARD=%q was taken", bad)
		}
	}
}
