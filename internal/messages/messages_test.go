package messages

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/flags"
	"strata/internal/store/duckdb"
	"strata/internal/store/duckdb/duckdbtest"
)

// clock is the tests' time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// countingStore counts the statements that read users' states; with a
// gate, each such statement waits for the gate to open.
type countingStore struct {
	*duckdb.Store
	reads atomic.Int64
	users atomic.Int64
	gate  chan struct{}
}

func (s *countingStore) MessageStates(ctx context.Context, productID int64, ids []string) (map[string][]analytics.MessageState, error) {
	s.reads.Add(1)
	s.users.Add(int64(len(ids)))
	if s.gate != nil {
		<-s.gate
	}
	return s.Store.MessageStates(ctx, productID, ids)
}

type fixture struct {
	store   *countingStore
	product int64
	clock   *clock
	flags   map[string]*flags.Flag
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, p := duckdbtest.Product(t)
	if err := st.SetAutoRender(ctx, p.ID, true); err != nil {
		t.Fatal(err)
	}
	return &fixture{store: &countingStore{Store: st}, product: p.ID,
		clock: &clock{t: time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC)}, flags: map[string]*flags.Flag{}}
}

// engine is a server node over the fixture's store.
func (f *fixture) engine() *Engine {
	return New(f.store, func(context.Context, int64) (map[string]*flags.Flag, error) { return f.flags, nil }, 0, f.clock.now, slog.Default())
}

func (f *fixture) campaign(t *testing.T, c analytics.Campaign) analytics.Campaign {
	t.Helper()
	c.ProductID, c.Status = f.product, analytics.CampaignActive
	if c.Trigger.Event == "" {
		c.Trigger.Event = "$pageview"
	}
	if c.Cap.Kind == "" {
		c.Cap = analytics.FrequencyCap{Kind: analytics.CapOnce}
	}
	if c.Variants == nil {
		c.Variants = []analytics.CampaignVariant{{Key: "control", Weight: 100, Steps: []analytics.Step{{Kind: "modal", Title: "Hi", BodyFormat: "text"}}}}
	}
	if c.Audience.Percentage == 0 {
		c.Audience.Percentage = 100
	}
	c.Normalize()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := f.store.CreateCampaign(context.Background(), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func shown(t *testing.T, e *Engine, req Request) map[int64]Message {
	t.Helper()
	list, err := e.Active(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]Message{}
	for _, m := range list {
		out[m.ID] = m
	}
	return out
}

// TestDailyCap: a per-day cap counts the impressions of the UTC day and
// starts again the next day; a terminal event ends it for good.
func TestDailyCap(t *testing.T) {
	f := newFixture(t)
	e := f.engine()
	c := f.campaign(t, analytics.Campaign{Name: "Daily", Cap: analytics.FrequencyCap{Kind: analytics.CapPerDay, Count: 2}})
	req := Request{ProductID: f.product, DistinctID: "u", Path: "/"}
	ctx := context.Background()
	for i, want := range []int{2, 1, 0} {
		m, ok := shown(t, e, req)[c.ID]
		if got := m.Remaining; (want == 0 && ok) || (want > 0 && got != want) {
			t.Fatalf("after %d impressions: shown %v, remaining %d, want %d", i, ok, got, want)
		}
		if want > 0 {
			if err := e.Track(ctx, f.product, c.ID, "u", analytics.MessageImpression, "control"); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.clock.add(time.Hour) // past midnight UTC
	if m := shown(t, e, req)[c.ID]; m.Remaining != 2 {
		t.Errorf("the next day: remaining %d, want 2", m.Remaining)
	}
	if err := e.Track(ctx, f.product, c.ID, "u", analytics.MessageComplete, "control"); err != nil {
		t.Fatal(err)
	}
	f.clock.add(48 * time.Hour)
	if _, ok := shown(t, e, req)[c.ID]; ok {
		t.Error("shown after the flow was completed")
	}
	stats, _ := f.store.CampaignStats(ctx, f.product)
	if stats[c.ID] != (analytics.CampaignStats{Shown: 1, Completed: 1}) {
		t.Errorf("stats %+v", stats[c.ID])
	}
}

// TestNodes: what one node records, another sees once its memory of the
// user is older than userTTL, and at once for a user it never read; a
// campaign changed on another node is served within productTTL.
func TestNodes(t *testing.T) {
	f := newFixture(t)
	a, b := f.engine(), f.engine()
	c := f.campaign(t, analytics.Campaign{Name: "Once"})
	ctx := context.Background()
	req := Request{ProductID: f.product, DistinctID: "u", Path: "/"}
	if _, ok := shown(t, b, req)[c.ID]; !ok {
		t.Fatal("not shown before any impression")
	}
	if err := a.Track(ctx, f.product, c.ID, "u", analytics.MessageImpression, "control"); err != nil {
		t.Fatal(err)
	}
	if _, ok := shown(t, a, req)[c.ID]; ok {
		t.Error("node a shows it again past the cap")
	}
	if _, ok := shown(t, b, req)[c.ID]; !ok {
		t.Error("node b forgot its memory of the user before userTTL")
	}
	f.clock.add(userTTL)
	if _, ok := shown(t, b, req)[c.ID]; ok {
		t.Error("node b still shows it after userTTL")
	}
	if _, ok := shown(t, b, Request{ProductID: f.product, DistinctID: "v", Path: "/"})[c.ID]; !ok {
		t.Error("another user is not shown it")
	}

	// A campaign paused through the store (another node) stops within productTTL.
	c.Status = analytics.CampaignPaused
	if err := f.store.UpdateCampaign(ctx, &c); err != nil {
		t.Fatal(err)
	}
	f.clock.add(productTTL)
	other := Request{ProductID: f.product, DistinctID: "w", Path: "/"}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := shown(t, b, other)[c.ID]; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the paused campaign is still served after the background read")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A change made through this node is seen at once.
	c.Status = analytics.CampaignActive
	f.store.UpdateCampaign(ctx, &c)
	a.Changed(f.product)
	if _, ok := shown(t, a, other)[c.ID]; !ok {
		t.Error("node a does not show the campaign it was told changed")
	}
}

// TestVariantsAndHoldout: with a running experiment each user sees the
// flag's arm; a holdout user sees the first variant and is exposed as
// holdout, a user outside the flag's rollout (60 %) the first variant
// exposed as excluded; the flag turned off shows the first variant
// without exposure.
func TestVariantsAndHoldout(t *testing.T) {
	f := newFixture(t)
	steps := []analytics.Step{{Kind: "modal", Title: "Hi", BodyFormat: "text"}}
	c := f.campaign(t, analytics.Campaign{Name: "AB", FlagKey: "message_ab", Variants: []analytics.CampaignVariant{
		{Key: "control", Weight: 50, Steps: steps}, {Key: "bold", Weight: 50, Steps: steps}}})
	flag := &flags.Flag{Key: "message_ab", Enabled: true, Rollout: 60,
		Variants:   []flags.Variant{{Key: "control", Weight: 50}, {Key: "bold", Weight: 50}},
		Experiment: &flags.Experiment{ID: 9, Status: "running", Holdout: 0.2}}
	f.flags["message_ab"] = flag
	e := f.engine()
	counts := map[string]int{}
	for i := range 300 {
		id := "user" + string(rune('a'+i%26)) + time.Duration(i).String()
		a, _ := flags.Assign(flag, id, nil, nil)
		m, ok := shown(t, e, Request{ProductID: f.product, DistinctID: id, Path: "/"})[c.ID]
		if !ok || m.Exposure == nil || m.Exposure.Flag != "message_ab" || m.Exposure.ExperimentID == nil || *m.Exposure.ExperimentID != 9 {
			t.Fatalf("%s: %+v", id, m)
		}
		switch {
		case a.Holdout:
			if m.Variant != "control" || m.Exposure.Variant != "holdout" {
				t.Errorf("holdout user %s: variant %q exposure %q", id, m.Variant, m.Exposure.Variant)
			}
			counts["holdout"]++
		case flags.Bucket("rollout", "message_ab", id) >= 6000:
			if m.Variant != "control" || m.Exposure.Variant != "excluded" {
				t.Errorf("user %s outside the rollout: variant %q exposure %q", id, m.Variant, m.Exposure.Variant)
			}
			counts["excluded"]++
		case m.Variant != a.Variant || m.Exposure.Variant != a.Variant:
			t.Errorf("%s: variant %q exposure %q, the flag assigns %q", id, m.Variant, m.Exposure.Variant, a.Variant)
		default:
			counts[a.Variant]++
		}
	}
	if counts["holdout"] < 30 || counts["excluded"] < 60 || counts["control"] < 40 || counts["bold"] < 40 {
		t.Errorf("split %v", counts)
	}
	flag.Enabled = false
	e.Changed(f.product)
	if m := shown(t, e, Request{ProductID: f.product, DistinctID: "x", Path: "/"})[c.ID]; m.Variant != "control" || m.Exposure != nil {
		t.Errorf("flag off: %+v", m)
	}
}

// TestVariantsOfATargetedFlag: a campaign whose flag targets pro users
// gives a user's arm when the traits the SDK sent target them, and the
// first variant exposed as excluded when they do not, or are missing.
func TestVariantsOfATargetedFlag(t *testing.T) {
	f := newFixture(t)
	steps := []analytics.Step{{Kind: "modal", Title: "Hi", BodyFormat: "text"}}
	c := f.campaign(t, analytics.Campaign{Name: "AB", FlagKey: "message_ab", Variants: []analytics.CampaignVariant{
		{Key: "control", Weight: 50, Steps: steps}, {Key: "bold", Weight: 50, Steps: steps}}})
	flag := &flags.Flag{Key: "message_ab", Enabled: true, Rollout: 100,
		Variants:   []flags.Variant{{Key: "control", Weight: 50}, {Key: "bold", Weight: 50}},
		Experiment: &flags.Experiment{ID: 9, Status: "running"},
		Conditions: []flags.Condition{{Type: "trait", Trait: "plan", Op: "eq", Value: "pro"}}}
	f.flags["message_ab"] = flag
	e := f.engine()
	arms := map[string]int{}
	for i := range 100 {
		id := "user" + strconv.Itoa(i)
		a, _ := flags.Assign(flag, id, map[string]any{"plan": "pro"}, nil)
		m := shown(t, e, Request{ProductID: f.product, DistinctID: id, Path: "/", Traits: map[string]any{"plan": "pro"}})[c.ID]
		if m.Exposure == nil || m.Variant != a.Variant || m.Exposure.Variant != a.Variant {
			t.Fatalf("pro user %s: %+v, the flag assigns %q", id, m, a.Variant)
		}
		arms[a.Variant]++
		for _, traits := range []map[string]any{{"plan": "free"}, nil} {
			m := shown(t, e, Request{ProductID: f.product, DistinctID: id, Path: "/", Traits: traits})[c.ID]
			if m.Exposure == nil || m.Variant != "control" || m.Exposure.Variant != "excluded" {
				t.Fatalf("user %s with traits %v: %+v", id, traits, m)
			}
		}
	}
	if arms["bold"] < 30 || arms["control"] < 30 {
		t.Errorf("pro users' arms %v", arms)
	}
}

// TestTraitConditions checks each operator, and that a missing trait
// fails every condition but neq.
func TestTraitConditions(t *testing.T) {
	traits := map[string]any{"plan": "Pro", "seats": 12.0, "beta": true, "tags": []any{"a"}, "none": nil}
	for _, c := range []struct {
		cond analytics.TraitCondition
		want bool
	}{
		{analytics.TraitCondition{Trait: "plan", Op: "eq", Value: "Pro"}, true},
		{analytics.TraitCondition{Trait: "plan", Op: "eq", Value: "pro"}, false},
		{analytics.TraitCondition{Trait: "plan", Op: "contains", Value: "RO"}, true},
		{analytics.TraitCondition{Trait: "plan", Op: "neq", Value: "Free"}, true},
		{analytics.TraitCondition{Trait: "seats", Op: "eq", Value: "12"}, true},
		{analytics.TraitCondition{Trait: "seats", Op: "gt", Value: "11.5"}, true},
		{analytics.TraitCondition{Trait: "seats", Op: "lt", Value: "12"}, false},
		{analytics.TraitCondition{Trait: "plan", Op: "gt", Value: "1"}, false},
		{analytics.TraitCondition{Trait: "beta", Op: "eq", Value: "true"}, true},
		{analytics.TraitCondition{Trait: "tags", Op: "contains", Value: `"a"`}, true},
		{analytics.TraitCondition{Trait: "beta", Op: "exists"}, true},
		{analytics.TraitCondition{Trait: "none", Op: "exists"}, false},
		{analytics.TraitCondition{Trait: "missing", Op: "exists"}, false},
		{analytics.TraitCondition{Trait: "missing", Op: "eq", Value: ""}, false},
		{analytics.TraitCondition{Trait: "missing", Op: "neq", Value: "x"}, true},
	} {
		if got := holds(c.cond, traits, nil); got != c.want {
			t.Errorf("%+v: %v, want %v", c.cond, got, c.want)
		}
	}
}

// TestLoaderBatches: users asked for together are read together, in far
// fewer statements than users, and each gets its own states.
func TestLoaderBatches(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.campaign(t, analytics.Campaign{Name: "Times", Cap: analytics.FrequencyCap{Kind: analytics.CapTimes, Count: 5}})
	const users = 400
	for i := range users {
		st := []analytics.MessageState{{CampaignID: c.ID, Impressions: i % 5, Variant: "control"}}
		if err := f.store.PutMessageStates(ctx, f.product, "u"+time.Duration(i).String(), st, 0, ""); err != nil {
			t.Fatal(err)
		}
	}
	// The store holds the first statements until every user is asked for,
	// as a slow store under load would: the users waiting meanwhile must
	// then be read many a statement.
	f.store.gate = make(chan struct{})
	e := f.engine()
	var wg sync.WaitGroup
	errs := make(chan string, users)
	for i := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "u" + time.Duration(i).String()
			m := shown(t, e, Request{ProductID: f.product, DistinctID: id, Path: "/"})[c.ID]
			if m.Remaining != 5-i%5 {
				errs <- id
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(e.loader.reqs)+int(f.store.users.Load()) < users {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d users asked for", len(e.loader.reqs)+int(f.store.users.Load()), users)
		}
		time.Sleep(time.Millisecond)
	}
	close(f.store.gate)
	wg.Wait()
	close(errs)
	for id := range errs {
		t.Errorf("%s got another user's state", id)
	}
	// The two loaders' first statements, then the rest 64 at a time.
	reads, n := f.store.reads.Load(), f.store.users.Load()
	if n != users || reads > loadWorkers+(users+maxLoadBatch-1)/maxLoadBatch {
		t.Errorf("%d users read in %d statements", n, reads)
	}
	t.Logf("%d users read in %d statements", n, reads)
}

// TestStatesOfNewCampaignsKept: a node whose list of campaigns predates a
// campaign made on another node keeps that campaign's state when it
// records another one for the same user.
func TestStatesOfNewCampaignsKept(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	old := f.campaign(t, analytics.Campaign{Name: "Old"})
	a, b := f.engine(), f.engine()
	shown(t, a, Request{ProductID: f.product, DistinctID: "v", Path: "/"}) // a reads the product now
	fresh := f.campaign(t, analytics.Campaign{Name: "Fresh"})
	if err := b.Track(ctx, f.product, fresh.ID, "u", analytics.MessageDismiss, "control"); err != nil {
		t.Fatal(err)
	}
	if err := a.Track(ctx, f.product, old.ID, "u", analytics.MessageImpression, "control"); err != nil {
		t.Fatal(err)
	}
	users, err := f.store.MessageStates(ctx, f.product, []string{"u"})
	if err != nil || len(users["u"]) != 2 {
		t.Fatalf("u's states after both nodes wrote: %v %+v", err, users["u"])
	}
	if _, ok := shown(t, f.engine(), Request{ProductID: f.product, DistinctID: "u", Path: "/"})[fresh.ID]; ok {
		t.Error("the campaign u dismissed on node b is shown again")
	}
}
