package duckdb

import (
	"context"
	"fmt"
	"strings"

	"strata/internal/analytics"
)

// Dense ids (migrations 0004 and 0005): each product numbers its users, and
// the database numbers event names, 0, 1, 2, … in order of first
// appearance. Events carry both numbers (uid, eid). The mappings live in
// memory and in two tables; new entries are committed before the events
// that use them, so no stored event has a number its table lacks (a crash
// between the two leaves an unused number, which is harmless).

// numbering gives strings dense ids.
type numbering struct {
	ids  map[string]uint32
	next uint32
}

func (n *numbering) set(key string, id uint32) {
	n.ids[key] = id
	n.next = max(n.next, id+1)
}

// dictionary is one persisted numbering table: the dense user ids (per
// product) or event_names (one for the database, product 0).
type dictionary struct {
	sets map[int64]*numbering
	app  tableAppender // on the table below
}

// The tables of the two numberings. The user ids' table is named users,
// since migration 0004; it holds only distinct_id → uid, nothing of the
// dashboard's users (the dashboard_users table), and is not renamed, so
// that existing data files need no migration.
const (
	uidsTable       = "users"
	eventNamesTable = "event_names"
)

func (d *dictionary) of(product int64) *numbering {
	n := d.sets[product]
	if n == nil {
		n = &numbering{ids: map[string]uint32{}}
		d.sets[product] = n
	}
	return n
}

// entry is a string numbered by the current append and not yet stored.
type entry struct {
	dict    *dictionary
	product int64
	key     string
	id      uint32
}

// dictionaries reads both numbering tables into memory the first time
// events are appended or queried, so that management commands, which open
// the store for a moment, never pay for it. A failed load is retried on the
// next call.
func (s *Store) dictionaries(ctx context.Context) error {
	s.dictLoad.Lock()
	defer s.dictLoad.Unlock()
	if s.uids != nil {
		return nil
	}
	users, names, err := s.loadDictionaries(ctx)
	if err != nil {
		return err
	}
	s.dictMu.Lock()
	s.uids, s.names = users, names
	s.dictMu.Unlock()
	return nil
}

// loadDictionaries reads both numbering tables.
func (s *Store) loadDictionaries(ctx context.Context) (uids, names *dictionary, err error) {
	uids = &dictionary{app: tableAppender{table: uidsTable}, sets: map[int64]*numbering{}}
	names = &dictionary{app: tableAppender{table: eventNamesTable}, sets: map[int64]*numbering{}}
	err = queryEach(ctx, s, `SELECT product_id, distinct_id, uid FROM users`, func(product int64, key string, id uint32) {
		uids.of(product).set(key, id)
	})
	if err == nil {
		err = queryEach(ctx, s, `SELECT 0, name, eid FROM event_names`, func(_ int64, key string, id uint32) {
			names.of(0).set(key, id)
		})
	}
	return uids, names, err
}

func queryEach(ctx context.Context, s *Store, query string, fn func(int64, string, uint32)) error {
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("loading dense ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var product int64
		var key string
		var id uint32
		if err := rows.Scan(&product, &key, &id); err != nil {
			return fmt.Errorf("loading dense ids: %w", err)
		}
		fn(product, key, id)
	}
	return rows.Err()
}

// denseIDs are the numbers of a slice of events, parallel to it.
type denseIDs struct {
	uid, eid []uint32
}

// number returns the dense ids of every event, numbering unseen users and
// names. The caller holds numberMu and must store the returned entries
// (storeEntries) before the events, or forget them (forgetEntries).
func (s *Store) number(events []analytics.Event) (denseIDs, []entry) {
	ids := denseIDs{uid: make([]uint32, len(events)), eid: make([]uint32, len(events))}
	var fresh []entry
	s.dictMu.Lock()
	defer s.dictMu.Unlock()
	get := func(d *dictionary, product int64, key string) uint32 {
		n := d.of(product)
		id, ok := n.ids[key]
		if !ok {
			// The key may point into a larger buffer (the spool decodes
			// without copying); the dictionary keeps a copy of its own.
			key = strings.Clone(key)
			id = n.next
			n.set(key, id)
			fresh = append(fresh, entry{d, product, key, id})
		}
		return id
	}
	for i := range events {
		e := &events[i]
		ids.uid[i] = get(s.uids, e.ProductID, e.DistinctID)
		ids.eid[i] = get(s.names, 0, e.Name)
	}
	return ids, fresh
}

// forgetEntries undoes number for entries that could not be stored. Ids are
// handed out in order and numberMu is held throughout, so the entries are
// the newest of their numbering and are taken back newest first.
func (s *Store) forgetEntries(fresh []entry) {
	s.dictMu.Lock()
	defer s.dictMu.Unlock()
	for i := len(fresh) - 1; i >= 0; i-- {
		n := fresh[i].dict.of(fresh[i].product)
		delete(n.ids, fresh[i].key)
		n.next--
	}
}

// storeEntries appends new users and names to their tables and commits
// them, before the events that carry their numbers. Each table commits at
// once; on failure the entries of the tables not committed are forgotten
// again, and those committed stay numbered.
func (s *Store) storeEntries(ctx context.Context, fresh []entry) error {
	for i, d := range []*dictionary{s.uids, s.names} {
		if err := s.storeDictionary(ctx, d, fresh); err != nil {
			var unstored []entry
			for _, f := range fresh {
				if f.dict == d || (i == 0 && f.dict == s.names) {
					unstored = append(unstored, f)
				}
			}
			s.forgetEntries(unstored)
			return err
		}
	}
	return nil
}

func (s *Store) storeDictionary(ctx context.Context, d *dictionary, fresh []entry) error {
	found := false
	for _, f := range fresh {
		found = found || f.dict == d
	}
	if !found {
		return nil
	}
	if err := d.app.open(ctx, s.pool); err != nil {
		return err
	}
	var err error
	for _, f := range fresh {
		if f.dict != d {
			continue
		}
		if d == s.uids {
			err = d.app.app.AppendRow(f.product, f.key, f.id)
		} else {
			err = d.app.app.AppendRow(f.key, f.id)
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		// Like the events' commits (events.go), never one after a failed
		// one; numberMu already keeps these to one at a time.
		if err = s.pool.broken(); err == nil {
			if err = d.app.app.Flush(); err != nil {
				s.pool.fail(err)
			}
		}
	}
	if err != nil {
		d.app.discard()
		return fmt.Errorf("storing new %s: %w", d.app.table, err)
	}
	return nil
}

// userCount is the number of user ids a product has handed out so far.
func (s *Store) userCount(product int64) uint32 {
	s.dictMu.RLock()
	defer s.dictMu.RUnlock()
	if n := s.uids.sets[product]; n != nil {
		return n.next
	}
	return 0
}

// noEvent is the eid of a name never seen: no event has it.
const noEvent = ^uint32(0)

// eventID returns the dense id of an event name, or noEvent.
func (s *Store) eventID(name string) uint32 {
	s.dictMu.RLock()
	defer s.dictMu.RUnlock()
	if id, ok := s.names.of(0).ids[name]; ok {
		return id
	}
	return noEvent
}

// noUser is the uid of a user a product never had: no event has it.
const noUser = ^uint32(0)

// userID returns the dense id of a product's user, or noUser.
func (s *Store) userID(product int64, distinctID string) uint32 {
	s.dictMu.RLock()
	defer s.dictMu.RUnlock()
	// Not s.uids.of: it would add a product's numbering under a read lock.
	if n := s.uids.sets[product]; n != nil {
		if id, ok := n.ids[distinctID]; ok {
			return id
		}
	}
	return noUser
}
