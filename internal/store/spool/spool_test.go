package spool

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
	"strata/internal/testdisk"
)

func events(n int, name string) []analytics.Event {
	now := time.Now().UTC().Truncate(time.Microsecond)
	out := make([]analytics.Event, n)
	for i := range out {
		out[i] = analytics.Event{UUID: uuid.New(), ProductID: 1, Env: analytics.EnvLive, Timestamp: now.Add(time.Duration(i) * time.Microsecond),
			ReceivedAt: now, Name: name, DistinctID: "ü-" + name, UserID: uint64(i), URL: "https://x/y", Path: "/y",
			IsBot: i%2 == 0, BotName: "GPTBot", Properties: []byte(`{"i":1,"s":"\u00e9"}`)}
	}
	return out
}

func openDuck(t *testing.T, dir string) *duckdb.Store {
	t.Helper()
	st, err := duckdb.Open(context.Background(), dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func count(t *testing.T, st *duckdb.Store, name string) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow(`SELECT count(*) FROM events WHERE event = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAppendSyncClose checks that Sync makes appended events visible and
// that Close loads everything and leaves no log behind.
func TestAppendSyncClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openDuck(t, dir)
	sp, err := Open(ctx, st, Options{Dir: filepath.Join(dir, "spool"), SegmentBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if err := sp.AppendEvents(ctx, events(50, "a")); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, st, "a"); n != 1000 {
		t.Errorf("after Sync %d events are stored, want 1000", n)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sp.AppendEvents(ctx, events(1, "late")); !errors.Is(err, ErrClosed) {
		t.Errorf("append after Close = %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "spool", "*.log")); len(left) != 0 {
		t.Errorf("segments left after Close: %v", left)
	}
}

// TestSyncCutsTheLingerShort checks that a query does not wait for the
// loader's linger: with a linger of an hour, Sync still returns once the
// few events appended before it are stored.
func TestSyncCutsTheLingerShort(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openDuck(t, dir)
	sp, err := Open(ctx, st, Options{Dir: filepath.Join(dir, "spool"), LoadLinger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	for round := 1; round <= 3; round++ {
		if err := sp.AppendEvents(ctx, events(3, "few")); err != nil {
			t.Fatal(err)
		}
		synced := make(chan error, 1)
		go func() { synced <- sp.Sync(ctx) }()
		select {
		case err := <-synced:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("round %d: Sync still waits after a minute: it waited for the linger", round)
		}
		if n := count(t, st, "few"); n != 3*round {
			t.Errorf("round %d: after Sync %d events are stored, want %d", round, n, 3*round)
		}
	}
}

// brokenStore stands in for a disk that fails, so that logged events stay
// unloaded, as they would be when the process dies before the loader runs.
type brokenStore struct{ Inner }

func (brokenStore) AppendEvents(context.Context, []analytics.Event) error {
	return errors.New("disk on fire")
}

// AppendMissing fails too: the loader retries with it.
func (brokenStore) AppendMissing(context.Context, []analytics.Event) error {
	return errors.New("disk on fire")
}
func (brokenStore) Close() error { return nil }

// TestReplayAfterCrash logs events that never reach the store, adds a torn
// record at the end of the log, and checks that the next Open stores every
// logged event exactly once, including those the store already had.
func TestReplayAfterCrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	spoolDir := filepath.Join(dir, "spool")
	st := openDuck(t, dir)

	already := events(30, "replay")
	if err := st.AppendEvents(ctx, already[:10]); err != nil { // loaded before the "crash"
		t.Fatal(err)
	}
	sp, err := Open(ctx, brokenStore{st}, Options{Dir: spoolDir})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.AppendEvents(ctx, already); err != nil {
		t.Fatal(err)
	}
	if err := sp.AppendEvents(ctx, events(5, "replay_b")); err != nil {
		t.Fatal(err)
	}
	end := sp.segSize
	if err := sp.Close(); err == nil {
		t.Error("Close reported success with unloaded events")
	}
	segs, _ := filepath.Glob(filepath.Join(spoolDir, "*.log"))
	if len(segs) != 1 {
		t.Fatalf("segments after a failed load: %v", segs)
	}
	// The segment was allocated ahead of its records (preallocate): what
	// follows them reads as zeros, which replay takes as the end.
	if fi, err := os.Stat(segs[0]); err != nil || fi.Size() <= end {
		t.Errorf("segment of %d bytes of records not preallocated: %v %v", end, fi.Size(), err)
	}
	// A torn record right after the last one: a header promising more
	// bytes than follow.
	f, _ := os.OpenFile(segs[0], os.O_WRONLY, 0)
	f.WriteAt([]byte{200, 0, 0, 0, 1, 2, 3, 4, 9, 9}, end)
	f.Close()

	sp2, err := Open(ctx, st, Options{Dir: spoolDir})
	if err != nil {
		t.Fatal(err)
	}
	defer sp2.Close()
	if n := count(t, st, "replay"); n != 30 {
		t.Errorf("replay stored %d events, want 30 (10 already there + 20)", n)
	}
	if n := count(t, st, "replay_b"); n != 5 {
		t.Errorf("replay_b = %d, want 5", n)
	}
	var isBot bool
	var did, props string
	if err := st.DB().QueryRow(`SELECT is_bot, distinct_id, properties FROM events WHERE uuid = $1`,
		uuid.UUID(already[12].UUID).String()).Scan(&isBot, &did, &props); err != nil {
		t.Fatal(err)
	}
	if !isBot || did != "ü-replay" || props != `{"i":1,"s":"\u00e9"}` {
		t.Errorf("replayed event altered: %v %q %q", isBot, did, props)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	in := events(3, "rt")
	in[1].Properties = []byte(`{}`)
	in[2].Env = analytics.EnvTest
	first := events(1, "already")
	out, err := decodeRecord(first, encodeRecord(nil, in)[8:])
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1+len(in) || out[0].UUID != first[0].UUID {
		t.Fatalf("decoding replaced what was there: %d events", len(out))
	}
	out = out[1:]
	for i := range in {
		a, b := in[i], out[i]
		if a.UUID != b.UUID || a.Name != b.Name || !a.Timestamp.Equal(b.Timestamp) || a.Env != b.Env ||
			string(a.Properties) != string(b.Properties) || a.IsBot != b.IsBot || a.UserID != b.UserID || a.URL != b.URL {
			t.Errorf("event %d: %+v != %+v", i, b, a)
		}
	}
	in[0].Source, in[0].Channel, in[0].UTMSource, in[0].UTMMedium, in[0].UTMCampaign = "Google", "paid", "google", "cpc", "spring"
	out, _ = decodeRecord(nil, encodeRecord(nil, in[:1])[8:])
	if b := out[0]; b.Source != "Google" || b.Channel != "paid" || b.UTMSource != "google" || b.UTMMedium != "cpc" || b.UTMCampaign != "spring" {
		t.Errorf("acquisition fields: %+v", b)
	}
	in[0].Country, in[0].Region, in[0].City, in[0].ScreenClass = "DE", "Bavaria", "Munich", "laptop"
	out, _ = decodeRecord(nil, encodeRecord(nil, in[:1])[8:])
	if b := out[0]; b.Country != "DE" || b.Region != "Bavaria" || b.City != "Munich" || b.ScreenClass != "laptop" || b.UTMCampaign != "spring" {
		t.Errorf("location and screen fields: %+v", b)
	}
	if _, err := decodeRecord(nil, []byte{5, 1, 2}); err == nil {
		t.Error("a truncated record decoded")
	}
	truncated := encodeRecord(nil, in)[8:]
	truncated = truncated[:len(truncated)-3]
	if out, err := decodeRecord(first, truncated); err == nil || len(out) != 1 {
		t.Errorf("a record cut in its last event: err %v, %d events (want the 1 there before)", err, len(out))
	}
}

// TestRecordWithoutLocation encodes an event with no location or screen
// class (one sent on a visitor's behalf) without the four strings: flag 4
// clear and four bytes shorter than with them, and it reads back empty.
func TestRecordWithoutLocation(t *testing.T) {
	e := events(1, "unlocated")[0]
	e.Source = "Google"
	bare := encodeEvent(nil, &e)
	flags := bare[16+len(binary.AppendVarint(nil, e.ProductID))+len(binary.AppendVarint(nil, e.Timestamp.UnixMicro()))+
		len(binary.AppendVarint(nil, e.ReceivedAt.UnixMicro()))+8]
	if flags&flagGeo != 0 {
		t.Errorf("flags %b: flag 4 set for an event without a location", flags)
	}
	located := e
	located.ScreenClass = "laptop"
	if n, m := len(bare), len(encodeEvent(nil, &located)); m != n+4+len("laptop") {
		t.Errorf("%d bytes without a location, %d with a screen class: want %d", n, m, n+4+len("laptop"))
	}
	out, err := decodeRecord(nil, encodeRecord(nil, []analytics.Event{e, located})[8:])
	if err != nil || len(out) != 2 {
		t.Fatalf("%v, %d events", err, len(out))
	}
	if a, b := out[0], out[1]; a.Source != "Google" || a.Country != "" || a.ScreenClass != "" || b.ScreenClass != "laptop" || b.Source != "Google" {
		t.Errorf("decoded %+v and %+v", a, b)
	}
}

// oldRecord is a one-event record as an earlier version wrote it: flags,
// then the first 13 strings of e and the extra ones that version had.
func oldRecord(e analytics.Event, flags byte, extra ...string) []byte {
	payload := binary.AppendUvarint(nil, 1)
	payload = append(payload, e.UUID[:]...)
	payload = binary.AppendVarint(payload, e.ProductID)
	payload = binary.AppendVarint(payload, e.Timestamp.UnixMicro())
	payload = binary.AppendVarint(payload, e.ReceivedAt.UnixMicro())
	payload = binary.LittleEndian.AppendUint64(payload, e.UserID)
	payload = append(payload, flags)
	strs := []string{string(e.Env), e.Name, e.DistinctID, e.URL, e.Path, e.Referrer,
		e.UserAgent, e.Browser, e.OS, e.DeviceType, e.BotName, e.BotCategory, string(e.Properties)}
	for _, s := range append(strs, extra...) {
		payload = binary.AppendUvarint(payload, uint64(len(s)))
		payload = append(payload, s...)
	}
	return payload
}

// TestRecordWithoutSources reads a record written before events had their
// acquisition fields (flag 2 clear, 13 strings), as a spool left by the
// previous version holds.
func TestRecordWithoutSources(t *testing.T) {
	e := events(1, "old")[0]
	out, err := decodeRecord(nil, oldRecord(e, flagBot))
	if err != nil || len(out) != 1 {
		t.Fatalf("%v, %d events", err, len(out))
	}
	if b := out[0]; b.UUID != e.UUID || b.Name != "old" || !b.IsBot || string(b.Properties) != string(e.Properties) || b.Source != "" || b.Channel != "" {
		t.Errorf("decoded %+v", b)
	}
}

// TestRecordWithoutGeo reads a record written before events had their
// location and screen class (flag 4 clear, 18 strings), as a spool left by
// the previous version holds.
func TestRecordWithoutGeo(t *testing.T) {
	e := events(1, "old")[0]
	out, err := decodeRecord(nil, oldRecord(e, flagSources, "Google", "search", "", "", ""))
	if err != nil || len(out) != 1 {
		t.Fatalf("%v, %d events", err, len(out))
	}
	if b := out[0]; b.UUID != e.UUID || b.Name != "old" || b.Source != "Google" || b.Channel != "search" || b.Country != "" || b.ScreenClass != "" {
		t.Errorf("decoded %+v", b)
	}
}

// gatedStore holds back the batches holding event name "slow" until
// release is closed, as a slow disk would; entered reports that one began.
type gatedStore struct {
	Inner
	entered chan struct{}
	release chan struct{}
}

func (g gatedStore) AppendEvents(ctx context.Context, evs []analytics.Event) error {
	if evs[0].Name == "slow" {
		g.entered <- struct{}{}
		<-g.release
	}
	return g.Inner.AppendEvents(ctx, evs)
}

// TestSyncWaitsForOlderBatches loads two batches at once, the older one
// slowly: the newer one, appended after Sync was called, lands first, and
// Sync must still wait for the older one, which it covers.
func TestSyncWaitsForOlderBatches(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openDuck(t, dir)
	g := gatedStore{Inner: st, entered: make(chan struct{}, 1), release: make(chan struct{})}
	sp, err := Open(ctx, g, Options{Dir: filepath.Join(dir, "spool"), Loaders: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(g.release) }) }
	defer release() // before Close, also when the test fails early
	if err := sp.AppendEvents(ctx, events(10, "slow")); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	synced := make(chan error, 1)
	go func() { synced <- sp.Sync(ctx) }()
	time.Sleep(50 * time.Millisecond) // let Sync take its target
	if err := sp.AppendEvents(ctx, events(10, "fast")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); count(t, st, "fast") != 10; {
		if time.Now().After(deadline) {
			t.Fatal("the second loader did not load the newer batch while the older one was held")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-synced:
		t.Fatalf("Sync returned (%v) while the batch it covers was still loading", err)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
	if n := count(t, st, "slow"); n != 10 {
		t.Errorf("after Sync %d slow events are stored, want 10", n)
	}
}

// TestAppendOnFullDisk fills the spool's filesystem, blocks and inodes
// alike, so that a write fails and so does starting a fresh segment after
// it; once space is back, appends work again without a restart, and
// exactly the events acknowledged are stored.
func TestAppendOnFullDisk(t *testing.T) {
	ctx := context.Background()
	mnt := testdisk.Mount(t, "size=4m,nr_inodes=64")
	dir := t.TempDir()
	st := openDuck(t, dir)
	sp, err := Open(ctx, st, Options{Dir: filepath.Join(mnt, "spool"), LoadLinger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}

	// One batch waits for the loader (which lingers), so its segment stays
	// when a failed write moves on to a fresh one.
	if err := sp.AppendEvents(ctx, events(500, "full")); err != nil {
		t.Fatal(err)
	}
	acked := 500

	// Fill the inodes, then the blocks.
	var fillers []string
	for i := 0; ; i++ {
		name := filepath.Join(mnt, fmt.Sprintf("filler-%d", i))
		f, err := os.Create(name)
		if err != nil {
			break
		}
		f.Close()
		fillers = append(fillers, name)
	}
	f, err := os.OpenFile(fillers[0], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(make([]byte, 64<<10)); err != nil {
			break
		}
	}
	f.Close()

	failures := 0
	for i := 0; i < 3; i++ {
		if err := sp.AppendEvents(ctx, events(500, "full")); err != nil {
			failures++
			continue
		}
		acked += 500
	}
	if failures != 3 {
		t.Fatalf("%d of 3 appends failed on a full disk; want all", failures)
	}
	if sp.seg != nil {
		t.Error("a segment is open although none could be started")
	}

	for _, name := range fillers {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if err := sp.AppendEvents(ctx, events(500, "full")); err != nil {
			t.Fatalf("append after space came back: %v", err)
		}
		acked += 500
	}
	if err := sp.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, st, "full"); n != acked {
		t.Errorf("%d events stored, %d acknowledged", n, acked)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGatePausesLoading checks the loaders' gate: while it refuses, events
// stay in the log, a Sync answers its error instead of waiting, and an
// append that finds the backlog full answers it too instead of blocking;
// once it allows, everything logged reaches the store.
func TestGatePausesLoading(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openDuck(t, dir)
	full := errors.New("disk nearly full")
	var mu sync.Mutex
	refuse := true
	sp, err := Open(ctx, st, Options{Dir: filepath.Join(dir, "spool"), MaxBacklog: 1000, Gate: func() error {
		mu.Lock()
		defer mu.Unlock()
		if refuse {
			return full
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	for i := 0; i < 2; i++ {
		if err := sp.AppendEvents(ctx, events(500, "gated")); err != nil {
			t.Fatalf("append %d within the backlog: %v", i, err)
		}
	}
	if err := sp.Sync(ctx); err != full {
		t.Errorf("Sync while the gate refuses = %v, want its error", err)
	}
	if err := sp.AppendEvents(ctx, events(1, "gated")); err != full {
		t.Errorf("append past the backlog while the gate refuses = %v, want its error", err)
	}
	if n := count(t, st, "gated"); n != 0 {
		t.Errorf("%d events loaded while the gate refused", n)
	}
	mu.Lock()
	refuse = false
	mu.Unlock()
	if err := sp.Sync(ctx); err != nil {
		t.Fatalf("Sync once the gate allows: %v", err)
	}
	if n := count(t, st, "gated"); n != 1000 {
		t.Errorf("%d events loaded once the gate allowed, want 1000", n)
	}
}

// syncBuffer is a log destination that tests read while loaders write it.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// TestRecordReadBackCorrupt damages a logged record before the loader reads
// it back from its segment: the loader must store nothing of it, say so,
// and keep trying, so that once the segment reads right again every event
// is stored once.
func TestRecordReadBackCorrupt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openDuck(t, dir)
	var logs syncBuffer
	sp, err := Open(ctx, st, Options{Dir: filepath.Join(dir, "spool"), LoadLinger: time.Hour,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if err := sp.AppendEvents(ctx, events(10, "bent")); err != nil {
		t.Fatal(err)
	}
	seg, _ := filepath.Glob(filepath.Join(dir, "spool", "segment-*.log"))
	if len(seg) != 1 {
		t.Fatalf("segments: %v", seg)
	}
	f, err := os.OpenFile(seg[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	const at = 40 // inside the first event's payload
	if _, err := f.ReadAt(b[:], at); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{b[0] ^ 0xff}, at); err != nil {
		t.Fatal(err)
	}

	synced := make(chan error, 1)
	go func() { synced <- sp.Sync(ctx) }()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(logs.String(), "reads back corrupt") {
		if time.Now().After(deadline) {
			t.Fatalf("no loader said the record is corrupt; log:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-synced:
		t.Fatalf("Sync returned (%v) while the record cannot be read", err)
	default:
	}
	if n := count(t, st, "bent"); n != 0 {
		t.Fatalf("%d events of the corrupt record were stored", n)
	}

	if _, err := f.WriteAt(b[:], at); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-synced:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Sync still waits a minute after the segment was repaired")
	}
	if n := count(t, st, "bent"); n != 10 {
		t.Errorf("after the repair %d events are stored, want 10", n)
	}
}

// unclosed is a store that the spool's Close leaves open, for the test to
// read and close.
type unclosed struct{ Inner }

func (unclosed) Close() error { return nil }

// crashLog logs events of the given name through a spool whose store
// fails, as a process killed before its loaders ran would leave them, and
// returns them.
func crashLog(t *testing.T, st *duckdb.Store, dir, name string, n int) []analytics.Event {
	t.Helper()
	sp, err := Open(context.Background(), brokenStore{st}, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	logged := events(n, name)
	if err := sp.AppendEvents(context.Background(), logged); err != nil {
		t.Fatal(err)
	}
	if err := sp.Close(); err == nil {
		t.Fatal("Close reported success with unloaded events")
	}
	return logged
}

// TestReplayWaitsForRoom opens a spool over a log left by a crash while
// the gate refuses (the disk is full): Open succeeds without writing the
// store, Sync does not wait for the left events (queries read what is
// stored), RecentUUIDs lists them (a retry across the restart is
// deduplicated), and a Close meanwhile keeps them for the next start. Once
// the gate allows, they are replayed in the background and each event is
// stored once.
func TestReplayWaitsForRoom(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	spoolDir := filepath.Join(dir, "spool")
	st := openDuck(t, dir)
	defer st.Close()
	left := crashLog(t, st, spoolDir, "left", 300)
	if err := st.AppendEvents(ctx, left[:100]); err != nil { // loaded before the "crash"
		t.Fatal(err)
	}

	full := errors.New("disk nearly full")
	var mu sync.Mutex
	refuse := true
	gate := func() error {
		mu.Lock()
		defer mu.Unlock()
		if refuse {
			return full
		}
		return nil
	}
	for round := 1; round <= 2; round++ {
		sp, err := Open(ctx, brokenStore{st}, Options{Dir: spoolDir, Gate: gate})
		if err != nil {
			t.Fatalf("round %d: Open on a full disk: %v", round, err)
		}
		if err := sp.Sync(ctx); err != nil {
			t.Errorf("round %d: Sync with only left events waiting: %v; want nil at once", round, err)
		}
		listed := map[[16]byte]bool{}
		if err := sp.RecentUUIDs(ctx, time.Now().Add(-time.Hour), 1000, func(_ int64, u [16]byte) error {
			listed[u] = true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, e := range left {
			if !listed[e.UUID] {
				t.Fatalf("round %d: RecentUUIDs leaves out a left event", round)
			}
		}
		if err := sp.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
		if n := count(t, st, "left"); n != 100 {
			t.Fatalf("round %d: %d events stored while the gate refused; want the 100 loaded before", round, n)
		}
		if segs, _ := filepath.Glob(filepath.Join(spoolDir, "*.log")); len(segs) == 0 {
			t.Fatalf("round %d: the left log is gone", round)
		}
	}

	sp, err := Open(ctx, unclosed{st}, Options{Dir: spoolDir, Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if err := sp.AppendEvents(ctx, events(50, "new")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	refuse = false
	mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for count(t, st, "left") != 300 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 300 left events stored 30 s after the gate allowed", count(t, st, "left"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := sp.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, st, "new"); n != 50 {
		t.Errorf("%d new events stored, want 50", n)
	}
	var dup int
	st.DB().QueryRow(`SELECT count(*) - count(DISTINCT uuid) FROM events`).Scan(&dup)
	if dup != 0 {
		t.Errorf("%d events stored twice", dup)
	}
}

// TestOpenOnFullDisk opens a spool whose filesystem has no inode free and
// a log left by a crash: Open succeeds, though it can neither replay (the
// gate refuses) nor start a segment; appends fail while the disk is full,
// and once files are deleted they succeed, the left log is replayed, and
// every event logged is stored once.
func TestOpenOnFullDisk(t *testing.T) {
	ctx := context.Background()
	mnt := testdisk.Mount(t, "size=8m,nr_inodes=32")
	spoolDir := filepath.Join(mnt, "spool")
	dir := t.TempDir()
	st := openDuck(t, dir)
	defer st.Close()
	left := crashLog(t, st, spoolDir, "left", 200)
	fillers := testdisk.FillInodes(t, mnt, 0)
	// The server's floor: no free inode, no write.
	gate := func() error {
		if testdisk.FreeInodes(t, mnt) == 0 {
			return errors.New("no inode free")
		}
		return nil
	}
	sp, err := Open(ctx, unclosed{st}, Options{Dir: spoolDir, Gate: gate})
	if err != nil {
		t.Fatalf("Open with no inode free: %v", err)
	}
	defer sp.Close()
	if err := sp.AppendEvents(ctx, events(10, "new")); err == nil {
		t.Error("an append succeeded with no inode free for its segment")
	}
	if n := count(t, st, "left"); n != 0 {
		t.Errorf("%d left events stored with no inode free", n)
	}
	for _, f := range fillers {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.AppendEvents(ctx, events(10, "new")); err != nil {
		t.Fatalf("append once inodes were freed: %v", err)
	}
	if err := sp.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for count(t, st, "left") != len(left) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d left events stored 30 s after inodes were freed", count(t, st, "left"), len(left))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := count(t, st, "new"); n != 10 {
		t.Errorf("%d new events stored, want 10", n)
	}
}

// fillingStore is a store on a disk that fills as a load begins: its first
// append crosses the floor, and below it the store refuses every write, as
// the DuckDB store does.
type fillingStore struct {
	Inner
	fill func()
	gate func() error
	once sync.Once
	// missing counts the calls of AppendMissing, the retry's slow path.
	missing atomic.Int64
}

func (f *fillingStore) AppendEvents(ctx context.Context, events []analytics.Event) error {
	f.once.Do(f.fill)
	if err := f.gate(); err != nil {
		return err
	}
	return f.Inner.AppendEvents(ctx, events)
}

func (f *fillingStore) AppendMissing(ctx context.Context, events []analytics.Event) error {
	f.missing.Add(1)
	if err := f.gate(); err != nil {
		return err
	}
	return f.Inner.AppendMissing(ctx, events)
}

// TestDiskFillsDuringLoad crosses the floor after a loader passed the gate
// with a batch: the store refuses the batch, and a Sync must answer the
// refusal rather than wait for room; once there is room the batch is
// stored, once, by a plain append: a refusal for lack of room
// (storage_full) comes before anything is written, so the retry need not
// skip events already stored.
func TestDiskFillsDuringLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openDuck(t, dir)
	full := analytics.Errorf(analytics.KindUnavailable, analytics.CodeStorageFull, "disk nearly full")
	var mu sync.Mutex
	refuse := false
	setRefuse := func(v bool) { mu.Lock(); refuse = v; mu.Unlock() }
	gate := func() error {
		mu.Lock()
		defer mu.Unlock()
		if refuse {
			return full
		}
		return nil
	}
	inner := &fillingStore{Inner: st, fill: func() { setRefuse(true) }, gate: gate}
	sp, err := Open(ctx, inner, Options{Dir: filepath.Join(dir, "spool"), Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if err := sp.AppendEvents(ctx, events(100, "filling")); err != nil {
		t.Fatal(err)
	}
	synced := make(chan error, 1)
	go func() { synced <- sp.Sync(ctx) }()
	select {
	case err := <-synced:
		if err != full {
			t.Fatalf("Sync once the disk filled under a load = %v, want the gate's refusal", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Sync still waits 10 s after the disk filled under a load")
	}
	setRefuse(false)
	if err := sp.Sync(ctx); err != nil {
		t.Fatalf("Sync once there is room: %v", err)
	}
	if n := count(t, st, "filling"); n != 100 {
		t.Errorf("%d events stored, want 100", n)
	}
	if n := inner.missing.Load(); n != 0 {
		t.Errorf("the batch refused for lack of room was retried %d times through AppendMissing, want the plain append", n)
	}
}

// BenchmarkRecord encodes and decodes a 500-event record of events
// without a location or screen class, as strata-bench sends them.
func BenchmarkRecord(b *testing.B) {
	in := events(500, "$pageview")
	var buf []byte
	var out []analytics.Event
	for b.Loop() {
		buf = encodeRecord(buf[:0], in)
		var err error
		if out, err = decodeRecord(out[:0], buf[8:]); err != nil || len(out) != len(in) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(buf))/float64(len(in)), "bytes/event")
}
