package storetest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"strata/internal/analytics"
)

// RunReplay runs the replay store's conformance test: the segment files of
// the embedded server (replayfs) and the table of the PostgreSQL metadata
// store (and of DuckDB's, which runs the same statements) pass the same
// cases. open must return an empty store and register its cleanup.
func RunReplay(t *testing.T, open func(t *testing.T) analytics.ReplayStore) {
	for _, c := range replayCases {
		t.Run(c.name, func(t *testing.T) { c.test(t, open(t)) })
	}
}

// replayCases are the replay store's cases, each on a store of its own.
var replayCases = []struct {
	name string
	test func(*testing.T, analytics.ReplayStore)
}{
	{"Replay", testReplay},
	{"ReplayPages", testReplayPages},
	{"ReplaySessionCap", testReplaySessionCap},
	{"ReplayConcurrentCap", testReplayConcurrentCap},
	{"ReplaySessionsCap", testReplaySessionsCap},
	{"ReplaySessionsCount", testReplaySessionsCount},
	{"ReplayDeleteMany", testReplayDeleteMany},
	{"ReplayConcurrentSessionsCap", testReplayConcurrentSessionsCap},
}

// readReplay reads a session page by page, maxBytes a page, and checks
// every page against the contract: at least one chunk while more follow,
// no more than maxBytes of data unless it holds one chunk, no more than
// MaxReplayPageChunks; and as full as the rule lets it be
// (analytics.PageReplayChunks): a page followed by another holds
// MaxReplayPageChunks, or the next page's first chunk would have taken it
// past maxBytes of data. A store that paged by another measure (its
// records' lengths, say) would cut pages short.
func readReplay(t *testing.T, s analytics.ReplayStore, product int64, sid string, maxBytes int) ([]analytics.ReplayChunk, int) {
	t.Helper()
	var all []analytics.ReplayChunk
	var cur analytics.ReplayCursor
	pages := 0
	prevData, prevChunks := 0, 0
	for {
		page, more, err := s.ReadReplayChunks(context.Background(), product, sid, cur, maxBytes)
		if err != nil {
			t.Fatalf("reading %s after %+v: %v", sid, cur, err)
		}
		pages++
		data := 0
		for _, c := range page {
			data += len(c.Data)
		}
		if (more && len(page) == 0) || (len(page) > 1 && data > maxBytes) || len(page) > analytics.MaxReplayPageChunks {
			t.Fatalf("page %d of %s: %d chunks, %d bytes of data, more %v (maxBytes %d)", pages, sid, len(page), data, more, maxBytes)
		}
		if pages > 1 && len(page) > 0 && prevChunks < analytics.MaxReplayPageChunks && prevData+len(page[0].Data) <= maxBytes {
			t.Fatalf("page %d of %s: %d chunks, %d bytes of data, but the next chunk (%d bytes) fits within maxBytes %d",
				pages-1, sid, prevChunks, prevData, len(page[0].Data), maxBytes)
		}
		prevData, prevChunks = data, len(page)
		all = append(all, page...)
		if !more {
			return all, pages
		}
		last := page[len(page)-1]
		cur = analytics.ReplayCursor{WindowID: last.WindowID, Index: last.Index}
	}
}

// appendReplay appends chunks with no cap and fails the test on error.
func appendReplay(t *testing.T, s analytics.ReplayStore, chunks ...analytics.ReplayChunk) {
	t.Helper()
	if refused, err := s.AppendReplayChunks(context.Background(), chunks, analytics.ReplayLimits{}); err != nil || refused.Count() != 0 {
		t.Fatalf("appending %d chunks: refused %+v, %v", len(chunks), refused, err)
	}
}

// replayChunk builds a chunk of session sid whose data is distinct per
// chunk, starting sec seconds after base.
func replayChunk(product int64, sid, window string, index int, user string, base time.Time, sec int) analytics.ReplayChunk {
	data := bytes.Repeat([]byte(fmt.Sprintf("%s/%s/%d;", sid, window, index)), 10+index)
	data = append(data, 0, 0xff, '\n', 0x1f, 0x8b) // binary bytes survive
	return analytics.ReplayChunk{ProductID: product, SessionID: sid, WindowID: window, Index: index, DistinctID: user,
		FirstTS: base.Add(time.Duration(sec) * time.Second), LastTS: base.Add(time.Duration(sec+5) * time.Second),
		Encoding: analytics.ReplayGzipJSON, Data: data, Pages: 1, Clicks: index, Errors: index % 2,
		ReceivedAt: base.Add(time.Duration(sec+6) * time.Second)}
}

func testReplay(t *testing.T, s analytics.ReplayStore) {
	ctx := context.Background()
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	if got, err := s.ReplayProducts(ctx); err != nil || len(got) != 0 {
		t.Fatalf("ReplayProducts of an empty store = %v, %v", got, err)
	}
	if got, err := s.ListReplaySessions(ctx, 1, analytics.ReplayFilter{}); err != nil || len(got) != 0 {
		t.Fatalf("ListReplaySessions of an empty store = %v, %v", got, err)
	}
	a := []analytics.ReplayChunk{
		replayChunk(1, "s-a", "w1", 0, "anon-1", base, 0),
		replayChunk(1, "s-a", "w1", 1, "anon-1", base, 5),
		replayChunk(1, "s-a", "w2", 0, "user-1", base, 20), // a second tab, after identify
		replayChunk(1, "s-b", "w3", 0, "user-2", base, 3600),
		replayChunk(2, "s-a", "w9", 0, "other", base, 7200), // the same session id in another product
	}
	appendReplay(t, s, a...)
	// A retry of a chunk with other content keeps the first.
	retry := replayChunk(1, "s-a", "w1", 1, "anon-1", base, 5)
	retry.Data = []byte("changed")
	appendReplay(t, s, retry)
	// Out of order: chunk 2 of w1 arrives after w2's.
	late := replayChunk(1, "s-a", "w1", 2, "anon-1", base, 10)
	appendReplay(t, s, late)

	list, err := s.ListReplaySessions(ctx, 1, analytics.ReplayFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].SessionID != "s-b" || list[1].SessionID != "s-a" {
		t.Fatalf("sessions of product 1 = %+v, want s-b then s-a", list)
	}
	sa := list[1]
	wantBytes := int64(len(a[0].Data)+len(a[1].Data)+len(a[2].Data)+len(late.Data)) + 4*analytics.ReplayChunkOverhead
	if !sa.Start.Equal(base) || !sa.End.Equal(base.Add(25*time.Second)) || sa.DistinctID != "user-1" ||
		sa.Pages != 4 || sa.Clicks != 0+1+0+2 || sa.Errors != 1 || sa.Chunks != 4 || sa.Bytes != wantBytes ||
		!sa.LastReceived.Equal(base.Add(26*time.Second)) {
		t.Errorf("session s-a = %+v (want start %v, end +25s, user-1, 4 pages, 3 clicks, 1 error, 4 chunks, %d bytes)", sa, base, wantBytes)
	}
	// One session's summary is the list's row.
	one, err := s.ReplaySession(ctx, 1, "s-a")
	if err != nil {
		t.Fatal(err)
	}
	one.DistinctIDs, sa.DistinctIDs = nil, nil
	if fmt.Sprint(one) != fmt.Sprint(sa) {
		t.Errorf("ReplaySession(s-a) = %+v, want the list's %+v", one, sa)
	}
	if _, err := s.ReplaySession(ctx, 2, "s-b"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("another product's session: %v, want ErrNotFound", err)
	}

	for _, c := range []struct {
		name string
		f    analytics.ReplayFilter
		want []string
	}{
		{"by a user of the middle of the session", analytics.ReplayFilter{DistinctID: "anon-1"}, []string{"s-a"}},
		{"by the other user", analytics.ReplayFilter{DistinctID: "user-2"}, []string{"s-b"}},
		{"by another product's user", analytics.ReplayFilter{DistinctID: "other"}, nil},
		{"from after s-a ended", analytics.ReplayFilter{From: base.Add(time.Minute)}, []string{"s-b"}},
		{"to before s-b started", analytics.ReplayFilter{To: base.Add(time.Hour)}, []string{"s-a"}},
		{"limit", analytics.ReplayFilter{Limit: 1}, []string{"s-b"}},
	} {
		got, err := s.ListReplaySessions(ctx, 1, c.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, x := range got {
			ids = append(ids, x.SessionID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.name, ids, c.want)
		}
	}

	chunks, _ := readReplay(t, s, 1, "s-a", analytics.MaxReplayPageBytes)
	var order []string
	for _, c := range chunks {
		order = append(order, fmt.Sprintf("%s.%d", c.WindowID, c.Index))
	}
	if fmt.Sprint(order) != "[w1.0 w1.1 w1.2 w2.0]" {
		t.Errorf("chunk order %v, want by window then index", order)
	}
	want := map[string]analytics.ReplayChunk{"w1.0": a[0], "w1.1": a[1], "w1.2": late, "w2.0": a[2]}
	for i, c := range chunks {
		w := want[order[i]]
		if !bytes.Equal(c.Data, w.Data) || c.Size != len(w.Data) || c.DistinctID != w.DistinctID || !c.FirstTS.Equal(w.FirstTS) ||
			!c.LastTS.Equal(w.LastTS) || c.Encoding != w.Encoding || c.Clicks != w.Clicks || c.ProductID != 1 {
			t.Errorf("chunk %s = %+v, want %+v", order[i], c, w)
		}
	}
	// Tenant isolation: product 2's s-a is its own.
	if other, _ := readReplay(t, s, 2, "s-a", analytics.MaxReplayPageBytes); len(other) != 1 || other[0].DistinctID != "other" {
		t.Errorf("product 2's s-a = %+v", other)
	}
	if _, err := s.ReplaySession(ctx, 3, "s-a"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a session of another product: %v, want ErrNotFound", err)
	}
	if got, _ := readReplay(t, s, 3, "s-a", analytics.MaxReplayPageBytes); len(got) != 0 {
		t.Errorf("a session of another product reads %d chunks", len(got))
	}
	if _, err := s.ReplaySession(ctx, 1, "nope"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("an unknown session: %v, want ErrNotFound", err)
	}
	if got, err := s.ReplayProducts(ctx); err != nil || fmt.Sprint(got) != "[1 2]" {
		t.Errorf("ReplayProducts = %v, %v", got, err)
	}

	if err := s.DeleteReplaySession(ctx, 3, "s-a"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("deleting another product's session: %v, want ErrNotFound", err)
	}
	if err := s.DeleteReplaySession(ctx, 1, "s-a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteReplaySession(ctx, 1, "s-a"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("deleting twice: %v, want ErrNotFound", err)
	}
	if list, _ := s.ListReplaySessions(ctx, 1, analytics.ReplayFilter{}); len(list) != 1 || list[0].SessionID != "s-b" {
		t.Errorf("after the delete: %+v", list)
	}
	if other, _ := readReplay(t, s, 2, "s-a", analytics.MaxReplayPageBytes); len(other) != 1 {
		t.Errorf("deleting product 1's s-a touched product 2's: %v", other)
	}
	if _, err := s.ReplaySession(ctx, 1, "s-a"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a deleted session: %v, want ErrNotFound", err)
	}
	if got, _ := readReplay(t, s, 1, "s-a", analytics.MaxReplayPageBytes); len(got) != 0 {
		t.Errorf("a deleted session reads %d chunks", len(got))
	}
	// A deleted session's id can be recorded again, the same chunks too.
	appendReplay(t, s, a[0])
	if got, _ := readReplay(t, s, 1, "s-a", analytics.MaxReplayPageBytes); len(got) != 1 || !bytes.Equal(got[0].Data, a[0].Data) {
		t.Errorf("s-a recorded again: %d chunks", len(got))
	}
	if got, err := s.ReplaySession(ctx, 1, "s-a"); err != nil || got.Chunks != 1 || got.Bytes != analytics.ReplayChunkCharge(len(a[0].Data)) {
		t.Errorf("s-a recorded again: %+v, %v", got, err)
	}
}

// testReplayPages reads a session of several windows in pages of every
// size, from one chunk a page to the whole session in one: the pages,
// joined, are the session in playing order, whatever their size; a window
// whose late chunk starts it earlier moves ahead; a cursor past the end,
// of an unknown window or session, reads nothing.
func testReplayPages(t *testing.T, s analytics.ReplayStore) {
	ctx := context.Background()
	base := time.Date(2026, 5, 2, 10, 0, 0, 0, time.UTC)
	var all []analytics.ReplayChunk
	for w, start := range map[string]int{"wa": 0, "wb": 100, "wc": 200} {
		for i := 0; i < 7; i++ {
			all = append(all, replayChunk(1, "long", w, i, "u", base, start+10*i))
		}
	}
	appendReplay(t, s, all...)
	// A late chunk of wc (its 7th) starts before wa: wc now plays first.
	early := replayChunk(1, "long", "wc", 7, "u", base, -50)
	appendReplay(t, s, early)
	all = append(all, early)
	want := []string{"wc.0", "wc.1", "wc.2", "wc.3", "wc.4", "wc.5", "wc.6", "wc.7"}
	for _, w := range []string{"wa", "wb"} {
		for i := 0; i < 7; i++ {
			want = append(want, fmt.Sprintf("%s.%d", w, i))
		}
	}
	data := map[string][]byte{}
	for _, c := range all {
		data[fmt.Sprintf("%s.%d", c.WindowID, c.Index)] = c.Data
	}
	for _, maxBytes := range []int{1, 200, 500, 1000, analytics.MaxReplayPageBytes} {
		got, pages := readReplay(t, s, 1, "long", maxBytes)
		var order []string
		for _, c := range got {
			k := fmt.Sprintf("%s.%d", c.WindowID, c.Index)
			order = append(order, k)
			if !bytes.Equal(c.Data, data[k]) || c.SessionID != "long" {
				t.Errorf("maxBytes %d: chunk %s is not as stored", maxBytes, k)
			}
		}
		if fmt.Sprint(order) != fmt.Sprint(want) {
			t.Errorf("maxBytes %d: %v, want %v", maxBytes, order, want)
		}
		switch {
		case maxBytes == 1 && pages != len(want):
			t.Errorf("one chunk a page: %d pages, want %d", pages, len(want))
		case maxBytes == analytics.MaxReplayPageBytes && pages != 1:
			t.Errorf("the whole session in a page: %d pages", pages)
		}
	}
	for _, c := range []struct {
		name string
		pid  int64
		sid  string
		cur  analytics.ReplayCursor
	}{
		{"past the end", 1, "long", analytics.ReplayCursor{WindowID: "wb", Index: 6}},
		{"an unknown window", 1, "long", analytics.ReplayCursor{WindowID: "nope", Index: 0}},
		{"an unknown session", 1, "nope", analytics.ReplayCursor{}},
		{"another product", 2, "long", analytics.ReplayCursor{}},
	} {
		if page, more, err := s.ReadReplayChunks(ctx, c.pid, c.sid, c.cur, analytics.MaxReplayPageBytes); err != nil || len(page) != 0 || more {
			t.Errorf("%s: %d chunks, more %v, %v", c.name, len(page), more, err)
		}
	}
	// After wa's last chunk comes wb's first.
	page, more, err := s.ReadReplayChunks(ctx, 1, "long", analytics.ReplayCursor{WindowID: "wa", Index: 6}, 1)
	if err != nil || len(page) != 1 || page[0].WindowID != "wb" || page[0].Index != 0 || !more {
		t.Errorf("after wa.6: %+v, more %v, %v", page, more, err)
	}
}

// sized is a chunk of session sid whose data is n bytes.
func sized(product int64, sid, window string, index, n int) analytics.ReplayChunk {
	c := replayChunk(product, sid, window, index, "u", time.Date(2026, 5, 3, 10, 0, 0, 0, time.UTC), index)
	c.Data = bytes.Repeat([]byte{byte(index)}, n)
	return c
}

// testReplaySessionCap fills a session to its cap: a chunk that would pass
// it is refused, and only that one of its batch; a retry of a stored chunk
// is still taken; another session is not held back; a deleted session
// starts again from nothing.
func testReplaySessionCap(t *testing.T, s analytics.ReplayStore) {
	ctx := context.Background()
	charge := analytics.ReplayChunkCharge(1000)
	limit := 3 * charge
	for i := 0; i < 2; i++ {
		if full, err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{sized(1, "capped", "w", i, 1000)}, analytics.ReplayLimits{SessionBytes: limit}); err != nil || full.Count() != 0 {
			t.Fatalf("chunk %d under the cap: refused %v, %v", i, full, err)
		}
	}
	// A batch: the third chunk fits, the fourth and fifth do not, another
	// session's chunk and a retry of chunk 0 are taken.
	batch := []analytics.ReplayChunk{sized(1, "capped", "w", 2, 1000), sized(1, "capped", "w", 3, 1000), sized(1, "other", "w", 0, 1000),
		sized(1, "capped", "w", 0, 1000), sized(1, "capped", "w2", 0, 10)}
	full, err := s.AppendReplayChunks(ctx, batch, analytics.ReplayLimits{SessionBytes: limit})
	if err != nil || fmt.Sprint(full.SessionFull) != "[1 4]" || len(full.ProductFull) != 0 {
		t.Fatalf("a batch past the cap: refused %v, %v; want [1 4]", full, err)
	}
	got, err := s.ReplaySession(ctx, 1, "capped")
	if err != nil || got.Chunks != 3 || got.Bytes != limit {
		t.Errorf("the capped session: %+v, %v; want 3 chunks, %d bytes", got, err, limit)
	}
	if got, err := s.ReplaySession(ctx, 1, "other"); err != nil || got.Chunks != 1 {
		t.Errorf("another session: %+v, %v", got, err)
	}
	// Full: a retry of a stored chunk is acknowledged, a new one is not;
	// without a cap it is.
	if full, err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{sized(1, "capped", "w", 1, 1000)}, analytics.ReplayLimits{SessionBytes: limit}); err != nil || full.Count() != 0 {
		t.Errorf("a retry into a full session: refused %v, %v", full, err)
	}
	if full, err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{sized(1, "capped", "w", 9, 1)}, analytics.ReplayLimits{SessionBytes: limit}); err != nil || fmt.Sprint(full.SessionFull) != "[0]" {
		t.Errorf("a small chunk into a full session: refused %v, %v", full, err)
	}
	if full, err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{sized(1, "capped", "w", 9, 1)}, analytics.ReplayLimits{}); err != nil || full.Count() != 0 {
		t.Errorf("a chunk without a cap: refused %v, %v", full, err)
	}
	// A chunk over the cap on its own never fits.
	if full, err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{sized(1, "huge", "w", 0, 5000)}, analytics.ReplayLimits{SessionBytes: limit}); err != nil || fmt.Sprint(full.SessionFull) != "[0]" {
		t.Errorf("a chunk over the cap: refused %v, %v", full, err)
	}
	if _, err := s.ReplaySession(ctx, 1, "huge"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("the refused chunk's session exists: %v", err)
	}
	// Deleted, the session starts from nothing.
	if err := s.DeleteReplaySession(ctx, 1, "capped"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if full, err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{sized(1, "capped", "w", i, 1000)}, analytics.ReplayLimits{SessionBytes: limit}); err != nil || full.Count() != 0 {
			t.Errorf("chunk %d after the delete: refused %v, %v", i, full, err)
		}
	}
}

// keptSessions is the ids of product 1's sessions, sorted, as fmt prints
// them.
func keptSessions(ctx context.Context, s analytics.ReplayStore) (string, error) {
	list, err := s.ListReplaySessions(ctx, 1, analytics.ReplayFilter{})
	var ids []string
	for _, x := range list {
		ids = append(ids, x.SessionID)
	}
	slices.Sort(ids)
	return fmt.Sprint(ids), err
}

// concurrently runs work(w) for each of workers goroutines at once, and
// waits for them all.
func concurrently(workers int, work func(w int)) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() { work(w) })
	}
	wg.Wait()
}

// appendAgain appends chunks as ingest's client would: a call that fails
// (DuckDB refuses a conflicting transaction rather than waiting; ingest
// answers 503) is sent again, a little later each time, up to tries calls
// in all. It returns the last call's answer.
func appendAgain(ctx context.Context, s analytics.ReplayStore, chunks []analytics.ReplayChunk, limits analytics.ReplayLimits, tries int) (analytics.ReplayRefused, error) {
	for try := 0; ; try++ {
		refused, err := s.AppendReplayChunks(ctx, chunks, limits)
		if err == nil || try == tries-1 {
			return refused, err
		}
		time.Sleep(time.Duration(try+1) * time.Millisecond)
	}
}

// testReplayConcurrentCap appends 32 chunks to one session from 8
// goroutines at once under a cap of 10: exactly 10 are stored and the
// other 22 refused, none twice. A call that fails (DuckDB refuses a
// conflicting transaction rather than waiting; ingest would answer 503
// and the client send it again) is sent again.
func testReplayConcurrentCap(t *testing.T, s analytics.ReplayStore) {
	ctx := context.Background()
	const size, workers, each, fits = 2000, 8, 4, 10
	limit := fits * analytics.ReplayChunkCharge(size)
	var mu sync.Mutex
	refused := 0
	concurrently(workers, func(w int) {
		for i := 0; i < each; i++ {
			c := sized(1, "busy", fmt.Sprintf("w%d", w), i, size)
			full, err := appendAgain(ctx, s, []analytics.ReplayChunk{c}, analytics.ReplayLimits{SessionBytes: limit}, 51)
			if err != nil {
				t.Errorf("chunk %d of w%d: %v", i, w, err)
				return
			}
			mu.Lock()
			refused += len(full.SessionFull)
			mu.Unlock()
		}
	})
	got, err := s.ReplaySession(ctx, 1, "busy")
	stored, _ := readReplay(t, s, 1, "busy", analytics.MaxReplayPageBytes)
	if err != nil || got.Chunks != fits || got.Bytes != limit || len(stored) != fits || refused != workers*each-fits {
		t.Errorf("the session: %+v, %v; %d chunks read, %d refused; want %d stored (%d bytes), %d refused",
			got, err, len(stored), refused, fits, limit, workers*each-fits)
	}
}

// testReplaySessionsCap fills a product to its cap on sessions: a chunk
// that would start one more is refused (ProductFull), and only that
// session's chunks of its batch, a second copy among them; the sessions
// kept still take chunks, retries and new ones alike, under their own
// cap; another product is not held back; a deleted session makes room
// for one more, and no more.
func testReplaySessionsCap(t *testing.T, s analytics.ReplayStore) {
	ctx := context.Background()
	limits := analytics.ReplayLimits{Sessions: 3, SessionBytes: 4 * analytics.ReplayChunkCharge(1000)}
	add := func(what string, want string, chunks ...analytics.ReplayChunk) {
		t.Helper()
		refused, err := s.AppendReplayChunks(ctx, chunks, limits)
		if got := fmt.Sprintf("session %v product %v", refused.SessionFull, refused.ProductFull); err != nil || got != want {
			t.Errorf("%s: refused %s, %v; want %s", what, got, err, want)
		}
	}
	none := "session [] product []"
	add("two sessions", none, sized(1, "a", "w", 0, 1000), sized(1, "a", "w", 1, 1000), sized(1, "b", "w", 0, 1000))
	// Room for one more: c starts, d does not (nor its second chunk, nor
	// the copy of its first); a takes its chunk.
	add("a batch past the cap", "session [] product [1 2 4]",
		sized(1, "c", "w", 0, 1000), sized(1, "d", "w", 0, 1000), sized(1, "d", "w", 1, 1000), sized(1, "a", "w", 2, 1000),
		sized(1, "d", "w", 0, 1000))
	if _, err := s.ReplaySession(ctx, 1, "d"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("the refused session exists: %v", err)
	}
	// Full: the sessions kept still take chunks, up to their own cap.
	add("a retry, and a chunk of a kept session", none, sized(1, "c", "w", 0, 1000), sized(1, "b", "w2", 0, 1000))
	add("a kept session past its own cap", "session [1] product []", sized(1, "a", "w", 3, 1000), sized(1, "a", "w", 4, 1000))
	add("a new session", "session [] product [0]", sized(1, "e", "w", 0, 10))
	// Another product has room of its own.
	add("another product", none, sized(2, "d", "w", 0, 1000), sized(2, "e", "w", 0, 1000))
	// A deleted session makes room for one.
	if err := s.DeleteReplaySession(ctx, 1, "b"); err != nil {
		t.Fatal(err)
	}
	add("after a delete", "session [] product [1]", sized(1, "e", "w", 0, 1000), sized(1, "f", "w", 0, 1000))
	if ids, err := keptSessions(ctx, s); err != nil || ids != "[a c e]" {
		t.Errorf("product 1 keeps %v, %v; want [a c e]", ids, err)
	}
	if got, err := s.ReplaySession(ctx, 1, "a"); err != nil || got.Chunks != 4 {
		t.Errorf("session a: %+v, %v; want 4 chunks", got, err)
	}
	// Without the cap, f starts.
	if refused, err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{sized(1, "f", "w", 0, 1000)}, analytics.ReplayLimits{}); err != nil || refused.Count() != 0 {
		t.Errorf("a new session without a cap: refused %+v, %v", refused, err)
	}
}

// testReplaySessionsCount checks that what a product is counted to keep
// follows its sessions through everything that adds or removes one, by
// what the cap on sessions then lets in: sessions started without a cap
// count when one is set; a session deleted and recorded again, over and
// over, takes one place each time; sessions of a batch that the cap
// refused again take none; a retry of a kept session's chunk starts
// nothing.
func testReplaySessionsCount(t *testing.T, s analytics.ReplayStore) {
	ctx := context.Background()
	limits := analytics.ReplayLimits{Sessions: 3}
	add := func(what string, want string, chunks ...analytics.ReplayChunk) {
		t.Helper()
		refused, err := s.AppendReplayChunks(ctx, chunks, limits)
		if got := fmt.Sprintf("product %v", refused.ProductFull); err != nil || got != want || len(refused.SessionFull) > 0 {
			t.Fatalf("%s: refused %+v, %v; want %s", what, refused, err, want)
		}
	}
	del := func(sid string) {
		t.Helper()
		if err := s.DeleteReplaySession(ctx, 1, sid); err != nil {
			t.Fatalf("deleting %s: %v", sid, err)
		}
	}
	appendReplay(t, s, sized(1, "a", "w", 0, 100), sized(1, "b", "w", 0, 100), sized(1, "c", "w", 0, 100))
	add("a fourth session after three without a cap", "product [0]", sized(1, "d", "w", 0, 100))
	for round := 0; round < 3; round++ {
		del("a")
		add(fmt.Sprintf("round %d: d in a's place", round), "product [1]", sized(1, "d", "w", round, 100), sized(1, "e", "w", 0, 100))
		del("d")
		add(fmt.Sprintf("round %d: a again in d's place", round), "product [1]", sized(1, "a", "w", 0, 100), sized(1, "e", "w", 0, 100))
	}
	// Room for one, a batch of two new sessions: one kept, one refused,
	// and only the one counted.
	del("b")
	add("two new sessions with room for one", "product [1]", sized(1, "x", "w", 0, 100), sized(1, "y", "w", 0, 100))
	add("a retry of the kept one, and another new session", "product [1]", sized(1, "x", "w", 0, 100), sized(1, "z", "w", 0, 100))
	del("x")
	del("c")
	add("two new sessions with room for two", "product []", sized(1, "y", "w", 0, 100), sized(1, "z", "w", 0, 100))
	add("one more", "product [0]", sized(1, "b", "w", 0, 100))
	if ids, err := keptSessions(ctx, s); err != nil || ids != "[a y z]" {
		t.Errorf("product 1 keeps %v, %v; want [a y z]", ids, err)
	}
}

// testReplayDeleteMany deletes sessions at once: those of the product
// among the ids go, chunks and all, and are counted; an unknown id, an id
// named twice, another product's session and an empty list are skipped;
// the other sessions, and the other product's of the same id, are kept;
// the sessions deleted make room under the cap on sessions, as many as
// were deleted; a deleted id can be recorded again.
func testReplayDeleteMany(t *testing.T, s analytics.ReplayStore) {
	ctx := context.Background()
	for i := 0; i < 6; i++ {
		appendReplay(t, s, sized(1, fmt.Sprintf("s%d", i), "w", 0, 100), sized(1, fmt.Sprintf("s%d", i), "w", 1, 100))
	}
	appendReplay(t, s, sized(2, "s1", "w", 0, 100), sized(2, "only-2", "w", 0, 100))
	if n, err := s.DeleteReplaySessions(ctx, 1, nil); err != nil || n != 0 {
		t.Errorf("deleting no session: %d, %v", n, err)
	}
	n, err := s.DeleteReplaySessions(ctx, 1, []string{"s1", "s3", "nope", "s1", "only-2", "s4"})
	if err != nil || n != 3 {
		t.Fatalf("deleting s1, s3 and s4 among others: %d deleted, %v; want 3", n, err)
	}
	if ids, err := keptSessions(ctx, s); err != nil || ids != "[s0 s2 s5]" {
		t.Errorf("product 1 keeps %v, %v; want [s0 s2 s5]", ids, err)
	}
	for _, sid := range []string{"s1", "s3", "s4"} {
		if got, _ := readReplay(t, s, 1, sid, analytics.MaxReplayPageBytes); len(got) != 0 {
			t.Errorf("deleted session %s reads %d chunks", sid, len(got))
		}
		if err := s.DeleteReplaySession(ctx, 1, sid); !errors.Is(err, analytics.ErrNotFound) {
			t.Errorf("deleting %s again: %v, want ErrNotFound", sid, err)
		}
	}
	for _, sid := range []string{"s1", "only-2"} {
		if got, _ := readReplay(t, s, 2, sid, analytics.MaxReplayPageBytes); len(got) != 1 {
			t.Errorf("product 2's %s reads %d chunks after product 1's were deleted", sid, len(got))
		}
	}
	if n, err := s.DeleteReplaySessions(ctx, 1, []string{"s1", "s3"}); err != nil || n != 0 {
		t.Errorf("deleting the same sessions again: %d, %v; want 0", n, err)
	}
	// Three sessions kept and room for three more under a cap of six (the
	// batch in the order of its ids, so that every store refuses the
	// last).
	limits := analytics.ReplayLimits{Sessions: 6}
	batch := []analytics.ReplayChunk{sized(1, "s1", "w", 0, 100), sized(1, "t1", "w", 0, 100), sized(1, "t2", "w", 0, 100), sized(1, "t3", "w", 0, 100)}
	if r, err := s.AppendReplayChunks(ctx, batch, limits); err != nil || fmt.Sprint(r.ProductFull) != "[3]" {
		t.Errorf("four new sessions with room for three: refused %+v, %v; want [3]", r, err)
	}
	if got, _ := readReplay(t, s, 1, "s1", analytics.MaxReplayPageBytes); len(got) != 1 {
		t.Errorf("s1 recorded again reads %d chunks, want 1", len(got))
	}
}

// testReplayConcurrentSessionsCap starts 32 sessions of one chunk from 8
// goroutines at once, in a product whose cap is 10 and which holds 2
// already, each goroutine also adding a chunk to those two: exactly 8
// sessions start and 24 are refused, and every chunk of the two kept is
// stored. A call that fails (DuckDB refuses a conflicting transaction
// rather than waiting) is sent again, as ingest's client would.
func testReplayConcurrentSessionsCap(t *testing.T, s analytics.ReplayStore) {
	ctx := context.Background()
	const workers, each, max = 8, 4, 10
	limits := analytics.ReplayLimits{Sessions: max}
	appendReplay(t, s, sized(1, "kept-0", "w", 0, 100), sized(1, "kept-1", "w", 0, 100))
	var mu sync.Mutex
	refused := 0
	concurrently(workers, func(w int) {
		for i := 0; i < each; i++ {
			batch := []analytics.ReplayChunk{sized(1, fmt.Sprintf("new-%d-%d", w, i), "w", 0, 100),
				sized(1, fmt.Sprintf("kept-%d", i%2), fmt.Sprintf("w%d", w), i, 100)}
			r, err := appendAgain(ctx, s, batch, limits, 101)
			if err != nil {
				t.Errorf("batch %d of worker %d: %v", i, w, err)
				return
			}
			mu.Lock()
			refused += len(r.ProductFull)
			if len(r.SessionFull) > 0 || (len(r.ProductFull) > 0 && fmt.Sprint(r.ProductFull) != "[0]") {
				t.Errorf("batch %d of worker %d: refused %+v; only its new session's chunk may be", i, w, r)
			}
			mu.Unlock()
		}
	})
	list, err := s.ListReplaySessions(ctx, 1, analytics.ReplayFilter{})
	if err != nil || len(list) != max || refused != workers*each-(max-2) {
		t.Errorf("%d sessions kept, %v; %d refused; want %d kept, %d refused", len(list), err, refused, max, workers*each-(max-2))
	}
	for k := 0; k < 2; k++ {
		if got, err := s.ReplaySession(ctx, 1, fmt.Sprintf("kept-%d", k)); err != nil || got.Chunks != 1+workers*each/2 {
			t.Errorf("kept-%d: %+v, %v; want %d chunks", k, got, err, 1+workers*each/2)
		}
	}
}

// SeedReplaySessions fills replay_sessions as a database migrated up to
// migration 0023 holds it: product 1 keeps three sessions and has its row
// of replay_products (an append under the cap on sessions started one),
// product 2 keeps two and has none (its sessions were started without the
// cap). CheckReplaySessionsBackfill then checks, once the store is opened
// with every migration, that migration 0024 counted them.
func SeedReplaySessions(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO replay_sessions (product_id, session_id, bytes) VALUES (1, 'a', 600), (1, 'b', 600), (1, 'c', 600), (2, 'a', 600), (2, 'b', 600)`,
		`INSERT INTO replay_products (product_id) VALUES (1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// CheckReplaySessionsBackfill checks what SeedReplaySessions seeded once
// migration 0024 ran: each product's count, and the cap on sessions
// holding to it.
func CheckReplaySessionsBackfill(t *testing.T, db *sql.DB, s analytics.ReplayStore) {
	t.Helper()
	var got []string
	rows, err := db.Query(`SELECT product_id, sessions FROM replay_products ORDER BY product_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p, n int64
		if err := rows.Scan(&p, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%d", p, n))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[1:3 2:2]" {
		t.Errorf("products' counts of sessions after the migration: %v, want [1:3 2:2]", got)
	}
	limits := analytics.ReplayLimits{Sessions: 4}
	for _, c := range []struct {
		product int64
		want    string
	}{{1, "[1 2]"}, {2, "[2]"}} {
		batch := []analytics.ReplayChunk{sized(c.product, "new-1", "w", 0, 100), sized(c.product, "new-2", "w", 0, 100), sized(c.product, "new-3", "w", 0, 100)}
		r, err := s.AppendReplayChunks(context.Background(), batch, limits)
		if err != nil || fmt.Sprint(r.ProductFull) != c.want {
			t.Errorf("three new sessions of product %d under a cap of 4: refused %v, %v; want %s", c.product, r.ProductFull, err, c.want)
		}
	}
}
