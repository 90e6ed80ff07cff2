package duckdb

import (
	"context"
	"fmt"

	"github.com/duckdb/duckdb-go/v2"

	"strata/internal/analytics"
)

// userIDs numbers one product's users densely, in order of first
// appearance.
type userIDs struct {
	ids  map[string]uint32
	next uint32
}

// newUser is a user numbered by the current append and not yet stored.
type newUser struct {
	product    int64
	distinctID string
}

// loadUsers reads the whole users table into memory.
func (s *Store) loadUsers(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT product_id, distinct_id, uid FROM users`)
	if err != nil {
		return fmt.Errorf("loading users: %w", err)
	}
	defer rows.Close()
	s.users = map[int64]*userIDs{}
	for rows.Next() {
		var pid int64
		var did string
		var uid uint32
		if err := rows.Scan(&pid, &did, &uid); err != nil {
			return fmt.Errorf("loading users: %w", err)
		}
		u := s.usersOf(pid)
		u.ids[did] = uid
		u.next = max(u.next, uid+1)
	}
	return rows.Err()
}

func (s *Store) usersOf(product int64) *userIDs {
	u := s.users[product]
	if u == nil {
		u = &userIDs{ids: map[string]uint32{}}
		s.users[product] = u
	}
	return u
}

// assignUIDs returns the dense id of every event's user, numbering unseen
// users. The caller holds appendMu and must store the returned new users
// (storeUsers) before the events, or forget them (forgetUsers).
func (s *Store) assignUIDs(events []analytics.Event) ([]uint32, []newUser) {
	uids := make([]uint32, len(events))
	var fresh []newUser
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	for i := range events {
		e := &events[i]
		u := s.usersOf(e.ProductID)
		id, ok := u.ids[e.DistinctID]
		if !ok {
			id = u.next
			u.ids[e.DistinctID] = id
			u.next++
			fresh = append(fresh, newUser{e.ProductID, e.DistinctID})
		}
		uids[i] = id
	}
	return uids, fresh
}

// forgetUsers undoes assignUIDs for users that could not be stored. Ids
// are handed out in order, so the newest ones are taken back.
func (s *Store) forgetUsers(fresh []newUser) {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	for i := len(fresh) - 1; i >= 0; i-- {
		u := s.users[fresh[i].product]
		delete(u.ids, fresh[i].distinctID)
		u.next--
	}
}

// storeUsers appends new users and commits them. It runs before the events
// that carry their ids are committed, so that no stored event has an id the
// users table lacks; a failure between the two leaves an unused id, which
// is harmless.
func (s *Store) storeUsers(ctx context.Context, fresh []newUser) error {
	if len(fresh) == 0 {
		return nil
	}
	if s.usersApp == nil {
		con, err := s.connector.Connect(ctx)
		if err != nil {
			return fmt.Errorf("connecting users appender: %w", err)
		}
		app, err := duckdb.NewAppenderFromConn(con, "", "users")
		if err != nil {
			con.Close()
			return fmt.Errorf("creating users appender: %w", err)
		}
		s.usersCon, s.usersApp = con, app
	}
	s.usersMu.RLock()
	var err error
	for _, f := range fresh {
		if err = s.usersApp.AppendRow(f.product, f.distinctID, s.users[f.product].ids[f.distinctID]); err != nil {
			break
		}
	}
	s.usersMu.RUnlock()
	if err == nil {
		err = s.usersApp.Flush()
	}
	if err != nil {
		s.usersCon.Close()
		s.usersApp.Close()
		s.usersApp, s.usersCon = nil, nil
		return fmt.Errorf("storing %d new users: %w", len(fresh), err)
	}
	return nil
}

// userCount is the number of ids a product has handed out so far.
func (s *Store) userCount(product int64) uint32 {
	s.usersMu.RLock()
	defer s.usersMu.RUnlock()
	if u := s.users[product]; u != nil {
		return u.next
	}
	return 0
}
