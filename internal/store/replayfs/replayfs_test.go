package replayfs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.RunReplay(t, func(t *testing.T) analytics.ReplayStore {
		s, err := Open(filepath.Join(t.TempDir(), "replay"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestLayout checks the documented layout (docs/replay.md, "Storage"): one
// directory per product and session, one file per chunk holding a JSON
// line and the data as sent, and no temporary file left behind.
func TestLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte{0x1f, 0x8b, 0, 1, 2, '\n', 3}
	c := analytics.ReplayChunk{ProductID: 7, SessionID: "sess", WindowID: "win", Index: 3, DistinctID: "u",
		FirstTS: time.Unix(1, 0), LastTS: time.Unix(2, 0), Encoding: analytics.ReplayGzipJSON, Data: data, ReceivedAt: time.Unix(3, 0)}
	if err := s.AppendReplayChunks(context.Background(), []analytics.ReplayChunk{c}); err != nil {
		t.Fatal(err)
	}
	files, _ := os.ReadDir(filepath.Join(dir, "7", "sess"))
	if len(files) != 1 || files[0].Name() != "win.0000000003.chunk" {
		t.Fatalf("files %v", files)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "7", "sess", files[0].Name()))
	i := bytes.IndexByte(raw, '\n')
	if i < 0 || !bytes.Equal(raw[i+1:], data) {
		t.Errorf("file %q does not hold the header line then the data", raw)
	}
	// Ids that are not file-name safe never reach the file system.
	bad := c
	bad.SessionID = "../x"
	if err := s.AppendReplayChunks(context.Background(), []analytics.ReplayChunk{bad}); err == nil {
		t.Error("a session id with a path was stored")
	}
	if _, err := s.ReplayChunks(context.Background(), 7, "../7"); err == nil {
		t.Error("a session id with a path was read")
	}
}
