package storetest

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"testing"

	"strata/internal/analytics"
)

// PeopleBenchPersons is how many persons TimePeopleList fills:
// STRATA_PEOPLE_BENCH_PERSONS, 1 M when unset.
func PeopleBenchPersons() int {
	if n, err := strconv.Atoi(os.Getenv("STRATA_PEOPLE_BENCH_PERSONS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// fillPersons is one INSERT … SELECT that both databases run: n persons
// of a product, seen one second apart, a tenth of them on the pro plan,
// each with an email and a seat count.
const fillPersons = `INSERT INTO persons (product_id, distinct_id, properties, first_seen, last_seen, updated_at)
SELECT $1, 'user-' || CAST(i AS VARCHAR),
       '{"email":"user-' || CAST(i AS VARCHAR) || '@x.example","plan":"' ||
           (CASE WHEN i % 10 = 0 THEN 'pro' ELSE 'free' END) || '","seats":' || CAST(i % 50 AS VARCHAR) || '}',
       TIMESTAMP '2026-01-01 00:00:00', TIMESTAMP '2026-01-01 00:00:00' + i * INTERVAL '1 second',
       TIMESTAMP '2026-01-01 00:00:00'
FROM generate_series(1, $2) AS g(i)`

// TimePeopleList fills the persons of a product of s through db, the
// store's own handle (PeopleBenchPersons), and times, interleaved, five
// runs each of the people list's first page filtered by a property
// (plan = pro, a tenth of them), its first page unfiltered, a search by
// email, the second page of the filtered list, and the list filtered by
// a value one person has. It reports the fastest of each as
// name-ms.
func TimePeopleList(b *testing.B, s Meta, db *sql.DB) {
	ctx := context.Background()
	ws, err := s.CreateWorkspace(ctx, "W")
	if err != nil {
		b.Fatal(err)
	}
	p, err := s.CreateProduct(ctx, ws.ID, "People")
	if err != nil {
		b.Fatal(err)
	}
	n := PeopleBenchPersons()
	if _, err := db.ExecContext(ctx, fillPersons, p.ID, n); err != nil {
		b.Fatal(err)
	}
	// The statistics PostgreSQL's autovacuum would gather within a minute
	// of such a load: without them the planner takes the filtered pages
	// after the first for a few rows and reads them by a bitmap scan of
	// the whole product (docs/benchmarks.md). DuckDB runs it too.
	if _, err := db.ExecContext(ctx, `ANALYZE persons`); err != nil {
		b.Fatal(err)
	}
	filter := []analytics.PersonFilter{{Key: "plan", Operator: analytics.OpEq, Value: "pro"}}
	q := analytics.PersonQuery{ProductID: p.ID, Filters: filter, Limit: 51}
	first, err := s.ListPersons(ctx, q)
	if err != nil || len(first) != 51 || first[0].DistinctID != "user-"+strconv.Itoa(n-n%10) {
		b.Fatalf("filtered list: %d rows, %v", len(first), err)
	}
	tenth := q
	tenth.After = &analytics.PersonCursor{LastSeen: first[49].LastSeen, DistinctID: first[49].DistinctID}
	// A filter that one person passes: the list reads every person.
	rare := analytics.PersonQuery{ProductID: p.ID, Limit: 51, Filters: []analytics.PersonFilter{
		{Key: "email", Operator: analytics.OpEq, Value: "user-4242@x.example"}}}
	best := fastest{}
	for b.Loop() {
		for range 5 {
			best.time(b, "filtered", func() error { _, err := s.ListPersons(ctx, q); return err })
			best.time(b, "all", func() error {
				_, err := s.ListPersons(ctx, analytics.PersonQuery{ProductID: p.ID, Limit: 51})
				return err
			})
			best.time(b, "search-email", func() error {
				_, err := s.ListPersons(ctx, analytics.PersonQuery{ProductID: p.ID, Search: "user-4242@", Limit: 51})
				return err
			})
			best.time(b, "filtered-next-page", func() error { _, err := s.ListPersons(ctx, tenth); return err })
			best.time(b, "filtered-rare", func() error { _, err := s.ListPersons(ctx, rare); return err })
		}
	}
	for name, d := range best {
		b.ReportMetric(float64(d.Microseconds())/1000, name+"-ms")
	}
}
