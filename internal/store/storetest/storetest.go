// Package storetest is the conformance suite every storage backend passes.
// A backend's own test calls Run with a function that opens a fresh, empty
// store on a real database; the suite knows nothing else about it.
package storetest

import (
	"bytes"
	"context"
	"errors"
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
	analytics.AlertStore
	analytics.CampaignStore
	analytics.GroupStore
	analytics.ReplayStore
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
	t.Run("Meta", func(t *testing.T) { testMeta(t, open(t)) })
	t.Run("SavedQueries", func(t *testing.T) { testSavedQueries(t, open(t)) })
	t.Run("Annotations", func(t *testing.T) { testAnnotations(t, open(t)) })
	t.Run("Flags", func(t *testing.T) { testFlags(t, open(t)) })
	t.Run("Experiments", func(t *testing.T) { testExperiments(t, open(t)) })
	t.Run("Leases", func(t *testing.T) { testLeases(t, open(t)) })
	t.Run("Sourcemaps", func(t *testing.T) { testSourcemaps(t, open(t)) })
	t.Run("SourcemapQuota", func(t *testing.T) { testSourcemapQuota(t, open(t)) })
	t.Run("ErrorGroupStatuses", func(t *testing.T) { testErrorGroupStatuses(t, open(t)) })
	t.Run("ErrorAliases", func(t *testing.T) { testErrorAliases(t, open(t)) })
	t.Run("Alerts", func(t *testing.T) { testAlerts(t, open(t)) })
	t.Run("Campaigns", func(t *testing.T) { testCampaigns(t, open(t)) })
	t.Run("Transactions", func(t *testing.T) { testTransactions(t, open(t)) })
	t.Run("Groups", func(t *testing.T) { testGroups(t, open(t)) })
	for _, c := range replayCases {
		t.Run(c.name, func(t *testing.T) { c.test(t, open(t)) })
	}
	t.Run("Users", func(t *testing.T) { testUsers(t, open(t)) })
	t.Run("OwnerRace", func(t *testing.T) { testOwnerRace(t, open(t)) })
}

// RunEvents runs the event half of the suite: appends, the deduplication
// window and every query type against the reference.
func RunEvents(t *testing.T, open func(t *testing.T) Events) {
	t.Run("Events", func(t *testing.T) { testEvents(t, open(t)) })
	t.Run("Queries", func(t *testing.T) { testQueries(t, open(t)) })
	t.Run("FunnelCases", func(t *testing.T) { testFunnelCases(t, open(t)) })
	t.Run("GroupQueries", func(t *testing.T) { testGroupQueries(t, open(t)) })
	t.Run("Bots", func(t *testing.T) { testBots(t, open(t)) })
	t.Run("EventNames", func(t *testing.T) { testEventNames(t, open(t)) })
	t.Run("ExperimentCounts", func(t *testing.T) { testExperimentCounts(t, open(t)) })
	t.Run("ErrorGroups", func(t *testing.T) { testErrorGroups(t, open(t)) })
	t.Run("ErrorActivity", func(t *testing.T) { testErrorActivity(t, open(t)) })
	t.Run("UserEvents", func(t *testing.T) { testUserEvents(t, open(t)) })
	t.Run("LiveVisitors", func(t *testing.T) { testLiveVisitors(t, open(t)) })
}

func testMeta(t *testing.T, s Meta) {
	ctx := context.Background()
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

func testEvents(t *testing.T, s Events) {
	ctx := context.Background()
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
