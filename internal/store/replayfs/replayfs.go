// Package replayfs keeps session replay chunks as files in the data
// directory: the embedded server's analytics.ReplayStore (docs/replay.md,
// "Storage").
//
// The layout is one directory per product and session, one file per chunk:
//
//	DATA/replay/<product>/<session>/<window>.<index>.chunk
//
// A chunk file is one line of JSON metadata (the chunk without its data),
// a newline, then the data as the SDK sent it (gzipped JSON, or JSON). It
// is written to a temporary file, fsync'd, renamed into place, and the
// directories above it fsync'd, so that a chunk is either whole or absent
// after a crash, and durable once AppendReplayChunks returned. Session and
// window ids are checked by analytics.ValidReplayID before they become
// file names. The chunk files are not read back into memory to list
// sessions: only their first line is.
//
// Why files and not DuckDB: chunks are large, written once, read whole and
// deleted by session; in DuckDB they would go through its write-ahead log
// and checkpoints, which ingest's events already keep busy, and a deleted
// session's space would not be given back to the file system.
package replayfs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"strata/internal/analytics"
)

// Store is a directory of replay chunks. It is safe for concurrent use.
type Store struct {
	dir string
	// mu serializes deletions against appends to the same tree, so that a
	// session being deleted does not keep a chunk appended meanwhile in a
	// directory that is then removed half-way.
	mu sync.RWMutex
}

var _ analytics.ReplayStore = (*Store)(nil)

// Open returns the store rooted at dir (DATA/replay), creating it.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the replay directory: %w", err)
	}
	return &Store{dir: dir}, nil
}

// header is a chunk file's first line.
type header struct {
	Session    string    `json:"session"`
	Window     string    `json:"window"`
	Index      int       `json:"index"`
	DistinctID string    `json:"distinct_id"`
	First      time.Time `json:"first"`
	Last       time.Time `json:"last"`
	Encoding   string    `json:"encoding"`
	Pages      int       `json:"pages"`
	Clicks     int       `json:"clicks"`
	Errors     int       `json:"errors"`
	Bytes      int       `json:"bytes"`
	Received   time.Time `json:"received"`
}

func (s *Store) productDir(productID int64) string {
	return filepath.Join(s.dir, strconv.FormatInt(productID, 10))
}

func (s *Store) sessionDir(productID int64, sessionID string) (string, error) {
	if !analytics.ValidReplayID(sessionID) {
		return "", analytics.ErrNotFound
	}
	return filepath.Join(s.productDir(productID), sessionID), nil
}

// AppendReplayChunks writes each chunk not yet stored, durably.
func (s *Store) AppendReplayChunks(ctx context.Context, chunks []analytics.ReplayChunk) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	dirs := map[string]bool{}
	for _, c := range chunks {
		if !analytics.ValidReplayID(c.SessionID) || !analytics.ValidReplayID(c.WindowID) || c.Index < 0 {
			return fmt.Errorf("replay chunk %q/%q/%d: invalid id", c.SessionID, c.WindowID, c.Index)
		}
		dir, _ := s.sessionDir(c.ProductID, c.SessionID)
		if err := mkdirSynced(dir); err != nil {
			return err
		}
		name := filepath.Join(dir, fmt.Sprintf("%s.%010d.chunk", c.WindowID, c.Index))
		if _, err := os.Stat(name); err == nil {
			continue // a retry: the first copy stays
		}
		if err := writeChunk(dir, name, c); err != nil {
			return err
		}
		dirs[dir] = true
	}
	for dir := range dirs {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// writeChunk writes c to a temporary file in dir, syncs it and renames it
// to name.
func writeChunk(dir, name string, c analytics.ReplayChunk) error {
	h, err := json.Marshal(header{Session: c.SessionID, Window: c.WindowID, Index: c.Index, DistinctID: c.DistinctID,
		First: c.FirstTS.UTC(), Last: c.LastTS.UTC(), Encoding: c.Encoding, Pages: c.Pages, Clicks: c.Clicks, Errors: c.Errors,
		Bytes: len(c.Data), Received: c.ReceivedAt.UTC()})
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("writing a replay chunk: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 64<<10)
	w.Write(h)
	w.WriteByte('\n')
	w.Write(c.Data)
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing a replay chunk: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing a replay chunk: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing a replay chunk: %w", err)
	}
	if err := os.Rename(tmp, name); err != nil {
		return fmt.Errorf("renaming a replay chunk: %w", err)
	}
	ok = true
	return nil
}

// mkdirSynced creates dir and its product directory if missing, syncing
// each parent that got a new entry.
func mkdirSynced(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	product := filepath.Dir(dir)
	for _, d := range []string{product, dir} {
		if _, err := os.Stat(d); err == nil {
			continue
		}
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating a replay directory: %w", err)
		}
		if err := syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// readChunk reads a chunk file: its header, and its data when withData.
func readChunk(productID int64, name string, withData bool) (analytics.ReplayChunk, error) {
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
	c := analytics.ReplayChunk{ProductID: productID, SessionID: h.Session, WindowID: h.Window, Index: h.Index, DistinctID: h.DistinctID,
		FirstTS: h.First, LastTS: h.Last, Encoding: h.Encoding, Pages: h.Pages, Clicks: h.Clicks, Errors: h.Errors, ReceivedAt: h.Received}
	c.Size = h.Bytes
	if withData {
		c.Data = make([]byte, h.Bytes)
		if _, err := io.ReadFull(r, c.Data); err != nil {
			return c, fmt.Errorf("reading %s: %w", name, err)
		}
	}
	return c, nil
}

// sessionChunks reads the chunk files of one session directory, with or
// without their data.
func sessionChunks(productID int64, dir string, withData bool) ([]analytics.ReplayChunk, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []analytics.ReplayChunk
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".chunk") {
			continue
		}
		c, err := readChunk(productID, filepath.Join(dir, e.Name()), withData)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ListReplaySessions reads the headers of the product's chunks and
// summarizes them.
func (s *Store) ListReplaySessions(ctx context.Context, productID int64, f analytics.ReplayFilter) ([]analytics.ReplaySession, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	dirs, err := os.ReadDir(s.productDir(productID))
	if errors.Is(err, fs.ErrNotExist) {
		return []analytics.ReplaySession{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing replay sessions: %w", err)
	}
	var all []analytics.ReplayChunk
	for _, d := range dirs {
		if !d.IsDir() || !analytics.ValidReplayID(d.Name()) {
			continue
		}
		chunks, err := sessionChunks(productID, filepath.Join(s.productDir(productID), d.Name()), false)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("listing replay sessions: %w", err)
		}
		all = append(all, chunks...)
	}
	return analytics.FilterReplay(analytics.SummarizeReplay(all), f), nil
}

// ReplayChunks reads a session's chunks with their data.
func (s *Store) ReplayChunks(ctx context.Context, productID int64, sessionID string) ([]analytics.ReplayChunk, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	dir, err := s.sessionDir(productID, sessionID)
	if err != nil {
		return nil, err
	}
	chunks, err := sessionChunks(productID, dir, true)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(chunks) == 0) {
		return nil, analytics.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading replay session %s: %w", sessionID, err)
	}
	return analytics.OrderReplayChunks(chunks), nil
}

// DeleteReplaySession removes a session's directory.
func (s *Store) DeleteReplaySession(ctx context.Context, productID int64, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, err := s.sessionDir(productID, sessionID)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return analytics.ErrNotFound
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("deleting replay session %s: %w", sessionID, err)
	}
	return syncDir(s.productDir(productID))
}

// ReplayProducts lists the product directories.
func (s *Store) ReplayProducts(ctx context.Context) ([]int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("listing replay products: %w", err)
	}
	var out []int64
	for _, e := range entries {
		if id, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && e.IsDir() {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}
