package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDuckDBMemoryFor pins the formula of the pool's default: a quarter of
// the memory less 1 GiB, between 192 MiB and 16 GiB.
func TestDuckDBMemoryFor(t *testing.T) {
	for _, c := range []struct {
		name  string
		total int64
		want  string
	}{
		{"unknown", 0, "192MiB"},
		{"1 GB VPS", 1 << 30, "192MiB"},
		{"2 GB", 2 << 30, "256MiB"},
		{"8 GB", 8 << 30, "1792MiB"},
		{"24 GB", 24 << 30, "5888MiB"},
		{"256 GB", 256 << 30, "16384MiB"},
	} {
		if got := DuckDBMemoryFor(c.total); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestDuckDBMemoryDefault checks that the default follows this machine's
// memory and that a flag or the environment still wins.
func TestDuckDBMemoryDefault(t *testing.T) {
	total, from := MachineMemory()
	if total <= 0 {
		t.Skip("no /proc/meminfo here")
	}
	if got := Default().DuckDBMemoryLimit; got != DuckDBMemoryFor(total) {
		t.Errorf("default %s, want %s for %d bytes (%s)", got, DuckDBMemoryFor(total), total, from)
	}
	c, err := Load([]string{"--data", "/d", "--duckdb-memory", "64MB"}, env(map[string]string{"STRATA_DUCKDB_MEMORY": "1GB"}))
	if err != nil || c.DuckDBMemoryLimit != "64MB" {
		t.Fatalf("--duckdb-memory over the env: %q, %v", c.DuckDBMemoryLimit, err)
	}
	if d := c.DescribeDuckDBMemory(); d != "set by --duckdb-memory or STRATA_DUCKDB_MEMORY" {
		t.Errorf("described %q", d)
	}
	c, err = Load(nil, env(map[string]string{"STRATA_DUCKDB_MEMORY": "1GB"}))
	if err != nil || c.DuckDBMemoryLimit != "1GB" {
		t.Fatalf("STRATA_DUCKDB_MEMORY: %q, %v", c.DuckDBMemoryLimit, err)
	}
}

// TestMemTotal reads MemTotal from a meminfo file in kB.
func TestMemTotal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(p, []byte("MemFree:  100 kB\nMemTotal:       24684084 kB\n"), 0o600)
	if got := memTotal(p); got != 24684084<<10 {
		t.Errorf("MemTotal %d", got)
	}
	if got := memTotal(filepath.Join(t.TempDir(), "none")); got != 0 {
		t.Errorf("missing file: %d", got)
	}
}
