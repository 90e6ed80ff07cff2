package spool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// BackupPrepare is the spool's part of an online backup (docs/operations.md,
// "Backup and restore"): it copies into dir the segments an unclean stop
// left that are not replayed yet, then waits, like Sync, until every event
// appended before the call is in the inner store. A snapshot of the inner
// store taken after it returns holds every event acknowledged before the
// call, but those of the segments copied, which the restored server's spool
// replays at its Open (skipping the events the store already has).
//
// The order matters. Sync does not wait for the left segments (they wait
// for room on the disk); a left segment is deleted only once replayed into
// the inner store, so one that is gone by the time it is copied is in the
// store already, before the snapshot is taken. It returns the number of
// segments copied.
func (s *Store) BackupPrepare(ctx context.Context, dir string) (int, error) {
	s.mu.Lock()
	left := slices.Clone(s.left)
	s.mu.Unlock()
	copied := 0
	for _, name := range left {
		err := copyFile(name, filepath.Join(dir, filepath.Base(name)))
		if errors.Is(err, fs.ErrNotExist) {
			continue // replayed meanwhile: the inner store has it
		} else if err != nil {
			return copied, fmt.Errorf("copying spool segment: %w", err)
		}
		copied++
	}
	if err := s.Sync(ctx); err != nil {
		return copied, fmt.Errorf("waiting for the spool to load what it acknowledged: %w", err)
	}
	return copied, nil
}

// copyFile copies src to a new file dst (created with its directory), and
// syncs it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
