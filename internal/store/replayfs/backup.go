package replayfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// BackupTo copies every product's segments into dir (a new directory laid
// out as DATA/replay), for an online backup (docs/operations.md, "Backup
// and restore"). Each product is copied while its writers wait (wmu, which
// compaction's runs take too), so that its copy is a state the product's
// index was in: the sealed segments are never written again (compaction
// writes a new file and renames it into place), so they are hard-linked
// when dir is on the same file system, and copied otherwise; the active
// one is copied up to the end of its last whole record. A product's
// appends wait for the length of one segment's copy at most, when the
// links succeed. It returns the bytes the copy holds.
func (s *Store) BackupTo(ctx context.Context, dir string) (int64, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("backing up replays: %w", err)
	}
	var total int64
	for _, p := range s.all() {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := p.backup(filepath.Join(dir, strconv.FormatInt(p.id, 10)))
		total += n
		if err != nil {
			return total, fmt.Errorf("backing up the replays of product %d: %w", p.id, err)
		}
	}
	return total, nil
}

func (p *product) backup(dir string) (int64, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.mu.RLock()
	defer p.mu.RUnlock()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	var total int64
	for _, seq := range p.order {
		seg := p.segs[seq]
		src, dst := p.path(segmentName(seq)), filepath.Join(dir, segmentName(seq))
		if seg != p.active {
			if err := os.Link(src, dst); err == nil {
				total += seg.size
				continue
			} else if !errors.Is(err, syscall.EXDEV) && !errors.Is(err, syscall.EPERM) {
				return total, err
			}
		}
		if err := copyPrefix(seg.f, seg.size, dst); err != nil {
			return total, err
		}
		total += seg.size
	}
	return total, nil
}

// copyPrefix copies the first n bytes of f to a new file dst and syncs it.
func copyPrefix(f *os.File, n int64, dst string) error {
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.NewSectionReader(f, 0, n)); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
