package replayfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"strata/internal/analytics"
	"strata/internal/store/storetest"
	"strata/internal/testdisk"
)

func open(t *testing.T, dir string, segmentBytes int64) *Store {
	t.Helper()
	s, err := Open(dir, Options{SegmentBytes: segmentBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the store suite with the default segment size, and
// with segments of 4 KiB, so that sessions span many of them.
func TestConformance(t *testing.T) {
	for _, size := range []int64{0, 4 << 10} {
		t.Run(fmt.Sprintf("segment=%d", size), func(t *testing.T) {
			storetest.RunReplay(t, func(t *testing.T) analytics.ReplayStore {
				return open(t, filepath.Join(t.TempDir(), "replay"), size)
			})
		})
	}
}

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// chunk is chunk index of window w of session sid, whose data (n bytes)
// names it, so that a file can be searched for it.
func chunk(product int64, sid, w string, index, n int) analytics.ReplayChunk {
	mark := []byte(fmt.Sprintf("<%s/%s/%d>", sid, w, index))
	data := bytes.Repeat(mark, n/len(mark)+1)[:n]
	return analytics.ReplayChunk{ProductID: product, SessionID: sid, WindowID: w, Index: index, DistinctID: "u-" + sid,
		FirstTS: t0.Add(time.Duration(index) * time.Second), LastTS: t0.Add(time.Duration(index+1) * time.Second),
		Encoding: analytics.ReplayGzipJSON, Data: data, Pages: 1, Clicks: index % 3, ReceivedAt: t0.Add(time.Hour)}
}

func mustAppend(t *testing.T, s *Store, chunks ...analytics.ReplayChunk) {
	t.Helper()
	if full, err := s.AppendReplayChunks(context.Background(), chunks, analytics.ReplayLimits{}); err != nil || full.Count() > 0 {
		t.Fatalf("appending: refused %v, %v", full, err)
	}
}

// snapshot is everything a store answers about a product: each session's
// summary and its chunks, data and all.
func snapshot(t *testing.T, s *Store, product int64) string {
	t.Helper()
	ctx := context.Background()
	list, err := s.ListReplaySessions(ctx, product, analytics.ReplayFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, x := range list {
		fmt.Fprintf(&b, "%+v\n", x)
		var cur analytics.ReplayCursor
		for {
			page, more, err := s.ReadReplayChunks(ctx, product, x.SessionID, cur, 64<<10)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page {
				fmt.Fprintf(&b, "  %s.%d %s %d bytes %.12x\n", c.WindowID, c.Index, c.DistinctID, len(c.Data), sha256.Sum256(c.Data))
			}
			if !more {
				break
			}
			cur = analytics.ReplayCursor{WindowID: page[len(page)-1].WindowID, Index: page[len(page)-1].Index}
		}
	}
	return b.String()
}

// files returns the product directory's files and their total size.
func files(t *testing.T, dir string) ([]string, int64) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var total int64
	for _, e := range entries {
		info, _ := e.Info()
		names = append(names, e.Name())
		total += info.Size()
	}
	return names, total
}

// TestLayout checks the documented layout (docs/replay.md, "Storage"): a
// thousand sessions make one product directory with one segment file, no
// directory or file of their own; a record is its magic, lengths, JSON
// header, the data as sent and a CRC-32C; ids that are not file-name safe
// are refused.
func TestLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	s := open(t, dir, 0)
	var batch []analytics.ReplayChunk
	for i := 0; i < 1000; i++ {
		batch = append(batch, chunk(7, fmt.Sprintf("sess-%d", i), "win", 0, 100))
	}
	mustAppend(t, s, batch...)
	top, _ := files(t, dir)
	names, _ := files(t, filepath.Join(dir, "7"))
	if fmt.Sprint(top) != "[7]" || fmt.Sprint(names) != "[00000001.seg]" {
		t.Fatalf("the replay directory holds %v, product 7's %v; want one segment", top, names)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "7", "00000001.seg"))
	hl, dl := binary.LittleEndian.Uint32(raw[4:8]), binary.LittleEndian.Uint32(raw[8:12])
	var h header
	if string(raw[:4]) != "SRC1" || json.Unmarshal(raw[12:12+hl], &h) != nil || h.Session != "sess-0" || h.Bytes != 100 ||
		!bytes.Equal(raw[12+hl:12+hl+dl], batch[0].Data) {
		t.Errorf("the first record: %q", raw[:min(len(raw), 400)])
	}
	for _, c := range []analytics.ReplayChunk{{ProductID: 7, SessionID: "../x", WindowID: "w"}, {ProductID: 7, SessionID: "x", WindowID: "a/b"}} {
		if _, err := s.AppendReplayChunks(context.Background(), []analytics.ReplayChunk{c}, analytics.ReplayLimits{}); err == nil {
			t.Errorf("%q/%q was stored", c.SessionID, c.WindowID)
		}
	}
	if page, _, err := s.ReadReplayChunks(context.Background(), 7, "../7", analytics.ReplayCursor{}, 1<<20); err != nil || len(page) != 0 {
		t.Errorf("a session id with a path read %d chunks, %v", len(page), err)
	}
}

// TestReopen builds a product across many small segments (appends, a
// retry, deletes, a session recorded again after its delete) and checks
// that the index Open rebuilds answers exactly as the one that was built
// live, before and after compaction.
func TestReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	s := open(t, dir, 8<<10)
	ctx := context.Background()
	for i := 0; i < 30; i++ {
		sid := fmt.Sprintf("s%02d", i)
		for j := 0; j < 4; j++ {
			mustAppend(t, s, chunk(1, sid, "w"+fmt.Sprint(j%2), j, 500+37*i))
		}
	}
	mustAppend(t, s, chunk(1, "s03", "w0", 0, 9)) // a retry: the first copy stays
	for i := 0; i < 30; i += 3 {
		if err := s.DeleteReplaySession(ctx, 1, fmt.Sprintf("s%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	mustAppend(t, s, chunk(1, "s00", "w9", 5, 300)) // recorded again after its delete
	want := snapshot(t, s, 1)
	s.Close()
	s = open(t, dir, 8<<10)
	if got := snapshot(t, s, 1); got != want {
		t.Fatalf("reopened:\n%s\nwant:\n%s", got, want)
	}
	if err := s.CompactReplays(ctx); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, s, 1); got != want {
		t.Fatalf("compacted:\n%s\nwant:\n%s", got, want)
	}
	s.Close()
	s = open(t, dir, 8<<10)
	if got := snapshot(t, s, 1); got != want {
		t.Fatalf("compacted and reopened:\n%s\nwant:\n%s", got, want)
	}
}

// TestTornTail leaves what a crash in the middle of an append can leave at
// the end of the last segment (half a record; a whole one whose CRC
// fails): Open cuts it off, keeps every acknowledged chunk, and appends
// after them.
func TestTornTail(t *testing.T) {
	whole := appendRecord(nil, magicChunk, []byte(`{"session":"torn","window":"w","index":0}`), []byte("data"))
	bad := bytes.Clone(whole)
	bad[len(bad)-6] ^= 1
	for name, tail := range map[string][]byte{"half a record": whole[:len(whole)/2], "a bad CRC": bad, "a head alone": whole[:7]} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "replay")
			s := open(t, dir, 0)
			mustAppend(t, s, chunk(1, "kept", "w", 0, 1000), chunk(1, "kept", "w", 1, 1000))
			want := snapshot(t, s, 1)
			s.Close()
			seg := filepath.Join(dir, "1", "00000001.seg")
			before, _ := os.Stat(seg)
			f, _ := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
			f.Write(tail)
			f.Close()

			s = open(t, dir, 0)
			if got := snapshot(t, s, 1); got != want {
				t.Fatalf("after the torn tail:\n%s\nwant:\n%s", got, want)
			}
			if after, _ := os.Stat(seg); after.Size() != before.Size() {
				t.Errorf("the segment is %d bytes, want %d: the torn tail was not cut off", after.Size(), before.Size())
			}
			mustAppend(t, s, chunk(1, "kept", "w", 2, 1000))
			want = snapshot(t, s, 1)
			s.Close()
			s = open(t, dir, 0)
			if got := snapshot(t, s, 1); got != want || !strings.Contains(got, "w.2") {
				t.Errorf("appended after the cut:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestCompaction deletes most sessions of a product spread over many
// segments and compacts: the files shrink to about the live records, none
// of them holds a byte of a deleted session, small segments are merged,
// and what is left reads as before, also after a reopen; a second round
// has nothing to do.
func TestCompaction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	s := open(t, dir, 64<<10)
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		for j := 0; j < 5; j++ {
			mustAppend(t, s, chunk(1, fmt.Sprintf("s%02d", i), "w", j, 2000))
		}
	}
	mustAppend(t, s, chunk(2, "other", "w", 0, 2000))
	for i := 0; i < 40; i++ {
		if i%4 != 0 {
			if err := s.DeleteReplaySession(ctx, 1, fmt.Sprintf("s%02d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, wantOther := snapshot(t, s, 1), snapshot(t, s, 2)
	namesBefore, before := files(t, filepath.Join(dir, "1"))
	if err := s.CompactReplays(ctx); err != nil {
		t.Fatal(err)
	}
	names, after := files(t, filepath.Join(dir, "1"))
	live := int64(10 * 5 * (2000 + 300)) // ten sessions of five chunks, with their headers
	if after > live*11/10 || after >= before/3 {
		t.Errorf("compacted: %d bytes in %d files (before %d in %d); the live records are about %d", after, len(names), before, len(namesBefore), live)
	}
	if len(names) >= len(namesBefore) {
		t.Errorf("compacted into %d files from %d: small segments not merged", len(names), len(namesBefore))
	}
	for _, n := range names {
		raw, _ := os.ReadFile(filepath.Join(dir, "1", n))
		for i := 0; i < 40; i++ {
			if i%4 != 0 && bytes.Contains(raw, []byte(fmt.Sprintf("<s%02d/", i))) {
				t.Errorf("%s still holds deleted session s%02d", n, i)
			}
		}
		if bytes.Contains(raw, []byte("SRT1")) {
			t.Errorf("%s still holds a tombstone, with nothing left to delete", n)
		}
	}
	if got := snapshot(t, s, 1); got != want {
		t.Fatalf("compacted:\n%s\nwant:\n%s", got, want)
	}
	if got := snapshot(t, s, 2); got != wantOther {
		t.Errorf("compacting product 1 changed product 2:\n%s", got)
	}
	if err := s.CompactReplays(ctx); err != nil {
		t.Fatal(err)
	}
	if again, size := files(t, filepath.Join(dir, "1")); fmt.Sprint(again) != fmt.Sprint(names) || size != after {
		t.Errorf("a second round rewrote %v (%d bytes), was %v (%d bytes)", again, size, names, after)
	}
	s.Close()
	s = open(t, dir, 64<<10)
	if got := snapshot(t, s, 1); got != want {
		t.Fatalf("compacted and reopened:\n%s\nwant:\n%s", got, want)
	}
	// Every session deleted: the product's files go.
	for i := 0; i < 40; i += 4 {
		s.DeleteReplaySession(ctx, 1, fmt.Sprintf("s%02d", i))
	}
	if err := s.CompactReplays(ctx); err != nil {
		t.Fatal(err)
	}
	if names, size := files(t, filepath.Join(dir, "1")); size != 0 {
		t.Errorf("every session deleted and compacted: %v, %d bytes left", names, size)
	}
	if got, _ := s.ReplayProducts(ctx); fmt.Sprint(got) != "[2]" {
		t.Errorf("products %v, want [2]", got)
	}
}

// TestTombstoneOutlivesItsChunks compacts only the segment that holds a
// session's tombstone, not the older one that holds the session's deleted
// chunks (as a round that failed half-way would): the tombstone is kept,
// so that the chunks stay deleted after a reopen; the next full round
// drops both.
func TestTombstoneOutlivesItsChunks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	s := open(t, dir, 16<<10)
	ctx := context.Background()
	mustAppend(t, s, chunk(1, "gone", "w", 0, 6000), chunk(1, "kept", "w", 0, 6000), chunk(1, "kept", "w", 1, 6000)) // segment 1
	mustAppend(t, s, chunk(1, "kept", "w", 2, 6000))                                                                 // segment 2
	if err := s.DeleteReplaySession(ctx, 1, "gone"); err != nil {                                                    // in segment 2
		t.Fatal(err)
	}
	mustAppend(t, s, chunk(1, "pad", "w", 0, 11000)) // segment 2 is sealed
	p, _ := s.lookup(1, false)
	p.wmu.Lock()
	p.segs[2].dead++ // so that it is worth rewriting alone
	err := p.rewrite([]*segment{p.segs[2]}, p.live())
	p.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, s, 1)
	s.Close()
	s = open(t, dir, 16<<10)
	if got := snapshot(t, s, 1); got != want || strings.Contains(got, "gone") {
		t.Fatalf("after compacting the tombstone's segment alone and reopening:\n%s\nwant:\n%s", got, want)
	}
	if err := s.CompactReplays(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range must(files(t, filepath.Join(dir, "1"))) {
		raw, _ := os.ReadFile(filepath.Join(dir, "1", n))
		if bytes.Contains(raw, []byte("<gone/")) || bytes.Contains(raw, []byte("SRT1")) {
			t.Errorf("%s still holds the deleted session or its tombstone after a full round", n)
		}
	}
	s.Close()
	s = open(t, dir, 16<<10)
	if got := snapshot(t, s, 1); got != want {
		t.Fatalf("after a full round:\n%s\nwant:\n%s", got, want)
	}
}

func must[T any](v T, _ ...any) T { return v }

// TestInterruptedCompaction puts the directory in the states a crash can
// leave a compaction of several segments in, and checks that Open reads
// each as one consistent store with the deleted session still deleted:
// before the rename (the old segments and the compacted file beside them),
// and after it (the compacted file, and old segments not yet removed).
func TestInterruptedCompaction(t *testing.T) {
	build := func(t *testing.T) (string, string, map[string][]byte) {
		dir := filepath.Join(t.TempDir(), "replay")
		s := open(t, dir, 4<<10)
		ctx := context.Background()
		for i := 0; i < 12; i++ {
			mustAppend(t, s, chunk(1, fmt.Sprintf("s%d", i), "w", 0, 1500), chunk(1, fmt.Sprintf("s%d", i), "w", 1, 1500))
		}
		for _, sid := range []string{"s1", "s2", "s4", "s7", "s8", "s10"} {
			if err := s.DeleteReplaySession(ctx, 1, sid); err != nil {
				t.Fatal(err)
			}
		}
		want := snapshot(t, s, 1)
		old := map[string][]byte{}
		names, _ := files(t, filepath.Join(dir, "1"))
		for _, n := range names {
			old[n], _ = os.ReadFile(filepath.Join(dir, "1", n))
		}
		if err := s.CompactReplays(ctx); err != nil {
			t.Fatal(err)
		}
		s.Close()
		return dir, want, old
	}
	t.Run("before the rename", func(t *testing.T) {
		dir, want, old := build(t)
		pdir := filepath.Join(dir, "1")
		names, _ := files(t, pdir)
		sort.Strings(names)
		compacted, _ := os.ReadFile(filepath.Join(pdir, names[0]))
		for _, n := range names {
			os.Remove(filepath.Join(pdir, n))
		}
		var seqs []uint32
		for n, b := range old {
			os.WriteFile(filepath.Join(pdir, n), b, 0o600)
			var seq uint32
			fmt.Sscanf(n, "%08d.seg", &seq)
			seqs = append(seqs, seq)
		}
		os.WriteFile(filepath.Join(pdir, names[0]+".tmp"), compacted, 0o600)
		m, _ := json.Marshal(manifest{Into: must(seqOf(names[0])), Remove: seqs})
		os.WriteFile(filepath.Join(pdir, manifestName), m, 0o600)
		s := open(t, dir, 4<<10)
		if got := snapshot(t, s, 1); got != want {
			t.Fatalf("got:\n%s\nwant:\n%s", got, want)
		}
		if left, _ := files(t, pdir); len(left) != len(old) {
			t.Errorf("files %v: the compacted copy or the manifest was left, or an old segment removed", left)
		}
	})
	t.Run("after the rename", func(t *testing.T) {
		dir, want, old := build(t)
		pdir := filepath.Join(dir, "1")
		names, _ := files(t, pdir)
		// The first compacted file that took the place of several: its
		// old segments (those missing before it) come back.
		var into uint32
		var remove []uint32
		prev := uint32(0)
		for _, n := range names {
			seq := must(seqOf(n))
			for gone := prev + 1; gone < seq; gone++ {
				if b, ok := old[segmentName(gone)]; ok {
					remove = append(remove, gone)
					os.WriteFile(filepath.Join(pdir, segmentName(gone)), b, 0o600)
				}
			}
			if into, prev = seq, seq; len(remove) > 0 {
				break
			}
		}
		if len(remove) == 0 {
			t.Fatalf("the compaction merged nothing: %v from %d segments", names, len(old))
		}
		m, _ := json.Marshal(manifest{Into: into, Remove: remove})
		os.WriteFile(filepath.Join(pdir, manifestName), m, 0o600)
		s := open(t, dir, 4<<10)
		if got := snapshot(t, s, 1); got != want {
			t.Fatalf("got:\n%s\nwant:\n%s", got, want)
		}
		if left, _ := files(t, pdir); fmt.Sprint(left) != fmt.Sprint(names) {
			t.Errorf("files %v, want %v", left, names)
		}
	})
}

func seqOf(name string) (uint32, error) {
	var seq uint32
	_, err := fmt.Sscanf(name, "%08d.seg", &seq)
	return seq, err
}

// TestFullDisk appends to a 2 MiB tmpfs until a write fails: the failure
// is an error (no chunk of the failed call is acknowledged), the segment
// still ends with the last acknowledged record, a reopen reads every
// acknowledged chunk, and once space is freed appends go on.
func TestFullDisk(t *testing.T) {
	mnt := testdisk.Mount(t, "size=2m,mode=0700")
	dir := filepath.Join(mnt, "replay")
	s := open(t, dir, 0)
	var acked []analytics.ReplayChunk
	var failed error
	for i := 0; i < 100 && failed == nil; i++ {
		c := chunk(1, fmt.Sprintf("s%d", i%3), "w", i, 60_000)
		if _, err := s.AppendReplayChunks(context.Background(), []analytics.ReplayChunk{c}, analytics.ReplayLimits{}); err != nil {
			failed = err
			break
		}
		acked = append(acked, c)
	}
	if !errors.Is(failed, syscall.ENOSPC) {
		t.Fatalf("after %d chunks: %v; want a full disk", len(acked), failed)
	}
	seg := filepath.Join(dir, "1", "00000001.seg")
	info, _ := os.Stat(seg)
	p, _ := s.lookup(1, false)
	if p.active == nil || info.Size() != p.active.size || p.broken != nil {
		t.Errorf("the segment is %d bytes after the failed write; its last record ends at %v (broken: %v)", info.Size(), p.active, p.broken)
	}
	want := snapshot(t, s, 1)
	s.Close()
	s = open(t, dir, 0)
	if got := snapshot(t, s, 1); got != want || strings.Count(got, "\n  ") != len(acked) {
		t.Fatalf("reopened: %d chunks, want the %d acknowledged", strings.Count(got, "\n  "), len(acked))
	}
	testdisk.Resize(t, mnt, "8m")
	mustAppend(t, s, chunk(1, "after", "w", 0, 60_000))
}

// TestMigrate opens a data directory of the layout before segments (a
// directory per session, a file per chunk, a temporary file a crash left):
// every session reads as it was written, byte for byte, from segments, and
// the directories are gone. A session moved once and found again (a crash
// before its directory was removed) is not stored twice.
func TestMigrate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	var written []analytics.ReplayChunk
	for i := 0; i < 20; i++ {
		for j := 0; j < 3; j++ {
			written = append(written, chunk(4, fmt.Sprintf("old-%d", i), fmt.Sprintf("w%d", j%2), j, 700+i))
		}
	}
	for _, c := range written {
		writeLegacy(t, dir, c)
	}
	os.WriteFile(filepath.Join(dir, "4", "old-0", ".tmp-123"), []byte("torn"), 0o600)
	keep := filepath.Join(t.TempDir(), "old-3")
	os.CopyFS(keep, os.DirFS(filepath.Join(dir, "4", "old-3")))

	s := open(t, dir, 0)
	ctx := context.Background()
	list, err := s.ListReplaySessions(ctx, 4, analytics.ReplayFilter{})
	if err != nil || len(list) != 20 {
		t.Fatalf("%d sessions, %v; want 20", len(list), err)
	}
	for _, c := range written {
		page, _, err := s.ReadReplayChunks(ctx, 4, c.SessionID, analytics.ReplayCursor{WindowID: c.WindowID, Index: c.Index - 1}, 1)
		if err != nil || len(page) != 1 || page[0].Index != c.Index || !bytes.Equal(page[0].Data, c.Data) ||
			!page[0].FirstTS.Equal(c.FirstTS) || page[0].DistinctID != c.DistinctID {
			t.Fatalf("%s %s.%d: %+v, %v", c.SessionID, c.WindowID, c.Index, page, err)
		}
	}
	names, _ := files(t, filepath.Join(dir, "4"))
	if fmt.Sprint(names) != "[00000001.seg]" {
		t.Errorf("after the move the product holds %v", names)
	}
	want := snapshot(t, s, 4)
	s.Close()
	os.CopyFS(filepath.Join(dir, "4", "old-3"), os.DirFS(keep))
	s = open(t, dir, 0)
	if got := snapshot(t, s, 4); got != want {
		t.Errorf("a session found again after its move:\n%s\nwant:\n%s", got, want)
	}
}

// writeLegacy writes c as the layout before segments did.
func writeLegacy(t *testing.T, dir string, c analytics.ReplayChunk) {
	t.Helper()
	sdir := filepath.Join(dir, fmt.Sprint(c.ProductID), c.SessionID)
	if err := os.MkdirAll(sdir, 0o700); err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(headerOf(c))
	body := append(append(h, '\n'), c.Data...)
	if err := os.WriteFile(filepath.Join(sdir, fmt.Sprintf("%s.%010d.chunk", c.WindowID, c.Index)), body, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrent appends, reads, lists, deletes and compacts at once (run
// it with -race): every chunk a reader gets is whole and of its session.
func TestConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	s := open(t, dir, 32<<10)
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 60; i++ {
				sid := fmt.Sprintf("w%d-s%d", w, i%6)
				mustAppend(t, s, chunk(1, sid, "w", i, 1500))
				if i%10 == 9 {
					s.DeleteReplaySession(ctx, 1, sid)
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				list, _ := s.ListReplaySessions(ctx, 1, analytics.ReplayFilter{})
				for _, x := range list {
					page, _, err := s.ReadReplayChunks(ctx, 1, x.SessionID, analytics.ReplayCursor{}, 8<<10)
					if err != nil {
						t.Errorf("reading %s: %v", x.SessionID, err)
						return
					}
					for _, c := range page {
						if c.SessionID != x.SessionID || !bytes.Contains(c.Data, []byte("<"+x.SessionID+"/")) {
							t.Errorf("a chunk of %s read as %s: %.40q", c.SessionID, x.SessionID, c.Data)
						}
					}
				}
				if err := s.CompactReplays(ctx); err != nil {
					t.Errorf("compacting: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	want := snapshot(t, s, 1)
	s.Close()
	if got := snapshot(t, open(t, dir, 32<<10), 1); got != want {
		t.Errorf("reopened after the concurrent run:\n%s\nwant:\n%s", got, want)
	}
}

// TestSessionsCap runs the cap on sessions across what the index is
// rebuilt from: a product at its cap refuses a new session, after a
// restart too (the index counts the sessions its segments hold); a
// deleted session, whose records compaction has not dropped yet, no
// longer counts, before a restart or after it; chunks of the sessions
// kept are taken whatever the cap.
func TestSessionsCap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	s := open(t, dir, 4<<10)
	limits := analytics.ReplayLimits{Sessions: 3}
	try := func(s *Store, c analytics.ReplayChunk) string {
		t.Helper()
		r, err := s.AppendReplayChunks(context.Background(), []analytics.ReplayChunk{c}, limits)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%v %v", r.SessionFull, r.ProductFull)
	}
	for i := 0; i < 3; i++ {
		if got := try(s, chunk(1, fmt.Sprintf("s%d", i), "w", 0, 3000)); got != "[] []" {
			t.Fatalf("session %d under the cap: refused %s", i, got)
		}
	}
	if got := try(s, chunk(1, "s3", "w", 0, 10)); got != "[] [0]" {
		t.Errorf("a fourth session: refused %s", got)
	}
	s.Close()
	s = open(t, dir, 4<<10)
	if got := try(s, chunk(1, "s3", "w", 0, 10)); got != "[] [0]" {
		t.Errorf("a fourth session after a restart: refused %s", got)
	}
	if got := try(s, chunk(1, "s0", "w", 1, 3000)); got != "[] []" {
		t.Errorf("a kept session's chunk after a restart: refused %s", got)
	}
	if err := s.DeleteReplaySession(context.Background(), 1, "s1"); err != nil {
		t.Fatal(err)
	}
	if got := try(s, chunk(1, "s3", "w", 0, 10)); got != "[] []" {
		t.Errorf("a session after a delete: refused %s", got)
	}
	if got := try(s, chunk(1, "s4", "w", 0, 10)); got != "[] [0]" {
		t.Errorf("a session past the cap again: refused %s", got)
	}
	// Restarted before compaction: s1's records and tombstone are still in
	// the segments, and s1 is not counted.
	s.Close()
	s = open(t, dir, 4<<10)
	if got := try(s, chunk(1, "s4", "w", 0, 10)); got != "[] [0]" {
		t.Errorf("a session past the cap after a restart: refused %s", got)
	}
	if err := s.DeleteReplaySession(context.Background(), 1, "s3"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, dir, 4<<10)
	if got := try(s, chunk(1, "s4", "w", 0, 10)); got != "[] []" {
		t.Errorf("a session after a delete and a restart: refused %s", got)
	}
	if list, _ := s.ListReplaySessions(context.Background(), 1, analytics.ReplayFilter{}); len(list) != 3 {
		t.Errorf("%d sessions kept, want 3", len(list))
	}
}

// TestIndexKeepsNoRequest appends sessions whose chunks' strings are views
// of a large buffer, as ingest's are (its distinct_id is a view of its
// event's bytes, the chunk's base64 among them): the index keeps copies
// of the strings alone, so that the buffers are freed once the append
// returns, and a session's user is kept once however many of its chunks
// name it.
func TestIndexKeepsNoRequest(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "replay"), 0)
	const sessions, event = 200, 64 << 10
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := 0; i < sessions; i++ {
		var batch []analytics.ReplayChunk
		for j := 0; j < 3; j++ {
			// The request's event: its strings, then its data.
			body := fmt.Sprintf("user-%04d|session-%04d|window-%d|", i, i, j) + strings.Repeat("A", event)
			parts := strings.SplitN(body, "|", 4)
			c := chunk(1, parts[1], parts[2], 0, 10)
			c.DistinctID = parts[0]
			batch = append(batch, c)
		}
		mustAppend(t, s, batch...)
	}
	grown := int64(heap()) - int64(before)
	t.Logf("%d sessions of 3 chunks, each chunk's strings in a %d KB buffer: the heap grew by %d KB", sessions, event>>10, grown>>10)
	if grown > 2<<20 {
		t.Errorf("the index of %d sessions takes %d KB: it keeps the chunks' buffers", sessions, grown>>10)
	}
	p, _ := s.lookup(1, false)
	p.mu.RLock()
	defer p.mu.RUnlock()
	for id, x := range p.sessions {
		if len(x.sum.DistinctIDs) != 1 || unsafe.StringData(x.sum.DistinctID) != unsafe.StringData(x.sum.DistinctIDs[0]) {
			t.Fatalf("session %s keeps its user %q more than once: %q", id, x.sum.DistinctID, x.sum.DistinctIDs)
		}
	}
}

// runWatch is a log handler that reports each run a compaction rewrote
// (the "compacted replay segments" line) on runs, without blocking.
type runWatch struct{ runs chan struct{} }

func (h runWatch) Enabled(context.Context, slog.Level) bool { return true }
func (h runWatch) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "compacted replay segments" {
		select {
		case h.runs <- struct{}{}:
		default:
		}
	}
	return nil
}
func (h runWatch) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h runWatch) WithGroup(string) slog.Handler      { return h }

// TestAppendDuringCompaction starts an append once a compaction round of
// many runs has rewritten its first: the append returns while the round
// is still rewriting the next runs (docs/replay.md, "Storage": an append
// waits at most a run's copying), not once the round is over; and what the
// product holds afterwards reads as it should.
func TestAppendDuringCompaction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	watch := runWatch{runs: make(chan struct{}, 1000)}
	s, err := Open(dir, Options{SegmentBytes: 64 << 10, Log: slog.New(watch)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	// 150 segments of two sessions each, one of them deleted: every
	// segment is a run of its own (two segments' live records do not fit
	// in one).
	const sessions = 300
	for i := 0; i < sessions; i++ {
		mustAppend(t, s, chunk(1, fmt.Sprintf("s%03d", i), "w", 0, 33<<10))
	}
	for i := 0; i < sessions; i += 2 {
		if err := s.DeleteReplaySession(ctx, 1, fmt.Sprintf("s%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	want := snapshot(t, s, 1)
	roundDone := make(chan error, 1)
	start := time.Now()
	go func() { roundDone <- s.CompactReplays(ctx) }()
	<-watch.runs
	began := time.Now()
	mustAppend(t, s, chunk(1, "during", "w", 0, 100))
	appended := time.Since(began)
	var still bool
	select {
	case err := <-roundDone:
		if err != nil {
			t.Fatal(err)
		}
	default:
		still = true
		if err := <-roundDone; err != nil {
			t.Fatal(err)
		}
	}
	round := time.Since(start)
	t.Logf("an append during a round of %d runs (%v) took %v", sessions/2, round, appended)
	if !still {
		t.Errorf("the append took %v and returned after the round (%v) had ended: it waited for the whole round", appended, round)
	}
	page, _, err := s.ReadReplayChunks(ctx, 1, "during", analytics.ReplayCursor{}, 1<<20)
	if err != nil || len(page) != 1 || len(page[0].Data) != 100 {
		t.Fatalf("the chunk appended during the round: %d chunks, %v", len(page), err)
	}
	if err := s.DeleteReplaySession(ctx, 1, "during"); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, s, 1); got != want {
		t.Fatalf("compacted:\n%s\nwant:\n%s", got, want)
	}
	s.Close()
	if got := snapshot(t, open(t, dir, 64<<10), 1); got != want {
		t.Fatalf("compacted and reopened:\n%s\nwant:\n%s", got, want)
	}
}

// failReads makes every read of the segment file named name fail with
// EIO from offset from on, as a bad sector does, until the test ends.
func failReads(t *testing.T, name string, from int64) {
	t.Helper()
	old := segmentReader
	segmentReader = func(f *os.File) io.ReaderAt {
		if filepath.Base(f.Name()) != name {
			return f
		}
		return failingReader{f, from}
	}
	t.Cleanup(func() { segmentReader = old })
}

type failingReader struct {
	f    *os.File
	from int64
}

func (r failingReader) ReadAt(b []byte, off int64) (int, error) {
	if off+int64(len(b)) <= r.from {
		return r.f.ReadAt(b, off)
	}
	n := 0
	if off < r.from {
		n, _ = r.f.ReadAt(b[:r.from-off], off)
	}
	return n, &fs.PathError{Op: "read", Path: r.f.Name(), Err: syscall.EIO}
}

// mergedRun builds a product whose compaction merges several segments
// into one, and returns the first run it would rewrite, with the store
// and its directory.
func mergedRun(t *testing.T) (*Store, string, []*segment) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "replay")
	s := open(t, dir, 16<<10)
	for i := 0; i < 24; i++ {
		sid := fmt.Sprintf("s%02d", i)
		mustAppend(t, s, chunk(1, sid, "w", 0, 3000), chunk(1, sid, "w", 1, 3000))
	}
	for i := 0; i < 24; i++ {
		if i%3 != 0 {
			if err := s.DeleteReplaySession(context.Background(), 1, fmt.Sprintf("s%02d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	p, _ := s.lookup(1, false)
	p.wmu.Lock()
	run := p.firstRun(0, p.lastSeq-1)
	p.wmu.Unlock()
	if len(run) < 2 {
		t.Fatalf("the first run is %d segments; want a merge", len(run))
	}
	return s, dir, run
}

// lastLive returns the session and the offset of the last live chunk of
// segment seq.
func lastLive(t *testing.T, s *Store, seq uint32) (string, uint32) {
	t.Helper()
	p, _ := s.lookup(1, false)
	p.mu.RLock()
	defer p.mu.RUnlock()
	sid, off, found := "", uint32(0), false
	for id, x := range p.sessions {
		for _, w := range x.windows {
			for _, l := range w.chunks {
				if l.seg == seq && (!found || l.off > off) {
					sid, off, found = id, l.off, true
				}
			}
		}
	}
	if !found {
		t.Fatalf("segment %d holds no live chunk", seq)
	}
	return sid, off
}

// readAll reads a session whole, and turns a panic into an error.
func readAll(s *Store, sid string) (chunks int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panicked: %v", r)
		}
	}()
	var cur analytics.ReplayCursor
	for {
		page, more, err := s.ReadReplayChunks(context.Background(), 1, sid, cur, 1<<20)
		if err != nil {
			return chunks, err
		}
		chunks += len(page)
		if !more {
			return chunks, nil
		}
		cur = analytics.ReplayCursor{WindowID: page[len(page)-1].WindowID, Index: page[len(page)-1].Index}
	}
}

// TestCompactionLostRecord damages a segment of a run to be merged
// behind the index's back, as a failing disk could: shortened at a record
// boundary (its last live record gone), or that record's magic changed (the
// scan takes it for the end). The compaction fails rather than merge the
// run without the record, no segment is removed, the lost chunk reads as
// an error (not a panic), and every other session reads whole.
func TestCompactionLostRecord(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, file string, off uint32){
		"shortened": func(t *testing.T, file string, off uint32) {
			if err := os.Truncate(file, int64(off)); err != nil {
				t.Fatal(err)
			}
		},
		"overwritten": func(t *testing.T, file string, off uint32) {
			f, err := os.OpenFile(file, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte("XXXX"), int64(off)); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, dir, run := mergedRun(t)
			ctx := context.Background()
			victim, off := lastLive(t, s, run[0].seq)
			names, _ := files(t, filepath.Join(dir, "1"))
			damage(t, filepath.Join(dir, "1", segmentName(run[0].seq)), off)
			if err := s.CompactReplays(ctx); err == nil {
				t.Errorf("compacting a run whose segment lost a live record succeeded")
			}
			if after, _ := files(t, filepath.Join(dir, "1")); !slices.Contains(after, segmentName(run[0].seq)) {
				t.Errorf("the damaged segment was removed: %v, was %v", after, names)
			}
			if _, err := readAll(s, victim); err == nil || strings.Contains(err.Error(), "panicked") {
				t.Errorf("reading the session whose chunk is lost: %v; want an error", err)
			}
			list, _ := s.ListReplaySessions(ctx, 1, analytics.ReplayFilter{})
			if len(list) != 8 {
				t.Errorf("%d sessions listed, want 8", len(list))
			}
			for _, x := range list {
				if x.SessionID == victim {
					continue
				}
				if n, err := readAll(s, x.SessionID); err != nil || n != 2 {
					t.Errorf("session %s: %d chunks, %v; want 2", x.SessionID, n, err)
				}
			}
		})
	}
}

// TestCompactionReadError fails the reads of a segment of a run to be
// merged from its last live record on (EIO): the compaction fails and
// changes no file, and once the disk reads again every session reads as
// before, and the next round compacts.
func TestCompactionReadError(t *testing.T) {
	s, dir, run := mergedRun(t)
	ctx := context.Background()
	want := snapshot(t, s, 1)
	_, off := lastLive(t, s, run[0].seq)
	pdir := filepath.Join(dir, "1")
	names, size := files(t, pdir)
	t.Run("failing", func(t *testing.T) {
		failReads(t, segmentName(run[0].seq), int64(off))
		if err := s.CompactReplays(ctx); !errors.Is(err, syscall.EIO) {
			t.Errorf("compacting while a segment fails to read: %v; want EIO", err)
		}
	})
	if after, n := files(t, pdir); fmt.Sprint(after) != fmt.Sprint(names) || n != size {
		t.Errorf("a failed compaction left %v (%d bytes), was %v (%d bytes)", after, n, names, size)
	}
	if got := snapshot(t, s, 1); got != want {
		t.Fatalf("after the failed compaction:\n%s\nwant:\n%s", got, want)
	}
	if err := s.CompactReplays(ctx); err != nil {
		t.Fatal(err)
	}
	if _, n := files(t, pdir); n >= size {
		t.Errorf("compacted to %d bytes, was %d", n, size)
	}
	if got := snapshot(t, s, 1); got != want {
		t.Fatalf("compacted:\n%s\nwant:\n%s", got, want)
	}
}

// TestOpenReadError fails the reads of the last segment at Open from a
// record on (EIO), which the build before took for a torn tail and cut
// off: the segment is left whole, the chunks before it read, the product
// takes no writes (nor compaction) until a start reads it whole, and the
// next start with a sound disk has every chunk.
func TestOpenReadError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	s := open(t, dir, 0)
	for i := 0; i < 10; i++ {
		mustAppend(t, s, chunk(1, fmt.Sprintf("s%d", i), "w", 0, 2000))
	}
	want := snapshot(t, s, 1)
	p, _ := s.lookup(1, false)
	_, off := lastLive(t, s, p.lastSeq)
	s.Close()
	seg := filepath.Join(dir, "1", segmentName(1))
	before, _ := os.Stat(seg)
	t.Run("failing", func(t *testing.T) {
		failReads(t, segmentName(1), int64(off)+20)
		s := open(t, dir, 0)
		if after, _ := os.Stat(seg); after.Size() != before.Size() {
			t.Errorf("the segment is %d bytes after the failed read, was %d: acknowledged records were cut off", after.Size(), before.Size())
		}
		if n, err := readAll(s, "s0"); err != nil || n != 1 {
			t.Errorf("a chunk before the failing read: %d, %v", n, err)
		}
		if _, err := s.AppendReplayChunks(context.Background(), []analytics.ReplayChunk{chunk(1, "new", "w", 0, 10)}, analytics.ReplayLimits{}); err == nil {
			t.Errorf("an append to a product whose segment failed to read was taken")
		}
		if err := s.CompactReplays(context.Background()); err == nil {
			t.Errorf("a compaction of a product whose segment failed to read ran")
		}
		s.Close()
	})
	if after, _ := os.Stat(seg); after.Size() != before.Size() {
		t.Errorf("the segment is %d bytes, was %d", after.Size(), before.Size())
	}
	if got := snapshot(t, open(t, dir, 0), 1); got != want {
		t.Fatalf("reopened on a sound disk:\n%s\nwant:\n%s", got, want)
	}
}

// TestReadMissingSegment takes a segment out of the product's table while
// the index still points into it (the state a compaction that lost a live
// record left in the build before): a read of its chunks is an error, not a
// panic that would take the server down.
func TestReadMissingSegment(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "replay"), 0)
	mustAppend(t, s, chunk(1, "gone", "w", 0, 100))
	p, _ := s.lookup(1, false)
	p.mu.Lock()
	delete(p.segs, 1)
	p.mu.Unlock()
	if _, err := readAll(s, "gone"); err == nil || strings.Contains(err.Error(), "panicked") {
		t.Errorf("reading a chunk whose segment is gone: %v; want an error", err)
	}
}

// TestRejectedRecord puts records that frame and whose CRC is good but
// that the index does not take (a session id that is no file name, a
// negative index) in the middle of a segment, and a chunk larger than
// ingest takes (an ingest limit, not the file format's): Open skips the
// first two as dead and reads on, in the last segment (which the build
// before cut there, acknowledged records and all) and in a sealed one (whose
// rest it counted dead, for the next compaction to delete); compaction
// drops them, and every good record is kept across reopens and compaction.
func TestRejectedRecord(t *testing.T) {
	negative := headerOf(chunk(1, "negative", "w", 0, 10))
	negative.Index = -1
	h, _ := json.Marshal(negative)
	rejected := appendRecord(nil, magicChunk, []byte(`{"session":"../x","window":"w","index":0}`), []byte("bad id"))
	rejected = appendRecord(rejected, magicChunk, h, make([]byte, 10))
	raw, _ := appendChunk(nil, chunk(1, "before", "w", 0, 100))
	raw = append(raw, rejected...)
	raw, _ = appendChunk(raw, chunk(1, "big", "w", 0, analytics.MaxReplayChunkBytes+1))
	raw, _ = appendChunk(raw, chunk(1, "after", "w", 0, 100))
	next, _ := appendChunk(nil, chunk(1, "next", "w", 0, 100))
	for _, c := range []struct {
		name string
		segs [][]byte
		want string
	}{
		{"in the last segment", [][]byte{raw}, "[after before big]"},
		{"in a sealed segment", [][]byte{raw, next}, "[after before big next]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "replay")
			os.MkdirAll(filepath.Join(dir, "1"), 0o700)
			for i, b := range c.segs {
				os.WriteFile(filepath.Join(dir, "1", segmentName(uint32(i+1))), b, 0o600)
			}
			check := func(s *Store, when string) {
				t.Helper()
				if got := ids(t, s); got != c.want {
					t.Errorf("%s: sessions %s, want %s", when, got, c.want)
				}
				for sid, n := range map[string]int{"before": 100, "big": analytics.MaxReplayChunkBytes + 1, "after": 100} {
					page, _, err := s.ReadReplayChunks(context.Background(), 1, sid, analytics.ReplayCursor{}, 4<<20)
					if err != nil || len(page) != 1 || len(page[0].Data) != n {
						t.Errorf("%s: session %s: %d chunks, %v", when, sid, len(page), err)
					}
				}
			}
			s := open(t, dir, 4<<10)
			check(s, "opened")
			if size := must(os.Stat(filepath.Join(dir, "1", segmentName(1)))).Size(); size != int64(len(raw)) {
				t.Errorf("segment 1 is %d bytes after Open, was %d", size, len(raw))
			}
			p, _ := s.lookup(1, false)
			if dead := p.segs[1].dead; dead != int64(len(rejected)) {
				t.Errorf("segment 1 counts %d bytes dead; want the two rejected records', %d", dead, len(rejected))
			}
			s.Close()
			s = open(t, dir, 4<<10)
			if err := s.CompactReplays(context.Background()); err != nil {
				t.Fatal(err)
			}
			check(s, "compacted")
			for _, n := range must(files(t, filepath.Join(dir, "1"))) {
				if b, _ := os.ReadFile(filepath.Join(dir, "1", n)); bytes.Contains(b, []byte("bad id")) || bytes.Contains(b, []byte(`"negative"`)) {
					t.Errorf("%s still holds a rejected record after compaction", n)
				}
			}
			s.Close()
			check(open(t, dir, 4<<10), "compacted and reopened")
		})
	}
}

// ids lists a product's sessions by id.
func ids(t *testing.T, s *Store) string {
	t.Helper()
	list, err := s.ListReplaySessions(context.Background(), 1, analytics.ReplayFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range list {
		out = append(out, x.SessionID)
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}
