package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"strata/internal/analytics"
)

// RunReplay runs the replay store's conformance test: the files of the
// embedded server (replayfs) and the table of the PostgreSQL metadata
// store (and of DuckDB's, which runs the same statements) pass the same
// cases. open must return an empty store and register its cleanup.
func RunReplay(t *testing.T, open func(t *testing.T) analytics.ReplayStore) {
	t.Run("Replay", func(t *testing.T) { testReplay(t, open(t)) })
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
	if err := s.AppendReplayChunks(ctx, a); err != nil {
		t.Fatal(err)
	}
	// A retry of a chunk with other content keeps the first.
	retry := replayChunk(1, "s-a", "w1", 1, "anon-1", base, 5)
	retry.Data = []byte("changed")
	if err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{retry}); err != nil {
		t.Fatalf("a retried chunk: %v", err)
	}
	// Out of order: chunk 2 of w1 arrives after w2's.
	late := replayChunk(1, "s-a", "w1", 2, "anon-1", base, 10)
	if err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{late}); err != nil {
		t.Fatal(err)
	}

	list, err := s.ListReplaySessions(ctx, 1, analytics.ReplayFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].SessionID != "s-b" || list[1].SessionID != "s-a" {
		t.Fatalf("sessions of product 1 = %+v, want s-b then s-a", list)
	}
	sa := list[1]
	wantBytes := int64(len(a[0].Data) + len(a[1].Data) + len(a[2].Data) + len(late.Data))
	if !sa.Start.Equal(base) || !sa.End.Equal(base.Add(25*time.Second)) || sa.DistinctID != "user-1" ||
		sa.Pages != 4 || sa.Clicks != 0+1+0+2 || sa.Errors != 1 || sa.Chunks != 4 || sa.Bytes != wantBytes ||
		!sa.LastReceived.Equal(base.Add(26*time.Second)) {
		t.Errorf("session s-a = %+v (want start %v, end +25s, user-1, 4 pages, 3 clicks, 1 error, 4 chunks, %d bytes)", sa, base, wantBytes)
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

	chunks, err := s.ReplayChunks(ctx, 1, "s-a")
	if err != nil {
		t.Fatal(err)
	}
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
	if other, err := s.ReplayChunks(ctx, 2, "s-a"); err != nil || len(other) != 1 || other[0].DistinctID != "other" {
		t.Errorf("product 2's s-a = %+v, %v", other, err)
	}
	if _, err := s.ReplayChunks(ctx, 3, "s-a"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a session of another product: %v, want ErrNotFound", err)
	}
	if _, err := s.ReplayChunks(ctx, 1, "nope"); !errors.Is(err, analytics.ErrNotFound) {
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
	if other, err := s.ReplayChunks(ctx, 2, "s-a"); err != nil || len(other) != 1 {
		t.Errorf("deleting product 1's s-a touched product 2's: %v, %v", other, err)
	}
	// A deleted session's id can be recorded again.
	if err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{a[0]}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReplayChunks(ctx, 1, "s-a"); err != nil || len(got) != 1 {
		t.Errorf("s-a recorded again: %d chunks, %v", len(got), err)
	}
}
