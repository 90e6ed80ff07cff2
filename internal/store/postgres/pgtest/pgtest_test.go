//go:build unix

package pgtest

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStart checks the harness without Main: each Start is a server of its
// own with an empty, writable database, and stopping one leaves neither a
// process nor a directory behind.
func TestStart(t *testing.T) {
	ctx := context.Background()
	url := Start(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("new database has %d tables (%v), want none", n, err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE t (x INTEGER)`); err != nil {
		t.Errorf("database is not writable: %v", err)
	}

	bin, _ := findBinaries()
	owner, _ := serverUser()
	srv, err := startServer(ctx, bin, owner)
	if err != nil {
		t.Fatal(err)
	}
	pid := srv.cmd.Process.Pid
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("postgres (pid %d) still exists after stop: %v", pid, err)
	}
	if _, err := os.Stat(srv.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists after stop: %v", srv.dir, err)
	}
}
