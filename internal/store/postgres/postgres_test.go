package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"strata/internal/analytics"
	"strata/internal/store/migrate"
	"strata/internal/store/postgres/pgtest"
	"strata/internal/store/sqlmeta"
	"strata/internal/store/storetest"
)

// TestMain shares one PostgreSQL server among the tests; each test gets
// databases of its own on it.
func TestMain(m *testing.M) { pgtest.Main(m) }

// open opens a store on url and closes it when the test ends.
func open(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.RunMeta(t, func(t *testing.T) storetest.Meta {
		return open(t, pgtest.Start(t))
	})
}

// recorded returns the versions in schema_migrations, in order.
func recorded(t *testing.T, s *Store) []int {
	t.Helper()
	rows, err := s.DB().Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

// wantVersions is the versions of the embedded migrations, in order.
func wantVersions(t *testing.T) []int {
	t.Helper()
	all, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var vs []int
	for _, m := range all {
		vs = append(vs, m.Version)
	}
	return vs
}

// TestMigrationsApplyOnce reopens a database and checks that the recorded
// migrations are not applied again: a second application would fail on the
// tables that already exist, and would record a new applied_at.
func TestMigrationsApplyOnce(t *testing.T) {
	url := pgtest.Start(t)
	want := wantVersions(t)
	var firstApplied time.Time
	for i := 0; i < 2; i++ {
		s, err := Open(context.Background(), url)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if got := recorded(t, s); !equal(got, want) {
			t.Errorf("open %d: versions recorded %v, want %v", i, got, want)
		}
		var applied time.Time
		if err := s.DB().QueryRow(`SELECT max(applied_at) FROM schema_migrations`).Scan(&applied); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			firstApplied = applied
		} else if !applied.Equal(firstApplied) {
			t.Errorf("reopening applied migrations again at %v (first at %v)", applied, firstApplied)
		}
		s.Close()
	}
}

// TestConcurrentOpen starts several nodes at once on one new database: all
// must start, and each migration must be applied and recorded once.
func TestConcurrentOpen(t *testing.T) {
	url := pgtest.Start(t)
	const nodes = 4
	stores := make([]*Store, nodes)
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			stores[i], errs[i] = Open(context.Background(), url)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("node %d: %v", i, err)
			continue
		}
		defer stores[i].Close()
	}
	if t.Failed() {
		return
	}
	if got, want := recorded(t, stores[0]), wantVersions(t); !equal(got, want) {
		t.Errorf("versions recorded %v, want %v", got, want)
	}
	// Every node sees the same, working schema.
	ctx := context.Background()
	w, err := stores[1].CreateWorkspace(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	if ws, err := stores[nodes-1].ListWorkspaces(ctx); err != nil || len(ws) != 1 || ws[0].ID != w.ID {
		t.Errorf("another node lists %+v, %v", ws, err)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMigrateOnPostgres runs the shared migration runner's contract on
// PostgreSQL: $n parameters, several statements in one migration, and a
// failing migration rolled back whole, DDL included.
func TestMigrateOnPostgres(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.Start(t))
	db := s.DB()
	ms := []migrate.Migration{
		{Version: 1001, Name: "1001_a.sql", SQL: "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1)"},
		{Version: 1002, Name: "1002_bad.sql", SQL: "CREATE TABLE c (x INTEGER); SELECT * FROM missing_table"},
	}
	if _, err := migrate.Apply(ctx, db, ms, time.Now()); err == nil || !strings.Contains(err.Error(), "1002_bad.sql") {
		t.Fatalf("failing migration: %v", err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_name = $1`, "c").Scan(&n); err != nil || n != 0 {
		t.Errorf("a failed migration left table c behind (%d, %v)", n, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM a`).Scan(&n); err != nil || n != 1 {
		t.Errorf("migration 1001 not applied: %d rows, %v", n, err)
	}
	if n, err := migrate.Apply(ctx, db, ms[:1], time.Now()); err != nil || n != 0 {
		t.Errorf("reapplying = %d, %v; want nothing applied", n, err)
	}
}

// TestSourcemapQuotaAcrossNodes gives two nodes one database and makes
// them race uploads of one product into room for five: five are stored,
// however the uploads interleave, because each upload's transaction takes
// the product's turn in the database (sourcemap_locks) and not only in
// its own process.
func TestSourcemapQuotaAcrossNodes(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Start(t)
	nodes := []*Store{open(t, url), open(t, url)}
	ws, _ := nodes[0].CreateWorkspace(ctx, "W")
	p, err := nodes[0].CreateProduct(ctx, ws.ID, "P")
	if err != nil {
		t.Fatal(err)
	}
	quota := analytics.SourcemapAmount{Count: 5}
	for round := range 5 {
		release := fmt.Sprint(round)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 16)
		for i := range errs {
			wg.Go(func() {
				<-start
				sm := analytics.Sourcemap{ProductID: p.ID, Release: release, URL: fmt.Sprintf("%d.js", i)}
				errs[i] = nodes[i%2].PutSourcemap(ctx, &sm, []byte(`{"version":3,"mappings":""}`), nil, quota)
			})
		}
		close(start)
		wg.Wait()
		stored := 0
		for _, err := range errs {
			if err == nil {
				stored++
			} else if analytics.AsError(err).Code != "quota_exceeded" {
				t.Errorf("round %d: %v", round, err)
			}
		}
		if u, err := nodes[1].SourcemapUsage(ctx, p.ID); err != nil || stored != 5 || u.Count != 5 {
			t.Fatalf("round %d: %d stored, usage %+v %v", round, stored, u, err)
		}
		if _, err := nodes[round%2].DeleteSourcemaps(ctx, p.ID, release); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReplaySessionStartCost starts sessions one append at a time in a
// product that keeps 100,000 sessions and in an empty one, under a cap on
// sessions neither reaches: an append that starts a session costs the same
// in both, since it reads the product's count from the row it locks
// (migration 0024) rather than counting the product's sessions under that
// lock, which the build before did (it took several times as long in the
// large product, and held every other node's new sessions of the product
// meanwhile).
func TestReplaySessionStartCost(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.Start(t))
	db := s.DB()
	for _, q := range []string{
		`INSERT INTO replay_sessions (product_id, session_id, bytes) SELECT 1, 'bulk-' || g, 512 FROM generate_series(1, 100000) g`,
		`INSERT INTO replay_products (product_id) VALUES (1)`,
		// The counting read's best case: an index-only scan.
		`VACUUM ANALYZE replay_sessions`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	limits := analytics.ReplayLimits{Sessions: 1_000_000}
	start := func(product int64, i int) time.Duration {
		c := analytics.ReplayChunk{ProductID: product, SessionID: fmt.Sprintf("new-%d", i), WindowID: "w", DistinctID: "u",
			FirstTS: time.Now(), LastTS: time.Now(), Encoding: analytics.ReplayJSON, Data: []byte("[]"), ReceivedAt: time.Now()}
		began := time.Now()
		if r, err := s.AppendReplayChunks(ctx, []analytics.ReplayChunk{c}, limits); err != nil || r.Count() > 0 {
			t.Fatalf("starting a session of product %d: refused %+v, %v", product, r, err)
		}
		return time.Since(began)
	}
	const n = 41
	var large, small []time.Duration
	for i := 0; i < n; i++ {
		large = append(large, start(1, i))
		small = append(small, start(2, i))
	}
	slices.Sort(large)
	slices.Sort(small)
	l, m := large[n/2], small[n/2]
	t.Logf("median append that starts a session: %v in a product of 100,000 sessions, %v in an empty one", l, m)
	if l > 2*m+time.Millisecond {
		t.Errorf("starting a session takes %v in a product of 100,000 sessions, %v in an empty one: it grows with the sessions", l, m)
	}
}

// TestReplaySessionsBackfill applies the migrations before 0024 to a
// database, stores sessions in it as those left them, and opens it: the
// migration counts each product's sessions, and the cap holds to them.
func TestReplaySessionsBackfill(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Start(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	all, err := sqlmeta.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	before := slices.DeleteFunc(slices.Clone(all), func(m migrate.Migration) bool { return m.Version >= 24 })
	db := stdlib.OpenDB(*cfg)
	if _, err := migrate.Apply(ctx, db, before, time.Now()); err != nil {
		t.Fatal(err)
	}
	storetest.SeedReplaySessions(t, db)
	db.Close()
	s := open(t, url)
	storetest.CheckReplaySessionsBackfill(t, s.DB(), s)
}
