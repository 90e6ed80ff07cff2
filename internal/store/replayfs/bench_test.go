package replayfs

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"strata/internal/analytics"
)

// The benchmarks compare the segment store with the layout before it (a
// directory per session, a file per chunk, written as that store wrote
// it: a temporary file, fsync, rename, the directory fsync'd), in the same
// run (docs/benchmarks.md, "Session replay storage"):
//
//	go test -run '^$' -bench 'Append|Read' -benchtime 2000x -benchmem ./internal/store/replayfs
//	go test -run '^$' -bench Open -benchtime 3x ./internal/store/replayfs

// benchChunkBytes is a chunk as the SDK sends one of a busy page: 5 s of
// rrweb events, gzipped.
const benchChunkBytes = 20 << 10

func benchChunks(n, sessions int) []analytics.ReplayChunk {
	rnd := rand.New(rand.NewPCG(1, 2))
	out := make([]analytics.ReplayChunk, n)
	for i := range out {
		c := chunk(1, fmt.Sprintf("session-%03d", i%sessions), "window", i/sessions, benchChunkBytes)
		for j := range c.Data {
			c.Data[j] = byte(rnd.Uint32())
		}
		out[i] = c
	}
	return out
}

// dirStore is the layout before segments, written and read as it was.
type dirStore struct{ dir string }

func (d dirStore) append(c analytics.ReplayChunk) error {
	sdir := filepath.Join(d.dir, fmt.Sprint(c.ProductID), c.SessionID)
	if _, err := os.Stat(sdir); err != nil {
		if err := os.MkdirAll(sdir, 0o700); err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(sdir)); err != nil {
			return err
		}
	}
	name := filepath.Join(sdir, fmt.Sprintf("%s.%010d.chunk", c.WindowID, c.Index))
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	h, _ := json.Marshal(headerOf(c))
	f, err := os.CreateTemp(sdir, ".tmp-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	w.Write(h)
	w.WriteByte('\n')
	w.Write(c.Data)
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return err
	}
	return syncDir(sdir)
}

func (d dirStore) read(product int64, session string) ([]analytics.ReplayChunk, error) {
	chunks, err := legacyChunks(product, filepath.Join(d.dir, fmt.Sprint(product), session))
	return analytics.OrderReplayChunks(chunks), err
}

// BenchmarkAppend appends one chunk a call, as ingest does for the SDK's
// requests (a chunk each), to one of 100 sessions in turn: durable before
// the call returns.
func BenchmarkAppend(b *testing.B) {
	b.Run("segments", func(b *testing.B) {
		chunks := benchChunks(b.N, 100)
		s, err := Open(b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		b.SetBytes(benchChunkBytes)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := s.AppendReplayChunks(context.Background(), chunks[i:i+1], analytics.ReplayLimits{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("directories", func(b *testing.B) {
		chunks := benchChunks(b.N, 100)
		d := dirStore{b.TempDir()}
		b.SetBytes(benchChunkBytes)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := d.append(chunks[i]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRead reads a session of 200 chunks (4 MB) whole: from segments
// a page at a time, as GET /api/v1/replays/{id} does, and from its
// directory at once, as it did.
func BenchmarkRead(b *testing.B) {
	const sessions, each = 20, 200
	chunks := benchChunks(sessions*each, sessions)
	b.Run("segments", func(b *testing.B) {
		s, err := Open(b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for i := 0; i < len(chunks); i += 50 {
			if _, err := s.AppendReplayChunks(context.Background(), chunks[i:i+50], analytics.ReplayLimits{}); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(each * benchChunkBytes)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			var cur analytics.ReplayCursor
			n := 0
			for {
				page, more, err := s.ReadReplayChunks(context.Background(), 1, fmt.Sprintf("session-%03d", i%sessions), cur, analytics.MaxReplayPageBytes)
				if err != nil {
					b.Fatal(err)
				}
				n += len(page)
				if !more {
					break
				}
				cur = analytics.ReplayCursor{WindowID: page[len(page)-1].WindowID, Index: page[len(page)-1].Index}
			}
			if n != each {
				b.Fatalf("%d chunks read", n)
			}
		}
	})
	b.Run("directories", func(b *testing.B) {
		d := dirStore{b.TempDir()}
		for _, c := range chunks {
			if err := d.append(c); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(each * benchChunkBytes)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			got, err := d.read(1, fmt.Sprintf("session-%03d", i%sessions))
			if err != nil || len(got) != each {
				b.Fatalf("%d chunks, %v", len(got), err)
			}
		}
	})
}

// BenchmarkOpen is what the index costs at start: Open reading a product
// whose chunks are all in sealed segments, per op (with the files in the
// page cache), and what the index keeps in memory per chunk; 100,000 small
// chunks of 2,000 sessions, 20,000 of 20 KB (400 MB) of 400 sessions, and
// 100,000 sessions of one tiny chunk each (what a flood of them costs).
func BenchmarkOpen(b *testing.B) {
	for _, c := range []struct {
		name                    string
		chunks, sessions, bytes int
	}{
		{"300B", 100_000, 2000, 300},
		{"20KB", 20_000, 400, benchChunkBytes},
		{"sessionOfOne", 100_000, 100_000, 40},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			s, err := Open(dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < c.chunks; i += 1000 {
				batch := make([]analytics.ReplayChunk, 1000)
				for j := range batch {
					n := i + j
					batch[j] = chunk(1, fmt.Sprintf("s%04d", n%c.sessions), "w", n/c.sessions, c.bytes)
				}
				if _, err := s.AppendReplayChunks(context.Background(), batch, analytics.ReplayLimits{}); err != nil {
					b.Fatal(err)
				}
			}
			s.Close()
			var before, after runtime.MemStats
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				runtime.GC()
				runtime.ReadMemStats(&before)
				s, err := Open(dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				if list, _ := s.ListReplaySessions(context.Background(), 1, analytics.ReplayFilter{}); len(list) != c.sessions {
					b.Fatalf("%d sessions", len(list))
				}
				s.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.chunks), "ns/chunk")
			// What the index keeps, per chunk (its sessions' summaries included).
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(c.chunks), "index-B/chunk")
		})
	}
}

// ingested is session n's one chunk, of size bytes of data, as ingest
// hands it to the store: ids of the SDK's form (UUIDs), or of 64
// characters, the longest taken, each decoded on its own, and the
// distinct_id a view of the event's bytes (ingest's parser keeps one copy
// of each event object, the chunk's base64 in it, and its strings point
// into it).
func ingested(n, size int, long bool) analytics.ReplayChunk {
	form := "%08x-7c1e-4b0a-9f3d-%012x"
	if long {
		form = "%08x-7c1e-4b0a-9f3d-%040x"
	}
	c := chunk(1, fmt.Sprintf(form, n, n), fmt.Sprintf(form, n+1<<30, n), 0, size)
	user := fmt.Sprintf(form, n%1000+1<<31, n%1000)
	event := `{"event_name":"$snapshot","distinct_id":"` + user + `","properties":{"$session_id":"` + c.SessionID +
		`","$window_id":"` + c.WindowID + `","$chunk_index":0,"$snapshot_encoding":"gzip-json","$snapshot_data":"` +
		base64.StdEncoding.EncodeToString(c.Data) + `"}}`
	at := strings.Index(event, user)
	c.DistinctID = event[at : at+len(user)]
	return c
}

// BenchmarkIndex is what the index keeps per session as ingest fills it
// (BenchmarkOpen: as Open rebuilds it): sessions of one chunk, 500 a call
// as a full batch of the SDK brings them, of a tiny chunk (a flood) and of
// a chunk of a busy page.
//
//	go test -run '^$' -bench Index -benchtime 1x ./internal/store/replayfs
func BenchmarkIndex(b *testing.B) {
	for _, c := range []struct {
		name            string
		sessions, bytes int
		long            bool
	}{
		{"tiny", 20_000, 40, false},
		{"tiny-64", 20_000, 40, true},
		{"20KB", 5_000, benchChunkBytes, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s, err := Open(b.TempDir(), Options{})
				if err != nil {
					b.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for n := 0; n < c.sessions; n += 500 {
					batch := make([]analytics.ReplayChunk, 500)
					for j := range batch {
						batch[j] = ingested(n+j, c.bytes, c.long)
					}
					if _, err := s.AppendReplayChunks(context.Background(), batch, analytics.ReplayLimits{}); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(c.sessions), "index-B/session")
				s.Close()
			}
		})
	}
}
