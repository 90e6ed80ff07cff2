package duckdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestWriteOutOfMemory fills DuckDB's buffer pool with reads that hold
// whole wide results (what the survey results did before they were paged:
// docs/security.md, "Reads never break writes") while events are appended,
// until an append fails. DuckDB cannot roll back a commit that ran out of
// memory, so the store is broken, as after a full disk; the failure must
// be recognisable as memory (OutOfMemory), which keeps ingest
// acknowledging into the spool while Recover reopens the file, and after
// Recover every event appended is stored exactly.
func TestWriteOutOfMemory(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{MemoryLimit: "96MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wide := `[` + strings.Repeat(`{"questionId":"q","value":"`+strings.Repeat("é", 2000)+`"},`, 9) + `{"questionId":"q","value":"x"}]`
	for range 1500 {
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO survey_responses (product_id, campaign_id, distinct_id, variant, answers, created_at)
			VALUES (1, 1, 'u', 'control', ?, now())`, wide); err != nil {
			t.Fatal(err)
		}
	}
	// The dense-id dictionaries are read before the pool fills: that read
	// running out of memory would be a read's failure, not a write's.
	first := roundTripEvents(10)
	for j := range first {
		first[j].UUID = uuid.New()
	}
	if err := s.AppendEvents(ctx, first); err != nil {
		t.Fatal(err)
	}
	stored := first
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 8 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				rows, err := s.DB().QueryContext(ctx, `SELECT answers FROM survey_responses WHERE product_id = 1 ORDER BY id`)
				if err == nil {
					for rows.Next() {
					}
					rows.Close()
				}
			}
		}()
	}
	var failed []analytics.Event
	var cause error
	for deadline := time.Now().Add(2 * time.Minute); failed == nil; {
		if time.Now().After(deadline) {
			close(stop)
			readers.Wait()
			t.Fatal("no append failed in two minutes of reads filling the buffer pool")
		}
		batch := roundTripEvents(2000)
		for j := range batch {
			batch[j].UUID = uuid.New()
			batch[j].DistinctID += uuid.NewString()[:8] // new users: the dictionary commits too
		}
		if cause = s.AppendEvents(ctx, batch); cause != nil {
			if s.Broken() == nil {
				continue // refused before it wrote (a full pool met by a read); the batch was not stored
			}
			failed = batch
			continue
		}
		stored = append(stored, batch...)
	}
	close(stop)
	readers.Wait()
	t.Logf("append failed after %d events: %v", len(stored), cause)
	broken := s.Broken()
	if broken == nil {
		t.Fatalf("the store is sound after %v; DuckDB cannot be trusted after a commit that failed", cause)
	}
	if !OutOfMemory(broken) || !OutOfMemory(cause) {
		t.Errorf("OutOfMemory(%v) = false; want the failure recognised as memory", broken)
	}
	if ok, err := s.Recover(ctx); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	if err := s.AppendEvents(ctx, failed); err != nil {
		t.Fatalf("appending the failed batch after Recover: %v", err)
	}
	stored = append(stored, failed...)
	got := storedEvents(t, s.DB())
	if len(got) != len(stored) {
		t.Errorf("%d events stored, want %d", len(got), len(stored))
	}
	for _, e := range stored {
		if got[uuid.UUID(e.UUID).String()] != wantStored(e) {
			t.Fatalf("event %s stored altered", uuid.UUID(e.UUID))
		}
	}
	if OutOfMemory(errors.New("IO Error: Could not write file: No space left on device")) {
		t.Error("a full disk taken for memory")
	}
}
