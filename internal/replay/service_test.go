package replay

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
	"strata/internal/store/replayfs"
)

// openStore opens the embedded replay store in a fresh directory, closed
// when the test ends.
func openStore(t *testing.T) *replayfs.Store {
	t.Helper()
	st, err := replayfs.Open(filepath.Join(t.TempDir(), "replay"), replayfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// chunkEvent is a $snapshot event at index of its batch, carrying a chunk
// of size bytes of the session sid.
func chunkEvent(index int, sid string, chunk, size int) ingest.Pending {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	return ingest.Pending{Index: index, Chunk: &analytics.ReplayChunk{ProductID: 1, SessionID: sid, WindowID: "w",
		Index: chunk, DistinctID: "u-" + sid, FirstTS: at, LastTS: at, Encoding: analytics.ReplayJSON,
		Data: make([]byte, size), ReceivedAt: at}}
}

// plainEvent is an event that is not a chunk, at index of its batch.
func plainEvent(index int) ingest.Pending {
	return ingest.Pending{Index: index, Event: analytics.Event{Name: "$pageview"}}
}

// TestStoreChunks checks the ingest rules: the chunks of a batch are
// stored and taken out of it, the other events come back in order for the
// writer, and a chunk past its session's byte cap or starting a session
// past the product's cap is refused with its event's index and code,
// without holding back the rest.
func TestStoreChunks(t *testing.T) {
	st := openStore(t)
	// A session may take one chunk of 60 bytes and one of 10, as the
	// caps count them (with each chunk's overhead), not two of 60.
	limit := analytics.ReplayChunkCharge(60) + analytics.ReplayChunkCharge(10)
	s := &Service{Store: st, Limits: analytics.ReplayLimits{SessionBytes: limit, Sessions: 2}}
	batch := []ingest.Pending{
		plainEvent(0),
		chunkEvent(1, "s1", 0, 60),
		chunkEvent(2, "s2", 0, 10),
		plainEvent(3),
		chunkEvent(4, "s1", 1, 60), // s1 past its cap
		chunkEvent(5, "s3", 0, 10), // a third session
		plainEvent(6),
	}
	events, refused, err := s.StoreChunks(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, e := range events {
		got = append(got, e.Index)
	}
	if len(got) != 3 || got[0] != 0 || got[1] != 3 || got[2] != 6 {
		t.Errorf("events for the writer: %v; want 0 3 6", got)
	}
	if len(refused) != 2 || refused[0].Index != 4 || refused[0].Code != ingest.RejectReplaySessionFull ||
		refused[1].Index != 5 || refused[1].Code != ingest.RejectReplayQuotaFull {
		t.Fatalf("refused %+v; want 4 %s, 5 %s", refused, ingest.RejectReplaySessionFull, ingest.RejectReplayQuotaFull)
	}
	list, err := st.ListReplaySessions(context.Background(), 1, analytics.ReplayFilter{})
	if err != nil {
		t.Fatal(err)
	}
	bytes := map[string]int64{}
	for _, x := range list {
		bytes[x.SessionID] = x.Bytes
	}
	if len(bytes) != 2 || bytes["s1"] != analytics.ReplayChunkCharge(60) || bytes["s2"] != analytics.ReplayChunkCharge(10) {
		t.Errorf("stored sessions %v; want s1 of one 60-byte chunk and s2 of one 10-byte chunk", bytes)
	}
}

// TestStoreChunksWithoutChunks checks that a batch without a chunk, the
// common one on the hot path, comes back as it is, without a copy and
// without an allocation, and without asking the disk.
func TestStoreChunksWithoutChunks(t *testing.T) {
	s := &Service{Store: openStore(t), Admit: func() error { return errors.New("asked") }}
	batch := []ingest.Pending{plainEvent(0), plainEvent(1)}
	events, refused, err := s.StoreChunks(context.Background(), batch)
	if err != nil || refused != nil || len(events) != 2 || &events[0] != &batch[0] {
		t.Fatalf("StoreChunks: %d events (same array: %v), refused %v, err %v; want the batch itself",
			len(events), len(events) > 0 && &events[0] == &batch[0], refused, err)
	}
	if n := testing.AllocsPerRun(100, func() { s.StoreChunks(context.Background(), batch) }); n != 0 {
		t.Errorf("%v allocations a batch without a chunk; want 0", n)
	}
}

// TestStoreChunksAdmission checks that a disk without room refuses the
// whole batch with the admission's error, and stores nothing.
func TestStoreChunksAdmission(t *testing.T) {
	st := openStore(t)
	full := analytics.Errorf(analytics.KindUnavailable, "disk_full", "full")
	s := &Service{Store: st, Admit: func() error { return full }}
	_, _, err := s.StoreChunks(context.Background(), []ingest.Pending{plainEvent(0), chunkEvent(1, "s1", 0, 10)})
	if !errors.Is(err, full) {
		t.Errorf("err %v; want the admission's", err)
	}
	if list, err := st.ListReplaySessions(context.Background(), 1, analytics.ReplayFilter{}); err != nil || len(list) != 0 {
		t.Errorf("stored %v, %v; want nothing", list, err)
	}
}

// TestRefuseChunks checks that a server without replay refuses each chunk
// with its event's index, and keeps the other events in order.
func TestRefuseChunks(t *testing.T) {
	batch := []ingest.Pending{plainEvent(0), chunkEvent(1, "s1", 0, 10), plainEvent(2)}
	kept, rejected := RefuseChunks(batch, []ingest.Rejection{{Index: 5, Code: "other"}})
	if len(kept) != 2 || kept[0].Index != 0 || kept[1].Index != 2 {
		t.Errorf("kept %+v; want events 0 and 2", kept)
	}
	if len(rejected) != 2 || rejected[0].Index != 5 || rejected[1].Index != 1 || rejected[1].Code != ingest.RejectInvalidSnapshot {
		t.Errorf("rejected %+v; want the earlier one, then 1 %s", rejected, ingest.RejectInvalidSnapshot)
	}
}

// TestDelete checks that deleting a session removes it and only it, and
// that an unknown or malformed id, or another product's session, is
// ErrNotFound.
func TestDelete(t *testing.T) {
	st := openStore(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	record(t, st, 1, "s1", at, 10)
	record(t, st, 1, "s2", at, 10)
	record(t, st, 2, "s3", at, 10)
	s := &Service{Store: st}
	ctx := context.Background()
	for _, id := range []string{"nope", "bad id/..", "s3"} {
		if err := s.Delete(ctx, 1, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Delete(%q): %v; want ErrNotFound", id, err)
		}
	}
	if err := s.Delete(ctx, 1, "s1"); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, st, 1); got != "[s2]" {
		t.Errorf("product 1 keeps %q; want s2", got)
	}
	if got := ids(t, st, 2); got != "[s3]" {
		t.Errorf("product 2 keeps %q; want s3", got)
	}
	if err := s.Delete(ctx, 1, "s1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete of a deleted session: %v; want ErrNotFound", err)
	}
}

// TestDeleteUser checks that a privacy request deletes every session of
// the user in the product, and no other, and says how many; that a user
// without a session deletes none; and that the user is required.
func TestDeleteUser(t *testing.T) {
	st := openStore(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := &Service{Store: st}
	ctx := context.Background()
	for _, c := range []struct {
		product int64
		sid     string
		user    string
	}{{1, "a1", "alice"}, {1, "a2", "alice"}, {1, "b1", "bob"}, {2, "a3", "alice"}} {
		_, err := st.AppendReplayChunks(ctx, []analytics.ReplayChunk{{ProductID: c.product, SessionID: c.sid, WindowID: "w",
			DistinctID: c.user, FirstTS: at, LastTS: at, Encoding: analytics.ReplayJSON, Data: []byte("[]"), ReceivedAt: at}}, analytics.ReplayLimits{})
		if err != nil {
			t.Fatal(err)
		}
	}
	var invalid *analytics.Error
	if _, err := s.DeleteUser(ctx, 1, ""); !errors.As(err, &invalid) || invalid.Kind != analytics.KindInvalid || invalid.Code != "invalid_request" {
		t.Errorf("DeleteUser without a user: %v; want invalid_request", err)
	}
	n, err := s.DeleteUser(ctx, 1, "alice")
	if err != nil || n != 2 {
		t.Fatalf("DeleteUser(alice): %d, %v; want 2", n, err)
	}
	if got := ids(t, st, 1); got != "[b1]" {
		t.Errorf("product 1 keeps %q; want b1", got)
	}
	if got := ids(t, st, 2); got != "[a3]" {
		t.Errorf("product 2 keeps %q; want a3", got)
	}
	if n, err := s.DeleteUser(ctx, 1, "carol"); err != nil || n != 0 {
		t.Errorf("DeleteUser(carol): %d, %v; want 0", n, err)
	}
}

// TestPage checks the read the API pages a session with: the summary and
// the chunks after the cursor; another product's session, a session never
// recorded and an id that is not one are ErrNotFound.
func TestPage(t *testing.T) {
	st := openStore(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := &Service{Store: st}
	ctx := context.Background()
	var chunks []analytics.ReplayChunk
	for i := range 3 {
		chunks = append(chunks, analytics.ReplayChunk{ProductID: 1, SessionID: "s1", WindowID: "w", Index: i,
			DistinctID: "alice", FirstTS: at, LastTS: at, Encoding: analytics.ReplayJSON, Data: []byte("[]"), ReceivedAt: at})
	}
	if _, err := st.AppendReplayChunks(ctx, chunks, analytics.ReplayLimits{}); err != nil {
		t.Fatal(err)
	}
	session, page, more, err := s.Page(ctx, 1, "s1", analytics.ReplayCursor{WindowID: "w", Index: 0})
	if err != nil || session.SessionID != "s1" || len(page) != 2 || page[0].Index != 1 || page[1].Index != 2 || more {
		t.Errorf("Page after chunk 0: %+v %+v %v %v", session, page, more, err)
	}
	for _, c := range []struct {
		product int64
		id      string
	}{{2, "s1"}, {1, "s2"}, {1, "not an id!"}} {
		if _, page, _, err := s.Page(ctx, c.product, c.id, analytics.ReplayCursor{}); !errors.Is(err, ErrNotFound) || page != nil {
			t.Errorf("Page(%d, %q): %v %v; want ErrNotFound", c.product, c.id, page, err)
		}
	}
	if list, err := s.List(ctx, 2, analytics.ReplayFilter{}); err != nil || len(list) != 0 {
		t.Errorf("List of another product: %+v %v", list, err)
	}
}
