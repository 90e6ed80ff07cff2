package query

import (
	"context"
	"errors"
	"testing"
	"time"

	"strata/internal/analytics"
)

// stubStore answers every query with err.
type stubStore struct{ err error }

func (s stubStore) Funnel(context.Context, analytics.FunnelQuery) ([]int64, error) { return nil, s.err }
func (s stubStore) FunnelRows(context.Context, analytics.FunnelQuery) ([]analytics.FunnelRow, error) {
	return nil, s.err
}
func (s stubStore) FunnelTimes(context.Context, analytics.FunnelQuery) (analytics.FunnelTimes, error) {
	return analytics.FunnelTimes{}, s.err
}
func (s stubStore) FunnelOverTime(context.Context, analytics.FunnelQuery) ([]analytics.FunnelBucket, error) {
	return nil, s.err
}
func (s stubStore) Trend(context.Context, analytics.TrendQuery) ([]analytics.TrendRow, error) {
	return nil, s.err
}
func (s stubStore) Retention(context.Context, analytics.RetentionQuery) ([]analytics.RetentionRow, error) {
	return nil, s.err
}
func (s stubStore) Bots(context.Context, analytics.BotsQuery) ([]analytics.BotActivity, []analytics.PageActivity, error) {
	return nil, nil, s.err
}
func (s stubStore) EventNames(context.Context, analytics.EventNamesQuery) ([]analytics.EventCount, error) {
	return nil, s.err
}
func (s stubStore) HasEvents(context.Context, analytics.EventRange) (bool, error) {
	return false, s.err
}
func (s stubStore) ExperimentCounts(context.Context, analytics.ExperimentQuery) ([]analytics.ExperimentRow, error) {
	return nil, s.err
}
func (s stubStore) ErrorGroups(context.Context, analytics.ErrorGroupsQuery) ([]analytics.ErrorGroupRow, error) {
	return nil, s.err
}
func (s stubStore) ErrorOccurrences(context.Context, analytics.ErrorOccurrencesQuery) ([]analytics.ErrorOccurrence, error) {
	return nil, s.err
}
func (s stubStore) ErrorActivity(context.Context, analytics.ErrorActivityQuery) ([]analytics.ErrorActivityRow, error) {
	return nil, s.err
}
func (s stubStore) UserEvents(context.Context, analytics.UserEventsQuery) ([]analytics.UserEvent, error) {
	return nil, s.err
}
func (s stubStore) Sessions(context.Context, analytics.SessionsQuery) (analytics.SessionsAnswer, error) {
	return analytics.SessionsAnswer{}, s.err
}

func (s stubStore) GoalConversions(context.Context, analytics.GoalsQuery) (analytics.GoalsAnswer, error) {
	return analytics.GoalsAnswer{}, s.err
}

func (s stubStore) LiveVisitors(context.Context, analytics.EventRange) (int64, error) {
	return 0, s.err
}

// TestOutOfMemoryIsQueryTooLarge checks the engine's one mapping: a store
// that ran out of memory is a 503 query_too_large with advice and a
// Retry-After, on every kind of query; any other store failure stays what
// it was.
func TestOutOfMemoryIsQueryTooLarge(t *testing.T) {
	oom := errors.Join(errors.New("computing funnel: Out of Memory Error: …"), analytics.ErrOutOfMemory)
	e := &Engine{Store: stubStore{err: oom}, Admission: NewAdmission(1, 0, time.Second)}
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	ctx := context.Background()
	runs := map[string]func() error{
		"funnel": func() error {
			run, err := e.Prepare(analytics.QueryFunnel, sc, []byte(`{"steps":["a","b"]}`))
			if err == nil {
				_, err = run(ctx)
			}
			return err
		},
		"trend": func() error {
			run, err := e.Prepare(analytics.QueryTrend, sc, []byte(`{"series":[{"event":"a"}]}`))
			if err == nil {
				_, err = run(ctx)
			}
			return err
		},
		"retention": func() error {
			run, err := e.Prepare(analytics.QueryRetention, sc, []byte(`{"startEvent":"a"}`))
			if err == nil {
				_, err = run(ctx)
			}
			return err
		},
		"bots":        func() error { _, err := e.Bots(ctx, sc, "", "", ""); return err },
		"event names": func() error { _, err := e.EventNames(ctx, sc, "", "", ""); return err },
		"user events": func() error { _, err := e.UserEvents(ctx, sc, "u1", "", ""); return err },
		"sessions":    func() error { _, err := e.Sessions(ctx, sc, []byte(`{}`)); return err },
	}
	for name, run := range runs {
		var ae *analytics.Error
		err := run()
		if !errors.As(err, &ae) || ae.Code != "query_too_large" || ae.Kind != analytics.KindUnavailable ||
			ae.RetryAfter <= 0 || !errors.Is(err, analytics.ErrOutOfMemory) {
			t.Errorf("%s: %v; want 503 query_too_large with Retry-After, keeping the cause", name, err)
		}
		// Every query gave its slot back.
		if r, _ := e.Admission.Load(); r != 0 {
			t.Errorf("%s: %d slots still held", name, r)
		}
	}
	other := errors.New("connection reset")
	e.Store = stubStore{err: other}
	if _, err := e.Bots(ctx, sc, "", "", ""); err != other {
		t.Errorf("another store error became %v", err)
	}
}

func (s stubStore) Paths(context.Context, analytics.PathsQuery) (analytics.PathsAnswer, error) {
	return analytics.PathsAnswer{}, s.err
}

func (s stubStore) PathUsers(context.Context, analytics.PathUsersQuery) ([]analytics.PathUser, error) {
	return nil, s.err
}

func (s stubStore) FunnelUsers(context.Context, analytics.FunnelUsersQuery) ([]analytics.FunnelUser, error) {
	return nil, s.err
}
