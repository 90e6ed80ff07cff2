package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
	"strata/internal/store/migrate"
)

func userEvent(product int64, distinctID string, at time.Time) analytics.Event {
	return analytics.Event{UUID: uuid.New(), ProductID: product, Env: analytics.EnvLive, Timestamp: at, ReceivedAt: at,
		Name: "e", DistinctID: distinctID, Properties: []byte("{}")}
}

// uidsOf returns each distinct_id's uid as stored on its events, failing if
// one distinct_id has two.
func uidsOf(t *testing.T, db *sql.DB, product int64) map[string]uint32 {
	t.Helper()
	rows, err := db.Query(`SELECT DISTINCT distinct_id, uid FROM events WHERE product_id = $1`, product)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]uint32{}
	for rows.Next() {
		var did string
		var uid uint32
		rows.Scan(&did, &uid)
		if _, dup := out[did]; dup {
			t.Fatalf("%s has two uids", did)
		}
		out[did] = uid
	}
	return out
}

// TestDenseUserIDs checks that each product numbers its users 0, 1, 2, …
// in order of first appearance, and that the numbering survives a reopen.
func TestDenseUserIDs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	err = s.AppendEvents(ctx, []analytics.Event{
		userEvent(1, "ann", now), userEvent(1, "bob", now), userEvent(2, "zed", now), userEvent(1, "ann", now),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := uidsOf(t, s.DB(), 1); got["ann"] != 0 || got["bob"] != 1 || len(got) != 2 {
		t.Errorf("product 1 uids = %v", got)
	}
	if got := uidsOf(t, s.DB(), 2); got["zed"] != 0 {
		t.Errorf("product 2 uids = %v", got)
	}
	s.Close()

	s, err = Open(ctx, dir, Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AppendEvents(ctx, []analytics.Event{userEvent(1, "cat", now), userEvent(1, "bob", now)}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendMissing(ctx, []analytics.Event{userEvent(1, "dan", now), userEvent(2, "zed", now)}); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint32{"ann": 0, "bob": 1, "cat": 2, "dan": 3}
	got := uidsOf(t, s.DB(), 1)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("after reopen, product 1 uids = %v, want %v", got, want)
			break
		}
	}
	if n := s.userCount(1); n != 4 {
		t.Errorf("userCount = %d, want 4", n)
	}
	if err := s.AppendEvents(ctx, []analytics.Event{func() analytics.Event {
		e := userEvent(2, "zed", now)
		e.Name = "second"
		return e
	}()}); err != nil {
		t.Fatal(err)
	}
	if e, second := s.eventID("e"), s.eventID("second"); e != 0 || second != 1 || s.eventID("never") != noEvent {
		t.Errorf("event ids: e=%d second=%d", e, second)
	}
	var bad int
	s.DB().QueryRow(`SELECT count(*) FROM events e JOIN event_names n ON n.name = e.event WHERE n.eid <> e.eid`).Scan(&bad)
	if bad != 0 {
		t.Errorf("%d events carry another eid than their name's", bad)
	}
}

// TestDenseUserIDMigration applies migrations 0004 and 0005 to a database
// that holds events from before them and checks that they are numbered.
func TestDenseUserIDMigration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Apply(ctx, db, all[:3], time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`INSERT INTO events (uuid, product_id, env, ts, received_at, event, distinct_id, user_id, is_bot, properties)
		VALUES (uuid(), 1, 'live', TIMESTAMP '2026-01-02', now(), 'e', 'late', 1, false, '{}'),
		       (uuid(), 1, 'live', TIMESTAMP '2026-01-01', now(), 'e', 'early', 2, false, '{}'),
		       (uuid(), 1, 'live', TIMESTAMP '2026-01-03', now(), 'e', 'early', 2, false, '{}'),
		       (uuid(), 3, 'live', TIMESTAMP '2026-01-05', now(), 'e', 'other', 3, false, '{}')`)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, dir, Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := uidsOf(t, s.DB(), 1); got["early"] != 0 || got["late"] != 1 {
		t.Errorf("backfilled uids = %v, want early 0, late 1", got)
	}
	if got := uidsOf(t, s.DB(), 3); got["other"] != 0 {
		t.Errorf("product 3 uids = %v", got)
	}
	var names int
	s.DB().QueryRow(`SELECT count(*) FROM events e JOIN event_names n ON n.name = e.event AND n.eid = e.eid`).Scan(&names)
	if names != 4 {
		t.Errorf("backfilled event ids: %d of 4 events match", names)
	}
	if err := s.AppendEvents(ctx, []analytics.Event{userEvent(1, "new", time.Now())}); err != nil {
		t.Fatal(err)
	}
	if s.eventID("e") != 0 {
		t.Errorf("the backfilled name e has id %d, want 0", s.eventID("e"))
	}
	if got := uidsOf(t, s.DB(), 1); got["new"] != 2 {
		t.Errorf("a user after the migration got uid %d, want 2", got["new"])
	}
}

// TestConcurrentAppends appends from several goroutines at once, through
// the store's parallel appenders, batches whose users and event names
// overlap and are often new: every event must be stored, each user and
// name numbered once and densely, and the numbering tables must agree
// with the events.
func TestConcurrentAppends(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{MemoryLimit: "256MB", Threads: 2, Appenders: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC().Truncate(time.Microsecond)
	const workers, batches, per = 4, 15, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for b := range batches {
				evs := make([]analytics.Event, per)
				for i := range evs {
					// Users 0..(b+1)*100 grow with each round, so most batches
					// bring new users that other goroutines also bring.
					evs[i] = userEvent(1, fmt.Sprintf("u%d", (i*7+w*13)%((b+1)*100)), now)
					evs[i].Name = fmt.Sprintf("name%d", (i+w+b)%(b+3))
				}
				if err := s.AppendEvents(ctx, evs); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var n int
	if err := s.DB().QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != workers*batches*per {
		t.Fatalf("%d events stored, want %d", n, workers*batches*per)
	}
	uids := uidsOf(t, s.DB(), 1)
	seen := map[uint32]bool{}
	for did, uid := range uids {
		if seen[uid] {
			t.Errorf("uid %d given twice (again to %s)", uid, did)
		}
		seen[uid] = true
		if int(uid) >= len(uids) {
			t.Errorf("uid %d of %s is not dense (%d users)", uid, did, len(uids))
		}
	}
	for _, check := range []string{
		`SELECT count(*) FROM events e LEFT JOIN users u ON u.product_id = e.product_id AND u.uid = e.uid
		 WHERE u.distinct_id IS DISTINCT FROM e.distinct_id`,
		`SELECT count(*) FROM events e LEFT JOIN event_names n ON n.eid = e.eid WHERE n.name IS DISTINCT FROM e.event`,
		`SELECT count(*) - count(DISTINCT eid) FROM event_names`,
	} {
		if err := s.DB().QueryRow(check).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d rows disagree: %s", n, check)
		}
	}
}
