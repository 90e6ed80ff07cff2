package replayfs

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"strata/internal/analytics"
)

// The layout before segments kept a directory per session and a file per
// chunk:
//
//	DATA/replay/<product>/<session>/<window>.<index>.chunk
//
// a chunk file being its header as one line of JSON, a newline, then the
// data. Open moves such sessions into the product's segments (migrate):
// each session's chunks are appended (durably, a retry of one already
// there being skipped), then its directory is removed, so that a crash
// half-way loses nothing and repeats nothing. A session that cannot be
// moved (a corrupt file, a full disk) is logged and left for the next
// start.

// migrate moves the product's session directories into segments.
func (p *product) migrate() {
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		p.store.log.Error("reading replay product for sessions to move into segments", "product", p.id, "err", err)
		return
	}
	moved := 0
	for _, e := range entries {
		if !e.IsDir() || !analytics.ValidReplayID(e.Name()) {
			continue
		}
		if err := p.migrateSession(e.Name()); err != nil {
			p.store.log.Error("moving a replay session into segments failed; it is tried again at the next start",
				"product", p.id, "session", e.Name(), "err", err)
			continue
		}
		moved++
	}
	if moved > 0 {
		p.store.log.Info("moved replay sessions from their directories into segments", "product", p.id, "sessions", moved)
	}
}

func (p *product) migrateSession(id string) error {
	dir := p.path(id)
	chunks, err := legacyChunks(p.id, dir)
	if err != nil {
		return err
	}
	if len(chunks) > 0 {
		at := make([]int, len(chunks))
		for i := range at {
			at[i] = i
		}
		if _, err := p.append(analytics.OrderReplayChunks(chunks), at, analytics.ReplayLimits{}); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return syncDir(p.dir)
}

// legacyChunks reads the chunk files of one session directory.
func legacyChunks(productID int64, dir string) ([]analytics.ReplayChunk, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []analytics.ReplayChunk
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".chunk") {
			continue // a temporary file a crash left: never acknowledged
		}
		c, err := readLegacyChunk(productID, filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// readLegacyChunk reads one chunk file: its header line, then its data.
func readLegacyChunk(productID int64, name string) (analytics.ReplayChunk, error) {
	f, err := os.Open(name)
	if err != nil {
		return analytics.ReplayChunk{}, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 4<<10)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return analytics.ReplayChunk{}, fmt.Errorf("reading %s: %w", name, err)
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return analytics.ReplayChunk{}, fmt.Errorf("reading %s: %w", name, err)
	}
	if !analytics.ValidReplayID(h.Session) || !analytics.ValidReplayID(h.Window) || h.Index < 0 ||
		h.Bytes < 0 || h.Bytes > analytics.MaxReplayChunkBytes {
		return analytics.ReplayChunk{}, fmt.Errorf("reading %s: not a chunk's header", name)
	}
	c := h.chunk(productID)
	c.Data = make([]byte, h.Bytes)
	if _, err := io.ReadFull(r, c.Data); err != nil {
		return c, fmt.Errorf("reading %s: %w", name, err)
	}
	return c, nil
}
