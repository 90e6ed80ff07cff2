package duckdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"strata/internal/analytics"
)

// Deleting a person's events (docs/privacy.md, "Deleting a person"). A
// person leaves three things in the event tables: their events, their
// entry in the dense user ids (users: distinct_id → uid, denseids.go) and
// their kept visits (visits, by uid, visits.go). DeletePersons removes the
// three in one transaction while no append is between numbering its events
// and committing them: such an append could otherwise commit an event
// numbered with an entry the deletion just removed, whose uid a later
// restart could give to someone else. Appends wait for the deletion
// meanwhile (about 0.1 s for 100 persons over 10 M events,
// docs/benchmarks.md); the spool in front of the store keeps acknowledging
// ingest.

var _ analytics.PersonEventStore = (*Store)(nil)

// DeletePersons deletes the product's events of distinctIDs, their dense
// ids and their kept visits, and returns how many events it deleted.
func (s *Store) DeletePersons(ctx context.Context, productID int64, distinctIDs []string) (int64, error) {
	if len(distinctIDs) == 0 {
		return 0, nil
	}
	if err := s.pool.writable(); err != nil {
		return 0, err
	}
	// The kept counts of the product are dropped, and none kept until
	// the deletion has committed (counts.go).
	defer s.visits.counts.changing(productID)()
	if err := s.dictionaries(ctx); err != nil {
		return 0, err
	}
	// appends before numberMu: the order AppendEvents takes them in.
	s.visits.appends.Lock()
	defer s.visits.appends.Unlock()
	s.numberMu.Lock()
	defer s.numberMu.Unlock()

	var uids []uint32
	for _, id := range distinctIDs {
		if uid := s.userID(productID, id); uid != noUser {
			uids = append(uids, uid)
		}
	}
	if len(uids) == 0 {
		return 0, nil // never seen: no event, no entry, no visit
	}
	var list strings.Builder
	for i, u := range uids {
		if i > 0 {
			list.WriteString(", ")
		}
		list.WriteString(strconv.FormatUint(uint64(u), 10))
	}
	// The uids are numbers this store handed out, spliced as literals:
	// one statement text per list, no caller text in it.
	where := `product_id = $1 AND uid IN (` + list.String() + `)`

	// The kept visits a deleted event belonged to must not be read again
	// (visits.go, eventsChanged): marked before the commit, per
	// environment from the earliest event deleted.
	rows, err := s.db.QueryContext(ctx, `SELECT env, min(ts) FROM events WHERE `+where+` GROUP BY env`, productID)
	if err != nil {
		return 0, fmt.Errorf("deleting persons: %w", err)
	}
	type first struct {
		env analytics.Env
		ts  time.Time
	}
	var firsts []first
	for rows.Next() {
		var f first
		var env string
		if err := rows.Scan(&env, &f.ts); err != nil {
			rows.Close()
			return 0, fmt.Errorf("deleting persons: %w", err)
		}
		f.env = analytics.Env(env)
		firsts = append(firsts, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("deleting persons: %w", err)
	}
	for _, f := range firsts {
		s.eventsChanged(productID, f.env, f.ts.UTC())
	}

	// The transaction is not cut short by ctx: a commit that fails marks
	// the store broken (commit), and a stop waits for this one instead,
	// a fraction of a second.
	ctx = context.WithoutCancel(ctx)
	var deleted int64
	err = s.commit(func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE `+where, productID)
		if err != nil {
			return err
		}
		if deleted, err = res.RowsAffected(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM visits WHERE `+where, productID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+uidsTable+` WHERE `+where, productID); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return 0, fmt.Errorf("deleting persons: %w", err)
	}
	// The entries go from memory too: the person's next event, if any,
	// is a new user with a new uid. next is not lowered, so that no uid
	// is handed out twice while the store is open.
	s.dictMu.Lock()
	if n := s.uids.sets[productID]; n != nil {
		for _, id := range distinctIDs {
			delete(n.ids, id)
		}
	}
	s.dictMu.Unlock()
	return deleted, nil
}

// PersonEvents streams a person's events, oldest first.
func (s *Store) PersonEvents(ctx context.Context, productID int64, distinctID string, fn func(analytics.ExportedEvent) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT uuid, env, ts, received_at, event, distinct_id,
		coalesce(url, ''), coalesce(referrer, ''), coalesce(user_agent, ''), coalesce(browser, ''), coalesce(os, ''),
		coalesce(device_type, ''), coalesce(country, ''), coalesce(region, ''), coalesce(city, ''), properties
		FROM events WHERE product_id = $1 AND distinct_id = $2 ORDER BY ts, uuid`, productID, distinctID)
	if err != nil {
		return fmt.Errorf("exporting events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e analytics.ExportedEvent
		var u duckdb.UUID
		var props string
		if err := rows.Scan(&u, &e.Env, &e.Timestamp, &e.ReceivedAt, &e.Event, &e.DistinctID, &e.URL, &e.Referrer,
			&e.UserAgent, &e.Browser, &e.OS, &e.DeviceType, &e.Country, &e.Region, &e.City, &props); err != nil {
			return fmt.Errorf("exporting events: %w", err)
		}
		e.UUID = u.String()
		e.Timestamp, e.ReceivedAt = e.Timestamp.UTC(), e.ReceivedAt.UTC()
		e.Properties = []byte(props)
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("exporting events: %w", err)
	}
	return nil
}

var _ analytics.PersonHistoryStore = (*Store)(nil)

// EachPersonSeen streams each distinct id of the product's events with its
// first and last event's time; DuckDB holds the aggregation.
func (s *Store) EachPersonSeen(ctx context.Context, productID int64, fn func(distinctID string, first, last time.Time) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT distinct_id, min(ts), max(ts) FROM events
		WHERE product_id = $1 AND distinct_id <> '' GROUP BY distinct_id`, productID)
	if err != nil {
		return fmt.Errorf("reading persons' first and last events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var first, last time.Time
		if err := rows.Scan(&id, &first, &last); err != nil {
			return fmt.Errorf("reading persons' first and last events: %w", err)
		}
		if err := fn(id, first.UTC(), last.UTC()); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading persons' first and last events: %w", err)
	}
	return nil
}

// EachTraitEvent streams the product's $identify events and those whose
// properties hold "$set, oldest first.
func (s *Store) EachTraitEvent(ctx context.Context, productID int64, fn func(analytics.Event) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT ts, event, distinct_id, properties FROM events
		WHERE product_id = $1 AND distinct_id <> '' AND (event = '$identify' OR strpos(properties, '"$set') > 0)
		ORDER BY ts, uuid`, productID)
	if err != nil {
		return fmt.Errorf("reading events that set person properties: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e := analytics.Event{ProductID: productID}
		var props string
		if err := rows.Scan(&e.Timestamp, &e.Name, &e.DistinctID, &props); err != nil {
			return fmt.Errorf("reading events that set person properties: %w", err)
		}
		e.Timestamp, e.Properties = e.Timestamp.UTC(), []byte(props)
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading events that set person properties: %w", err)
	}
	return nil
}
