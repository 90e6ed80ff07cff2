// Package backup takes online backups of an embedded server's data
// directory and restores them into a new one (docs/operations.md, "Backup
// and restore").
//
// A backup is a directory laid out as a data directory, plus a manifest:
//
//	DIR/strata.duckdb           the database: events and metadata (sourcemaps included)
//	DIR/spool/segment-….log     segments an unclean stop left, not yet replayed
//	DIR/replay/<product>/….seg  the session replay segments
//	DIR/manifest.json           what is in it, with checksums; written last
//
// What makes it complete: every event acknowledged before the backup
// started is in the database copy or in a copied spool segment. An event
// is acknowledged once it is in the spool's fsynced log; the backup first
// copies the segments Sync does not wait for, then waits until the spool
// has loaded everything appended before it started (spool.BackupPrepare),
// and only then copies the database in one snapshot (duckdb.BackupTo). The
// restored server's spool replays the copied segments at its start,
// skipping the events the database holds already.
package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"strata/internal/analytics"
	"strata/internal/buildinfo"
	"strata/internal/store/duckdb"
	"strata/internal/store/replayfs"
	"strata/internal/store/spool"
)

// ManifestName is the manifest's file name inside a backup.
const ManifestName = "manifest.json"

// FormatVersion is the version of the backup layout and its manifest. A
// restore refuses a backup of another format.
const FormatVersion = 1

// Manifest describes one backup.
type Manifest struct {
	// Format is FormatVersion of the build that wrote it.
	Format int `json:"format"`
	// SchemaVersion is the database's on-disk format: the highest
	// migration applied (docs/operations.md, "Upgrades").
	SchemaVersion int            `json:"schemaVersion"`
	Build         buildinfo.Info `json:"build"`
	// StartedAt is when the backup started: every event acknowledged
	// before it is in the backup. FinishedAt is when it was complete.
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`
	// SpoolSegments is how many spool segments it holds; ReplayBytes how
	// many bytes of replay segments.
	SpoolSegments int   `json:"spoolSegments"`
	ReplayBytes   int64 `json:"replayBytes"`
	// Files are every file of the backup but the manifest, by path
	// relative to the backup, in order.
	Files []File `json:"files"`
}

// File is one file of a backup.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Runner takes the backups of one server's embedded stores, one at a time.
type Runner struct {
	DB      *duckdb.Store
	Spool   *spool.Store
	Replays *replayfs.Store
	Now     func() time.Time

	mu sync.Mutex
}

// Take writes a backup into dir, which must be absent or an empty
// directory. A second backup while one runs is refused rather than queued:
// each reads the whole database. On failure, what it wrote is removed.
func (r *Runner) Take(ctx context.Context, dir string) (Manifest, error) {
	if !r.mu.TryLock() {
		return Manifest{}, analytics.Errorf(analytics.KindConflict, "backup_running",
			"A backup is running already; wait for it to finish and try again.")
	}
	defer r.mu.Unlock()
	now := r.Now
	if now == nil {
		now = time.Now
	}
	if err := prepareEmpty(dir, "backup"); err != nil {
		return Manifest{}, err
	}
	m := Manifest{Format: FormatVersion, Build: buildinfo.Read(), StartedAt: now().UTC()}
	err := r.take(ctx, dir, &m)
	if err == nil {
		m.FinishedAt = now().UTC()
		err = writeManifest(dir, m)
	}
	if err != nil {
		emptyDir(dir)
		return Manifest{}, err
	}
	return m, nil
}

func (r *Runner) take(ctx context.Context, dir string, m *Manifest) error {
	var err error
	if r.Spool != nil {
		if m.SpoolSegments, err = r.Spool.BackupPrepare(ctx, filepath.Join(dir, "spool")); err != nil {
			return err
		}
	}
	if m.SchemaVersion, err = r.DB.BackupTo(ctx, filepath.Join(dir, duckdb.FileName)); err != nil {
		return err
	}
	if r.Replays != nil {
		if m.ReplayBytes, err = r.Replays.BackupTo(ctx, filepath.Join(dir, "replay")); err != nil {
			return err
		}
	}
	m.Files, err = checksum(dir)
	return err
}

// prepareEmpty makes dir, or checks that it is an empty directory.
func prepareEmpty(dir, what string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating the %s directory: %w", what, err)
		}
		return nil
	case err != nil:
		return analytics.Errorf(analytics.KindInvalid, what+"_target_invalid",
			"The %s target %s cannot be read as a directory: %s.", what, dir, err.Error())
	case len(entries) > 0:
		return analytics.Errorf(analytics.KindConflict, what+"_target_not_empty",
			"The %s target %s is not empty; name a new or empty directory.", what, dir)
	}
	return nil
}

// emptyDir removes what dir holds, leaving dir itself.
func emptyDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// checksum lists every file under dir with its size and SHA-256.
func checksum(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		sum, size, err := hashFile(path)
		if err != nil {
			return err
		}
		files = append(files, File{Path: filepath.ToSlash(rel), Size: size, SHA256: sum})
		return nil
	})
	slices.SortFunc(files, func(a, b File) int {
		if a.Path < b.Path {
			return -1
		}
		if a.Path > b.Path {
			return 1
		}
		return 0
	})
	return files, err
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// writeManifest writes the manifest last, and syncs it and the directory:
// a backup without one is incomplete, and restore refuses it.
func writeManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, ManifestName), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("writing the backup manifest: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("writing the backup manifest: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing the backup manifest: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ReadManifest reads a backup's manifest.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return m, analytics.Errorf(analytics.KindInvalid, "backup_incomplete",
			"%s has no %s: it is not a backup, or one that did not finish. Restore from another.", dir, ManifestName)
	} else if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("reading %s: %w", filepath.Join(dir, ManifestName), err)
	}
	if m.Format != FormatVersion {
		return m, analytics.Errorf(analytics.KindInvalid, "backup_format",
			"%s is a backup of format %d; this build restores format %d.", dir, m.Format, FormatVersion)
	}
	return m, nil
}

// Restore copies the backup in from into the data directory to, which
// must be absent or empty, checking every file against the manifest's
// size and checksum. The result is a data directory a server starts on;
// its spool replays the copied segments at that start. On failure, what it
// wrote is removed.
func Restore(from, to string) (Manifest, error) {
	m, err := ReadManifest(from)
	if err != nil {
		return m, err
	}
	if err := prepareEmpty(to, "restore"); err != nil {
		return m, err
	}
	for _, f := range m.Files {
		if err := restoreFile(from, to, f); err != nil {
			emptyDir(to)
			return m, err
		}
	}
	if err := syncDir(to); err != nil {
		emptyDir(to)
		return m, err
	}
	return m, nil
}

func restoreFile(from, to string, f File) error {
	rel := filepath.FromSlash(f.Path)
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("the backup manifest names %q, outside the backup", f.Path)
	}
	in, err := os.Open(filepath.Join(from, rel))
	if err != nil {
		return fmt.Errorf("restoring %s: %w", f.Path, err)
	}
	defer in.Close()
	dst := filepath.Join(to, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err != nil {
		return fmt.Errorf("restoring %s: %w", f.Path, err)
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return analytics.Errorf(analytics.KindInvalid, "backup_corrupt",
			"%s in the backup does not match its manifest (size or checksum): the backup is damaged. Restore from another.", f.Path)
	}
	return out.Sync()
}
