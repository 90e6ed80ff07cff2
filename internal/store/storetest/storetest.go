// Package storetest is the conformance suite every storage backend passes.
// A backend's own test calls Run with a function that opens a fresh, empty
// store on a real database; the suite knows nothing else about it.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
)

// Meta is the metadata half of storage: workspaces, products,
// credentials and saved queries (DuckDB embedded, PostgreSQL at scale).
type Meta interface {
	analytics.MetaStore
	analytics.SavedQueryStore
	analytics.UserStore
	analytics.AnnotationStore
	analytics.FlagStore
	analytics.ExperimentStore
	analytics.LeaseStore
	analytics.SourcemapStore
	analytics.ErrorGroupStore
	analytics.ErrorAliasStore
	analytics.SharedLinkStore
	analytics.BoardStore
	analytics.GoalStore
	analytics.AlertStore
	analytics.CampaignStore
	analytics.GroupStore
	analytics.PersonStore
	analytics.ReplayStore
	analytics.PrivacyStore
	analytics.SaltStore
	analytics.Transactor
}

// Events is the event half of storage and the queries over it (DuckDB
// embedded, ClickHouse at scale).
type Events interface {
	analytics.EventStore
	analytics.QueryStore
}

// Store is a backend that holds both halves, as the embedded one does.
type Store interface {
	Meta
	Events
}

// Run runs every conformance test. open must return an empty store and
// register its cleanup with t.
func Run(t *testing.T, open func(t *testing.T) Store) {
	RunMeta(t, func(t *testing.T) Meta { return open(t) })
	RunEvents(t, func(t *testing.T) Events { return open(t) })
}

// RunMeta runs the metadata half of the suite.
func RunMeta(t *testing.T, open func(t *testing.T) Meta) {
	// meta runs a test on a fresh store; scoped does too, with the two
	// products the test checks each method is scoped by.
	meta := func(test func(context.Context, *testing.T, Meta)) func(*testing.T) {
		return func(t *testing.T) { test(context.Background(), t, open(t)) }
	}
	scoped := func(test scopedTest) func(*testing.T) {
		return func(t *testing.T) {
			ctx, s := context.Background(), open(t)
			ps := products(ctx, t, s, "A", "B")
			test(ctx, t, s, ps[0], ps[1])
		}
	}
	t.Run("Meta", meta(testMeta))
	t.Run("SavedQueries", scoped(testSavedQueries))
	t.Run("Annotations", meta(testAnnotations))
	t.Run("Flags", scoped(testFlags))
	t.Run("FlagConditions", scoped(testFlagConditions))
	t.Run("Experiments", scoped(testExperiments))
	t.Run("Leases", meta(testLeases))
	t.Run("Sourcemaps", scoped(testSourcemaps))
	t.Run("SourcemapQuota", meta(testSourcemapQuota))
	t.Run("ErrorGroupStatuses", scoped(testErrorGroupStatuses))
	t.Run("ErrorAliases", scoped(testErrorAliases))
	t.Run("SharedLinks", scoped(testSharedLinks))
	t.Run("Boards", scoped(testBoards))
	t.Run("Goals", scoped(testGoals))
	t.Run("Alerts", meta(testAlerts))
	t.Run("Campaigns", scoped(testCampaigns))
	t.Run("Transactions", meta(testTransactions))
	t.Run("Groups", scoped(testGroups))
	t.Run("PersonProfiles", scoped(testPersonProfiles))
	t.Run("PersonCap", scoped(testPersonCap))
	t.Run("Cohorts", scoped(testCohorts))
	t.Run("ProductRetention", scoped(testProductRetention))
	t.Run("Privacy", scoped(testPrivacy))
	t.Run("ProductPrivacy", scoped(testProductPrivacy))
	t.Run("DailySalts", meta(testDailySalts))
	for _, c := range replayCases {
		t.Run(c.name, func(t *testing.T) { c.test(t, open(t)) })
	}
	t.Run("Users", meta(testUsers))
	t.Run("OwnerRace", meta(testOwnerRace))
	t.Run("Members", meta(testMembers))
}

// RunEvents runs the event half of the suite: appends, the deduplication
// window and every query type against the reference.
func RunEvents(t *testing.T, open func(t *testing.T) Events) { RunEventsShare(t, open, 1) }

// datasetShare is the share of each random-data case's datasets that the
// running suite asks for (RunEventsShare); the suite runs its cases one
// after the other.
var datasetShare = 1.0

// datasets is how many of a random-data case's n datasets to ask for: n,
// or the running suite's share of them, at least one.
func datasets(n int) int64 {
	return max(1, int64(math.Ceil(float64(n)*datasetShare)))
}

// RunEventsShare is RunEvents asking each random-data case for share of
// its datasets (the first ones): for a deployment of a store whose
// statements the full suite already held to the reference, such as the
// two-shard ClickHouse cluster, where what differs is where the rows are.
func RunEventsShare(t *testing.T, open func(t *testing.T) Events, share float64) {
	defer func(old float64) { datasetShare = old }(datasetShare)
	datasetShare = share
	// events runs a test on a fresh store.
	events := func(test func(context.Context, *testing.T, Events)) func(*testing.T) {
		return func(t *testing.T) { test(context.Background(), t, open(t)) }
	}
	t.Run("Events", events(testEvents))
	t.Run("Queries", events(testQueries))
	t.Run("FunnelCases", events(testFunnelCases))
	t.Run("FunnelViewsCases", events(testFunnelViewsCases))
	t.Run("FunnelUsers", events(testFunnelUsers))
	t.Run("GroupQueries", events(testGroupQueries))
	t.Run("Bots", events(testBots))
	t.Run("EventNames", events(testEventNames))
	t.Run("ExperimentCounts", events(testExperimentCounts))
	t.Run("ErrorGroups", events(testErrorGroups))
	t.Run("ErrorActivity", events(testErrorActivity))
	t.Run("UserEvents", events(testUserEvents))
	t.Run("Sessions", events(testSessions))
	t.Run("SessionCases", events(testSessionCases))
	t.Run("Paths", events(testPaths))
	t.Run("CohortFilters", events(testCohortFilters))
	t.Run("GoalConversions", events(testGoalConversions))
	t.Run("GoalCases", events(testGoalCases))
	t.Run("LiveVisitors", events(testLiveVisitors))
	t.Run("ZonedQueries", events(testZonedQueries))
	t.Run("ZonedSessions", events(testZonedSessions))
	t.Run("ZonedGoals", events(testZonedGoals))
	t.Run("ZoneCases", events(testZoneCases))
	t.Run("ZoneErrorDays", events(testZoneErrorDays))
	t.Run("DropEvents", events(testDropEvents))
	t.Run("DeletePersons", events(testDeletePersons))
	t.Run("PersonEventCounts", events(testPersonEventCounts))
	t.Run("CohortMembers", events(testCohortMembers))
	t.Run("PersonHistory", events(testPersonHistory))
}

// products creates a workspace and in it one product a name, in order:
// the setup of the metadata tests, which each check that every method is
// scoped to its product. It stops the test if the store refuses either.
func products(ctx context.Context, t *testing.T, s Meta, names ...string) []analytics.Product {
	t.Helper()
	ws, err := s.CreateWorkspace(ctx, "W")
	if err != nil {
		t.Fatalf("create workspace: %v", err)
	}
	out := make([]analytics.Product, len(names))
	for i, name := range names {
		if out[i], err = s.CreateProduct(ctx, ws.ID, name); err != nil {
			t.Fatalf("create product %q: %v", name, err)
		}
	}
	return out
}

// scopedTest is a metadata test that checks every method is scoped to its
// product. It is given a store holding two products, "A" and "B", in one
// workspace.
type scopedTest func(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product)

func testMeta(ctx context.Context, t *testing.T, s Meta) {
	ws, err := s.CreateWorkspace(ctx, "Default")
	if err != nil || ws.ID == 0 {
		t.Fatalf("CreateWorkspace = %+v, %v", ws, err)
	}
	p1, err := s.CreateProduct(ctx, ws.ID, "Web")
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := s.CreateProduct(ctx, ws.ID, "App ünïcode")
	if got, err := s.Product(ctx, p2.ID); err != nil || got.Name != "App ünïcode" || got.WorkspaceID != ws.ID {
		t.Errorf("Product(%d) = %+v, %v", p2.ID, got, err)
	}
	if _, err := s.Product(ctx, 9999); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("Product(9999) error = %v, want ErrNotFound", err)
	}
	if ps, _ := s.ListProducts(ctx, ws.ID); len(ps) != 2 || ps[0].ID != p1.ID {
		t.Errorf("ListProducts = %+v", ps)
	}

	k := analytics.APIKey{ProductID: p1.ID, Hash: bytes.Repeat([]byte{1}, 32), Prefix: "st_live_abcd", Env: analytics.EnvLive, RateLimit: 50}
	if err := s.CreateAPIKey(ctx, &k); err != nil || k.ID == 0 || k.Status != analytics.KeyActive {
		t.Fatalf("CreateAPIKey = %+v, %v", k, err)
	}
	dup := analytics.APIKey{ProductID: p2.ID, Hash: k.Hash, Prefix: "x", Env: analytics.EnvLive}
	if err := s.CreateAPIKey(ctx, &dup); err == nil {
		t.Error("two keys with one hash were accepted")
	}
	got, err := s.APIKeyByHash(ctx, k.Hash)
	if err != nil || got.ID != k.ID || got.RateLimit != 50 || got.Env != analytics.EnvLive || got.LastUsedAt != nil {
		t.Errorf("APIKeyByHash = %+v, %v", got, err)
	}
	if _, err := s.APIKeyByHash(ctx, bytes.Repeat([]byte{2}, 32)); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("unknown hash error = %v", err)
	}
	if err := s.SetAPIKeyStatus(ctx, k.ID, analytics.KeyDisabled); err != nil {
		t.Fatal(err)
	}
	if err := s.SetAPIKeyStatus(ctx, 9999, analytics.KeyDisabled); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("SetAPIKeyStatus(9999) = %v", err)
	}
	used := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	if err := s.TouchAPIKeys(ctx, map[int64]time.Time{k.ID: used}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.APIKey(ctx, k.ID)
	if got.Status != analytics.KeyDisabled || got.LastUsedAt == nil || !got.LastUsedAt.Equal(used) {
		t.Errorf("after disable and touch: %+v", got)
	}
	if keys, _ := s.ListAPIKeys(ctx, p2.ID); len(keys) != 0 {
		t.Errorf("product 2 sees product 1's keys: %+v", keys)
	}

	totals, err := s.AddUsage(ctx, "key", map[int64]int64{k.ID: 5, 77: 0})
	if err != nil || totals[k.ID] != 5 || totals[77] != 0 {
		t.Errorf("AddUsage = %v, %v", totals, err)
	}
	totals, err = s.AddUsage(ctx, "key", map[int64]int64{k.ID: 3})
	if err != nil || totals[k.ID] != 8 || len(totals) != 1 {
		t.Errorf("AddUsage again = %v, %v; want 8", totals, err)
	}
	// Scopes keep their own totals under the same ids.
	if totals, err = s.AddUsage(ctx, "workspace", map[int64]int64{k.ID: 2}); err != nil || totals[k.ID] != 2 {
		t.Errorf("AddUsage in another scope = %v, %v; want 2", totals, err)
	}

	tok := analytics.QueryToken{ProductID: p2.ID, Hash: bytes.Repeat([]byte{3}, 32), Prefix: "st_tok_abcd"}
	if err := s.CreateQueryToken(ctx, &tok); err != nil {
		t.Fatal(err)
	}
	if got, err := s.QueryTokenByHash(ctx, tok.Hash); err != nil || got.ProductID != p2.ID || got.Status != analytics.KeyActive {
		t.Errorf("QueryTokenByHash = %+v, %v", got, err)
	}
	s.SetQueryTokenStatus(ctx, tok.ID, analytics.KeyRevoked)
	if ts, _ := s.ListQueryTokens(ctx, p2.ID); len(ts) != 1 || ts[0].Status != analytics.KeyRevoked {
		t.Errorf("ListQueryTokens = %+v", ts)
	}
}

func testEvents(ctx context.Context, t *testing.T, s Events) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	var events []analytics.Event
	for i := 0; i < 1000; i++ {
		events = append(events, analytics.Event{
			UUID: uuid.New(), ProductID: int64(1 + i%2), Env: analytics.EnvLive,
			Timestamp: now.Add(time.Duration(i) * time.Second), ReceivedAt: now,
			Name: "e", DistinctID: "u", UserID: 42, Properties: []byte(`{"i":1}`),
		})
	}
	events[0].URL, events[0].IsBot, events[0].BotName = "https://x/y", true, "GPTBot"
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvents(ctx, nil); err != nil {
		t.Errorf("appending nothing: %v", err)
	}
	seen := map[[16]byte]int64{}
	err := s.RecentUUIDs(ctx, now.Add(-time.Hour), 10000, func(pid int64, u [16]byte) error {
		seen[u] = pid
		return nil
	})
	if err != nil || len(seen) != 1000 || seen[events[1].UUID] != 2 {
		t.Errorf("RecentUUIDs saw %d (err %v)", len(seen), err)
	}
	n := 0
	s.RecentUUIDs(ctx, now.Add(-time.Hour), 10, func(int64, [16]byte) error { n++; return nil })
	if n != 10 {
		t.Errorf("RecentUUIDs with limit 10 saw %d", n)
	}
	stop := errors.New("stop")
	if err := s.RecentUUIDs(ctx, now.Add(-time.Hour), 10000, func(int64, [16]byte) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("RecentUUIDs did not return fn's error: %v", err)
	}
	if err := s.RecentUUIDs(ctx, now.Add(time.Hour), 10000, func(int64, [16]byte) error { t.Error("future window saw an event"); return nil }); err != nil {
		t.Error(err)
	}
}
