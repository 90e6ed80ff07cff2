// Package testdisk gives tests a small filesystem of their own, to fill:
// a tmpfs mounted on a fresh directory and unmounted when the test ends.
// The full-disk tests of the store, the spool and the server use it, since
// a full disk is the one failure a test cannot otherwise make a real
// DuckDB file meet on demand.
package testdisk

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Mount mounts a tmpfs with the given mount options (e.g. "size=40m") on
// a fresh directory and returns it; it is unmounted when the test ends.
// Mounting needs root, which CI has; elsewhere the test is skipped, saying
// why.
func Mount(t testing.TB, options string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", options, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("unmounting %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// Resize changes the size of a tmpfs that Mount mounted, as freeing space
// on it would.
func Resize(t testing.TB, dir, size string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,size="+size, dir).CombinedOutput(); err != nil {
		t.Fatalf("resizing the tmpfs: %v: %s", err, out)
	}
}

// Fill writes a file into dir that leaves about leave bytes of its
// filesystem free, and returns the file's path.
func Fill(t testing.TB, dir string, leave int64) string {
	t.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	var n int64
	for {
		k, err := f.Write(buf)
		n += int64(k)
		if err != nil {
			break
		}
	}
	f.Close()
	if err := os.Truncate(name, max(0, n-leave)); err != nil {
		t.Fatal(err)
	}
	return name
}
