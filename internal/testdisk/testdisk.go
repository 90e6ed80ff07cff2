// Package testdisk gives tests a small filesystem of their own, to fill:
// a tmpfs mounted on a fresh directory and unmounted when the test ends.
// The full-disk tests of the store, the spool and the server use it, since
// a full disk is the one failure a test cannot otherwise make a real
// DuckDB file meet on demand.
package testdisk

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
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
// filesystem free, and returns the file's path. It writes only what is
// free beyond leave, so that other writers on the filesystem do not meet a
// full disk because of it; if they wrote more than leave meanwhile, the
// filler met the full disk first and is cut back to leave leave free.
func Fill(t testing.TB, dir string, leave int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	n := int64(st.Bavail)*int64(st.Bsize) - leave
	name := filepath.Join(dir, fmt.Sprintf("filler-%d", time.Now().UnixNano()))
	err := os.WriteFile(name, make([]byte, max(0, n)), 0o600)
	if errors.Is(err, syscall.ENOSPC) {
		// A server writing beside the filler took more than leave
		// meanwhile: give back what leaves leave free again.
		fi, serr := os.Stat(name)
		if serr == nil {
			serr = syscall.Statfs(dir, &st)
		}
		if serr != nil {
			t.Fatalf("filling %s: %v, then %v", dir, err, serr)
		}
		err = os.Truncate(name, max(0, fi.Size()-(leave-int64(st.Bavail)*int64(st.Bsize))))
	}
	if err != nil {
		t.Fatalf("filling %s: %v", dir, err)
	}
	return name
}

// FillInodes creates empty files in dir until about leave inodes of its
// filesystem are free, and returns their paths.
func FillInodes(t testing.TB, dir string, leave uint64) []string {
	t.Helper()
	fill := filepath.Join(dir, fmt.Sprintf("inodes-%d", time.Now().UnixNano()))
	if err := os.Mkdir(fill, 0o700); err != nil {
		t.Fatalf("filling the inodes of %s: %v", dir, err)
	}
	names := []string{fill}
	for FreeInodes(t, dir) > leave {
		name := filepath.Join(fill, fmt.Sprint(len(names)))
		f, err := os.Create(name)
		if err != nil {
			break
		}
		f.Close()
		names = append(names, name)
	}
	// The directory last, once it is empty.
	slices.Reverse(names)
	return names
}

// FreeInodes is how many files may still be created on dir's filesystem.
func FreeInodes(t testing.TB, dir string) uint64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ffree
}
