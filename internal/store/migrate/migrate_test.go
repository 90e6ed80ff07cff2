package migrate

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

func TestLoadRefusesBadNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"unnumbered": {"m/init.sql": {Data: []byte("SELECT 1")}},
		"duplicate":  {"m/0001_a.sql": {Data: []byte("SELECT 1")}, "m/1_b.sql": {Data: []byte("SELECT 1")}},
	} {
		if _, err := Load(fsys, "m"); err == nil {
			t.Errorf("%s: Load accepted it", name)
		}
	}
	ms, err := Load(fstest.MapFS{
		"m/0002_b.sql": {Data: []byte("CREATE TABLE b (x INTEGER)")},
		"m/0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER)")},
		"m/README":     {Data: []byte("not a migration")},
	}, "m")
	if err != nil || len(ms) != 2 || ms[0].Version != 1 || ms[1].Name != "0002_b.sql" {
		t.Fatalf("Load = %+v, %v", ms, err)
	}
}

// TestApply runs migrations on a real DuckDB file: each once, in order, a
// failing one rolled back whole, and a database newer than the binary
// refused.
func TestApply(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("duckdb", t.TempDir()+"/m.duckdb")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	ms := []Migration{
		{1, "0001_a.sql", "CREATE TABLE a (x INTEGER)"},
		{2, "0002_b.sql", "CREATE TABLE b (x INTEGER); INSERT INTO b VALUES (1)"},
	}
	if p, err := Pending(ctx, db, ms); err != nil || len(p) != 2 {
		t.Fatalf("Pending on an empty database = %v, %v; want both", p, err)
	}
	var tables int
	db.QueryRow(`SELECT count(*) FROM information_schema.tables`).Scan(&tables)
	if tables != 0 {
		t.Fatalf("Pending created %d tables; it must not write", tables)
	}
	if n, err := Apply(ctx, db, ms[:1], now); err != nil || n != 1 {
		t.Fatalf("first Apply = %d, %v", n, err)
	}
	if p, err := Pending(ctx, db, ms); err != nil || len(p) != 1 || p[0].Version != 2 {
		t.Fatalf("Pending after the first = %v, %v; want 0002_b.sql", p, err)
	}
	if n, err := Apply(ctx, db, ms, now); err != nil || n != 1 {
		t.Fatalf("second Apply = %d, %v", n, err)
	}
	if n, err := Apply(ctx, db, ms, now); err != nil || n != 0 {
		t.Fatalf("third Apply = %d, %v; want nothing applied", n, err)
	}
	bad := append(ms, Migration{3, "0003_bad.sql", "CREATE TABLE c (x INTEGER); SELECT * FROM missing_table"})
	if _, err := Apply(ctx, db, bad, now); err == nil || !strings.Contains(err.Error(), "0003_bad.sql") {
		t.Fatalf("failing migration: %v", err)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_name = 'c'`).Scan(&n)
	if n != 0 {
		t.Error("a failed migration left table c behind")
	}
	if _, err := Apply(ctx, db, ms[:1], now); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("older binary on newer schema: %v", err)
	}
	if _, err := Pending(ctx, db, ms[:1]); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Pending, older binary on newer schema: %v", err)
	}
}

func TestMerge(t *testing.T) {
	meta := []Migration{{Version: 1, Name: "0001_a.sql"}, {Version: 3, Name: "0003_c.sql"}}
	events := []Migration{{Version: 2, Name: "0002_b.sql"}, {Version: 4, Name: "0004_d.sql"}}
	all, err := Merge(meta, events)
	if err != nil || len(all) != 4 {
		t.Fatalf("Merge = %v, %v", all, err)
	}
	for i, m := range all {
		if m.Version != i+1 {
			t.Errorf("position %d holds version %d", i, m.Version)
		}
	}
	if _, err := Merge(meta, []Migration{{Version: 3, Name: "0003_other.sql"}}); err == nil || !strings.Contains(err.Error(), "share version 3") {
		t.Errorf("a version in two sets: %v", err)
	}
}
