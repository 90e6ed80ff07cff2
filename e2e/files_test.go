package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDataFilesPrivate checks that the server's data files are readable by
// its user only (0600), even when it was started with the common umask 022,
// and that a file an older version left 0644 is tightened at the next
// start: the database holds every event and the credential hashes.
func TestDataFilesPrivate(t *testing.T) {
	// The server inherits the test's umask: make it the common one, so
	// that the files are private because of the server.
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := t.TempDir()
	s := startServer(t, dir)
	for i := 0; i < 3; i++ {
		if r := postEvents(t, s, s.BootstrapKey, ev("private", "u")); r.Status != 202 {
			t.Fatalf("ingest: %d %s", r.Status, r.Body)
		}
	}
	token := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", "1"))
	// A query waits for the spool to load into DuckDB, so the database and
	// its write-ahead log have been written.
	if r := do(t, "GET", s.URL+"/api/v1/query/events", nil, map[string]string{"Authorization": "Bearer " + token}); r.Status != 200 {
		t.Fatalf("query: %d %s", r.Status, r.Body)
	}
	checkPrivate(t, dir)
	s.Stop()

	// A file of an older version, 0644, is made private at the next start.
	db := filepath.Join(dir, "strata.duckdb")
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, dir)
	checkPrivate(t, dir)
	s.Stop()
}

// checkPrivate fails the test for any file under dir that its group or
// others may access, and requires strata.duckdb among them.
func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	seen := false
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v; want no access for group and others", strings.TrimPrefix(path, dir), info.Mode().Perm())
		}
		if d.Name() == "strata.duckdb" {
			seen = true
		}
		return nil
	})
	if !seen {
		t.Errorf("no strata.duckdb in %s", dir)
	}
}
