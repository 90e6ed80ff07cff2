package clickhouse

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
)

// Cohort members and the behaviour streams of a cohort's computation
// (migration 0004, docs/queries.md, "Cohorts"). On a cluster the members
// are written and read through the Distributed cohort_members, sharded by
// the id's hash, and deleted by a mutation on every shard's
// cohort_members_local, as events are.

var _ analytics.CohortMemberStore = (*Store)(nil)

// cohortTable is the members' table beside an events table onEveryShard
// names: cohort_members beside events, cohort_members_local beside
// events_local.
func cohortTable(events string) string {
	if events == "events_local" {
		return "cohort_members_local"
	}
	return "cohort_members"
}

// members is the table readers and writers name, with its database.
func (s *Store) members() string { return "`" + s.db + "`.cohort_members" }

// AppendCohortMembers inserts ids into a generation as one block. On a
// cluster the insert waits until every shard has its part, as
// AppendEvents' does, so that the generation is whole before it is made
// current.
func (s *Store) AppendCohortMembers(ctx context.Context, productID, cohortID, generation int64, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if s.cluster != "" {
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"insert_distributed_sync": 1}))
	}
	batch, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+s.members()+" (product_id, cohort_id, generation, distinct_id)")
	if err != nil {
		return fmt.Errorf("writing cohort members: %w", err)
	}
	defer batch.Abort()
	for _, id := range ids {
		if err := batch.Append(productID, cohortID, generation, id); err != nil {
			return fmt.Errorf("writing cohort members: %w", err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("writing cohort members: %w", err)
	}
	return nil
}

// CohortSize counts a generation's distinct members (uniqExact: exact,
// unlike uniq).
func (s *Store) CohortSize(ctx context.Context, productID, cohortID, generation int64) (int64, error) {
	var n uint64
	err := s.conn.QueryRow(ctx, "SELECT uniqExact(distinct_id) FROM "+s.members()+
		" WHERE product_id = ? AND cohort_id = ? AND generation = ?", productID, cohortID, generation).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting cohort members: %w", err)
	}
	return int64(n), nil
}

// CohortMembers returns one page of a generation's members, in byte order
// (ClickHouse compares strings by their bytes).
func (s *Store) CohortMembers(ctx context.Context, productID, cohortID, generation int64, after string, limit int) ([]string, error) {
	var b builder
	b.Write("SELECT DISTINCT distinct_id FROM ", s.members(), " WHERE product_id = ", b.arg(productID),
		" AND cohort_id = ", b.arg(cohortID), " AND generation = ", b.arg(generation),
		" AND distinct_id > ", b.arg(after), " ORDER BY distinct_id LIMIT ", b.arg(limit))
	return queryAll(ctx, s, "listing cohort members", &b, func(rows driver.Rows) (string, error) {
		var id string
		return id, rows.Scan(&id)
	})
}

// DropCohortGenerations deletes every generation of a cohort but keep by
// a mutation on every shard, without waiting for it: readers name their
// generation, so the rows still there are never read.
func (s *Store) DropCohortGenerations(ctx context.Context, productID, cohortID, keep int64) error {
	return s.onEveryShard(ctx, func(conn driver.Conn, table string) error {
		err := conn.Exec(ctx, "ALTER TABLE `"+s.db+"`."+cohortTable(table)+" DELETE WHERE product_id = ? AND cohort_id = ? AND generation != ?",
			productID, cohortID, keep)
		if err != nil {
			return fmt.Errorf("dropping cohort generations: %w", err)
		}
		return nil
	})
}

// DropPersonSets deletes the product's person sets of generations below
// before, by a mutation on every shard, without waiting for it.
func (s *Store) DropPersonSets(ctx context.Context, productID, before int64) error {
	return s.onEveryShard(ctx, func(conn driver.Conn, table string) error {
		err := conn.Exec(ctx, "ALTER TABLE `"+s.db+"`."+cohortTable(table)+" DELETE WHERE product_id = ? AND cohort_id < 0 AND generation < ?",
			productID, before)
		if err != nil {
			return fmt.Errorf("dropping person sets: %w", err)
		}
		return nil
	})
}

// PersonCohorts lists the saved cohorts' generations that hold a person
// (a person set, cohort_id below 0, is no cohort of theirs).
func (s *Store) PersonCohorts(ctx context.Context, productID int64, distinctID string) ([]analytics.CohortMembership, error) {
	var b builder
	b.Write("SELECT DISTINCT cohort_id, generation FROM ", s.members(), " WHERE product_id = ", b.arg(productID),
		" AND distinct_id = ", b.arg(distinctID), " AND cohort_id > 0 ORDER BY cohort_id, generation")
	return queryAll(ctx, s, "reading a person's cohorts", &b, func(rows driver.Rows) (analytics.CohortMembership, error) {
		var m analytics.CohortMembership
		return m, rows.Scan(&m.CohortID, &m.Generation)
	})
}

// DeleteCohortMemberships deletes distinctIDs from every cohort of the
// product by a mutation on every shard, and waits until it is done.
func (s *Store) DeleteCohortMemberships(ctx context.Context, productID int64, distinctIDs []string) error {
	if len(distinctIDs) == 0 {
		return nil
	}
	set := make([]any, len(distinctIDs))
	for i, id := range distinctIDs {
		set[i] = id
	}
	ids := clickhouse.GroupSet{Value: set}
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.members()+" WHERE product_id = ? AND distinct_id IN ?",
		productID, ids).Scan(&n); err != nil {
		return fmt.Errorf("counting cohort memberships: %w", err)
	}
	if n == 0 {
		return nil // no mutation: it would rewrite parts for nothing
	}
	err := s.onEveryShard(ctx, func(conn driver.Conn, table string) error {
		return mutate(ctx, conn, s.db, cohortTable(table), "product_id = ? AND distinct_id IN ?", []any{productID, ids})
	})
	if err != nil {
		return fmt.Errorf("deleting cohort memberships: %w", err)
	}
	return nil
}

// EachBehaviorPerson streams the persons that did q.Event at least
// q.AtLeast times since q.Since, human events of the live environment, in
// byte order. The server groups and sorts; only the ids cross over. On a
// cluster the Distributed table merges the shards' groups (one person's
// events are on one shard, but the merge is right either way).
func (s *Store) EachBehaviorPerson(ctx context.Context, q analytics.BehaviorQuery, fn func(string) error) error {
	var b builder
	b.Write("SELECT distinct_id FROM ", s.table, " WHERE product_id = ", b.arg(q.ProductID),
		" AND env = ", b.arg(string(analytics.EnvLive)), " AND event = ", b.arg(q.Event),
		" AND ts >= ", b.arg(q.Since.UnixMicro()), " AND is_bot = 0",
		" GROUP BY distinct_id HAVING count() >= ", b.arg(uint64(q.AtLeast)), " ORDER BY distinct_id")
	text, args := s.statement(&b)
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		return fmt.Errorf("reading a behaviour's persons: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("reading a behaviour's persons: %w", err)
		}
		if err := fn(id); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading a behaviour's persons: %w", err)
	}
	return nil
}
