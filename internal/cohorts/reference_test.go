package cohorts

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
	"strata/internal/store/clickhouse"
	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/duckdb"
	"strata/internal/store/postgres"
	"strata/internal/store/postgres/pgtest"
)

// TestMain stops the ClickHouse servers the tests started; each test
// that needs PostgreSQL starts its own (pgtest without Main).
func TestMain(m *testing.M) {
	code := m.Run()
	chtest.StopAll()
	os.Exit(code)
}

// metaStore is what the reference test needs of a metadata store.
type metaStore interface {
	Meta
	analytics.PersonStore
	CreateWorkspace(ctx context.Context, name string) (analytics.Workspace, error)
	CreateProduct(ctx context.Context, workspaceID int64, name string) (analytics.Product, error)
}

type eventStore interface {
	analytics.CohortMemberStore
	AppendEvents(ctx context.Context, events []analytics.Event) error
}

// TestReferenceDuckDB holds computed membership equal to the plain
// evaluation of random definitions over random persons and events, with
// persons and events in one DuckDB store.
func TestReferenceDuckDB(t *testing.T) {
	s, err := duckdb.Open(context.Background(), t.TempDir(), duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	checkReference(t, s, s)
}

// TestReferenceClickHousePostgres is the same with events in ClickHouse
// and persons in PostgreSQL.
func TestReferenceClickHousePostgres(t *testing.T) {
	chtest.Skip(t)
	ch, err := clickhouse.Open(context.Background(), chtest.Shared(t).URL(fmt.Sprintf("strata_cohorts_%d", time.Now().UnixNano()), ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	pg, err := postgres.Open(context.Background(), pgtest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	checkReference(t, pg, ch)
}

// TestReferenceCluster is the same on the two-shard ClickHouse cluster.
func TestReferenceCluster(t *testing.T) {
	chtest.Skip(t)
	shards := chtest.Cluster(t, 2)
	ch, err := clickhouse.Open(context.Background(), shards[0].URL(fmt.Sprintf("strata_cohorts_%d", time.Now().UnixNano()), "cluster=strata"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	pg, err := postgres.Open(context.Background(), pgtest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	checkReference(t, pg, ch)
}

// person and event are the reference's data.
type person struct {
	id    string
	props map[string]any
}

type event struct {
	id, name string
	env      analytics.Env
	bot      bool
	at       time.Time
}

var idRunes = []rune("aAbBzZ é_-")

func checkReference(t *testing.T, meta metaStore, events eventStore) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	ws, err := meta.CreateWorkspace(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 4; seed++ {
		p, err := meta.CreateProduct(ctx, ws.ID, fmt.Sprintf("P%d", seed))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 41))
		persons, evs := generate(rng, now)
		var ups []analytics.PersonUpdate
		for _, ps := range persons {
			set := map[string]json.RawMessage{}
			for k, v := range ps.props {
				set[k], _ = json.Marshal(v)
			}
			ups = append(ups, analytics.PersonUpdate{ProductID: p.ID, DistinctID: ps.id, Set: set, FirstSeen: now, LastSeen: now})
		}
		if err := meta.ApplyPersons(ctx, ups); err != nil {
			t.Fatal(err)
		}
		var stored []analytics.Event
		for i, e := range evs {
			se := analytics.Event{ProductID: p.ID, Env: e.env, IsBot: e.bot, Timestamp: e.at, ReceivedAt: e.at, Name: e.name,
				DistinctID: e.id, UserID: ingest.UserID(e.id), Path: "/", URL: "https://x.example/", Properties: json.RawMessage(`{}`)}
			se.UUID[0], se.UUID[1], se.UUID[2], se.UUID[3] = byte(seed), byte(i>>16), byte(i>>8), byte(i)
			stored = append(stored, se)
		}
		if err := events.AppendEvents(ctx, stored); err != nil {
			t.Fatal(err)
		}
		svc := &Service{Meta: meta, Events: events, MaxCohorts: 100, Now: func() time.Time { return now }}
		for round := 0; round < 6; round++ {
			def := randomDefinition(rng)
			want := reference(persons, evs, def, now)
			c := analytics.Cohort{ProductID: p.ID, Name: fmt.Sprintf("c%d", round), Kind: analytics.CohortDynamic, Definition: &def}
			if err := analytics.ValidateCohort(&c); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if err := meta.CreateCohort(ctx, &c, 100); err != nil {
				t.Fatal(err)
			}
			if ok, err := svc.ComputeNow(ctx, c); !ok || err != nil {
				t.Fatalf("seed %d: ComputeNow = %v, %v", seed, ok, err)
			}
			got, err := meta.Cohort(ctx, p.ID, c.ID)
			if err != nil || got.State != analytics.CohortReady || got.Size != int64(len(want)) {
				js, _ := json.Marshal(def)
				t.Fatalf("seed %d, %s: cohort %+v, %v; want size %d", seed, js, got, err, len(want))
			}
			var members []string
			for after := ""; ; {
				page, err := svc.ListMembers(ctx, p.ID, c.ID, after, 37)
				if err != nil {
					t.Fatal(err)
				}
				members = append(members, page.Items...)
				if page.NextCursor == nil {
					break
				}
				after = *page.NextCursor
			}
			if !slices.Equal(members, want) {
				js, _ := json.Marshal(def)
				t.Fatalf("seed %d, definition %s:\n got %q\nwant %q", seed, js, members, want)
			}
		}
	}
}

// generate makes random persons and events: ids of a few letters that
// differ in case and bytes, properties of several types, events of three
// names in both environments, some by bots, over 40 days.
func generate(rng *rand.Rand, now time.Time) ([]person, []event) {
	seen := map[string]bool{}
	var persons []person
	for len(persons) < 150 {
		var b strings.Builder
		for n := 1 + rng.IntN(4); n > 0; n-- {
			b.WriteRune(idRunes[rng.IntN(len(idRunes))])
		}
		id := strings.TrimSpace(b.String())
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		props := map[string]any{}
		if rng.IntN(3) > 0 {
			props["plan"] = []string{"free", "pro", "Pro Plus"}[rng.IntN(3)]
		}
		if rng.IntN(2) == 0 {
			props["seats"] = rng.IntN(4)
		}
		if rng.IntN(4) == 0 {
			props["beta"] = rng.IntN(2) == 0
		}
		persons = append(persons, person{id, props})
	}
	var evs []event
	for i := 0; i < 1200; i++ {
		p := persons[rng.IntN(len(persons))]
		env := analytics.EnvLive
		if rng.IntN(10) == 0 {
			env = analytics.EnvTest
		}
		evs = append(evs, event{id: p.id, name: []string{"signup", "purchase", "login"}[rng.IntN(3)], env: env,
			bot: rng.IntN(12) == 0, at: now.Add(-time.Duration(rng.IntN(40*24*60)) * time.Minute)})
	}
	return persons, evs
}

func randomDefinition(rng *rand.Rand) analytics.CohortDefinition {
	var def analytics.CohortDefinition
	for g := 1 + rng.IntN(3); g > 0; g-- {
		var group analytics.CohortGroup
		for c := 1 + rng.IntN(3); c > 0; c-- {
			if rng.IntN(2) == 0 {
				ops := analytics.PersonOperators
				group.Conditions = append(group.Conditions, analytics.CohortCondition{Type: analytics.CohortProperty,
					Key: []string{"plan", "seats", "beta"}[rng.IntN(3)], Operator: ops[rng.IntN(len(ops))],
					Value: []string{"pro", "PRO", "1", "true", "free"}[rng.IntN(5)]})
				continue
			}
			did := rng.IntN(3) > 0
			group.Conditions = append(group.Conditions, analytics.CohortCondition{Type: analytics.CohortBehavior,
				Event: []string{"signup", "purchase", "login"}[rng.IntN(3)], Performed: &did,
				AtLeast: 1 + rng.IntN(3), Days: []int{1, 7, 30}[rng.IntN(3)]})
		}
		def.Groups = append(def.Groups, group)
	}
	return def
}

// reference evaluates a definition plainly: every person, every group,
// every condition, counting events one by one.
func reference(persons []person, evs []event, def analytics.CohortDefinition, now time.Time) []string {
	var out []string
	for _, p := range persons {
		member := false
		for _, g := range def.Groups {
			pass := true
			for _, c := range g.Conditions {
				if c.Type == analytics.CohortProperty {
					pass = pass && propertyHolds(p.props, c)
					continue
				}
				n := 0
				since := now.Add(-time.Duration(c.Days) * 24 * time.Hour)
				for _, e := range evs {
					if e.id == p.id && e.name == c.Event && e.env == analytics.EnvLive && !e.bot && !e.at.Before(since) {
						n++
					}
				}
				pass = pass && (n >= c.AtLeast) == c.Did()
			}
			member = member || pass
		}
		if member {
			out = append(out, p.id)
		}
	}
	slices.Sort(out) // Go orders strings by their bytes
	return out
}

// propertyHolds is the people list's filter on a property's text form.
func propertyHolds(props map[string]any, c analytics.CohortCondition) bool {
	v, set := props[c.Key]
	text := ""
	if set {
		b, _ := json.Marshal(v)
		text = strings.Trim(string(b), `"`)
	}
	switch c.Operator {
	case analytics.OpEq:
		return set && text == c.Value
	case analytics.OpNeq:
		return !set || text != c.Value
	case analytics.OpContains:
		return set && strings.Contains(strings.ToLower(text), strings.ToLower(c.Value))
	case analytics.OpIsSet:
		return set
	case analytics.OpIsNotSet:
		return !set
	}
	panic(c.Operator)
}
