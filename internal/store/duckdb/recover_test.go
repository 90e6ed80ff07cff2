package duckdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/google/uuid"

	"strata/internal/analytics"
	"strata/internal/testdisk"
)

// TestAppendAfterFailedCommit fills the disk under appends until a commit
// fails, frees it, and appends again. DuckDB 1.5 rolls a failed commit back
// in memory but leaves the table's strings inconsistent, and the next
// append on the same instance stored rows whose strings ran many rows
// together (seen under a full-disk attack). The store must refuse work once
// a commit failed, reopen the file in Recover, and then store every event
// exactly as appended.
func TestAppendAfterFailedCommit(t *testing.T) {
	for _, c := range []struct {
		name, checkpoint string
	}{
		// The write-ahead log cannot grow: the commit fails and DuckDB
		// carries on with the failed commit rolled back.
		{"commit fails", "1GB"},
		// A checkpoint cannot write the file: DuckDB invalidates the
		// instance.
		{"checkpoint fails", "2MB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := testdisk.Mount(t, "size=60m")
			ctx := context.Background()
			s, err := Open(ctx, dir, Options{MemoryLimit: "256MB", CheckpointThreshold: c.checkpoint})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			filler := testdisk.Fill(t, dir, 8<<20)

			var stored, failed []analytics.Event
			for i := 0; failed == nil; i++ {
				if i == 100 {
					t.Fatal("100 batches stored on a nearly full disk")
				}
				batch := roundTripEvents(5000)
				for j := range batch {
					batch[j].UUID = uuid.New()
				}
				if err := s.AppendEvents(ctx, batch); err != nil {
					t.Logf("batch %d failed: %v", i, err)
					failed = batch
					continue
				}
				stored = append(stored, batch...)
			}

			// Broken: every operation is refused with storage_unavailable,
			// appends and queries alike, until the store is reopened.
			unavailable := func(what string, err error) {
				t.Helper()
				var e *analytics.Error
				if !errors.As(err, &e) || e.Code != "storage_unavailable" {
					t.Errorf("%s on a broken store: %v, want storage_unavailable", what, err)
				}
			}
			unavailable("Broken", s.Broken())
			unavailable("an append", s.AppendEvents(ctx, failed[:10]))
			var n int
			unavailable("a query", s.DB().QueryRow(`SELECT count(*) FROM events`).Scan(&n))

			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.Recover(ctx); !ok || err != nil {
				t.Fatalf("Recover after freeing the disk = %v, %v", ok, err)
			}
			if err := s.Broken(); err != nil {
				t.Fatalf("still broken after Recover: %v", err)
			}
			if err := s.AppendEvents(ctx, failed); err != nil {
				t.Fatalf("appending the failed batch again: %v", err)
			}
			stored = append(stored, failed...)
			more := roundTripEvents(3000)
			for j := range more {
				more[j].UUID = uuid.New()
			}
			if err := s.AppendEvents(ctx, more); err != nil {
				t.Fatal(err)
			}
			stored = append(stored, more...)

			got := storedEvents(t, s.DB())
			if len(got) != len(stored) {
				t.Errorf("%d events stored, want %d", len(got), len(stored))
			}
			bad := 0
			for _, e := range stored {
				id := uuid.UUID(e.UUID).String()
				if want := wantStored(e); got[id] != want {
					if bad++; bad <= 2 {
						g := got[id]
						if len(g) > 200 {
							g = g[:200] + "…"
						}
						t.Errorf("event %s stored as (%d bytes) %q\nwant %q", id, len(got[id]), g, want)
					}
				}
			}
			if bad > 0 {
				t.Fatalf("%d of %d events stored altered", bad, len(stored))
			}
		})
	}
}

// TestNeedsReopen checks which failures make the store reopen: those that
// leave DuckDB's memory suspect, not the ordinary answers of a sound one.
func TestNeedsReopen(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&duckdb.Error{Type: duckdb.ErrorTypeIO, Msg: "Could not write file"}, true},
		{&duckdb.Error{Type: duckdb.ErrorTypeFatal, Msg: "Failed to create checkpoint"}, true},
		{fmt.Errorf("committing: %w", &duckdb.Error{Type: duckdb.ErrorTypeTransaction, Msg: `Failed to commit: Could not write file "x.wal": No space left on device`}), true},
		{&duckdb.Error{Type: duckdb.ErrorTypeTransaction, Msg: `Failed to commit: PRIMARY KEY or UNIQUE constraint violation: duplicate key "1"`}, false},
		{&duckdb.Error{Type: duckdb.ErrorTypeTransaction, Msg: "Conflict on update!"}, false},
		{&duckdb.Error{Type: duckdb.ErrorTypeConstraint, Msg: "Duplicate key"}, false},
		{&duckdb.Error{Type: duckdb.ErrorTypeOutOfMemory, Msg: "could not allocate"}, false},
		{errors.New(`Failed to append: Failed to commit: Could not write file "x.wal": No space left on device`), true},
		{errors.New("Failed: database has been invalidated because of a previous fatal error"), true},
		{errors.New("no such table"), false},
	} {
		if got := needsReopen(c.err); got != c.want {
			t.Errorf("needsReopen(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
