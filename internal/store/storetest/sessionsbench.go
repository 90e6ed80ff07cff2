package storetest

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
)

// SessionsBenchEvents calls emit with n events, in groups of 5,000, for
// the stores' sessions benchmarks: 50,000 users over 30 days from
// 2026-10-01, visits of a few events minutes apart with hours or days
// between them, one event in ten an $identify and one a click, and half of
// the users sending a $session_id (a new one each visit) as the browser
// SDK does. The range returned is the 30 days, product 1, live.
func SessionsBenchEvents(n int, emit func([]analytics.Event) error) (analytics.EventRange, error) {
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	const users = 50_000
	clock := make([]time.Duration, users)
	sid := make([]string, users)
	for i := range clock {
		clock[i] = time.Duration(r.Int64N(int64(24 * time.Hour)))
	}
	paths := []string{"/", "/pricing", "/docs", "/blog", "/blog/a", "/blog/b", "/signup", "/login", "/about", "/contact"}
	batch := make([]analytics.Event, 0, 5000)
	for i := range n {
		u := r.IntN(users)
		if r.IntN(5) == 0 {
			clock[u] += time.Duration(1+r.Int64N(48)) * time.Hour
			sid[u] = uuid.NewString()
		} else {
			clock[u] += time.Duration(r.Int64N(int64(10 * time.Minute)))
		}
		name, props := "$pageview", "{}"
		switch r.IntN(10) {
		case 0:
			name = "click"
		case 1:
			name = "$identify"
		}
		if u%2 == 0 {
			props = `{"$session_id":"` + sid[u] + `","plan":"pro"}`
		}
		ts := start.Add(clock[u] % (30 * 24 * time.Hour))
		batch = append(batch, analytics.Event{
			ProductID: 1, Env: analytics.EnvLive, Timestamp: ts, ReceivedAt: ts, UUID: uuid.New(),
			Name: name, DistinctID: "user_" + strconv.Itoa(u), UserID: uint64(u),
			Path: paths[r.IntN(len(paths))], Properties: []byte(props), Browser: "Chrome", OS: "Linux",
		})
		if len(batch) == cap(batch) || i == n-1 {
			if err := emit(batch); err != nil {
				return analytics.EventRange{}, err
			}
			batch = batch[:0]
		}
	}
	return analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: start, To: start.Add(30 * 24 * time.Hour)}, nil
}

// SessionsBench fills s with STRATA_SESSIONS_BENCH_EVENTS events (1 M when
// unset) from SessionsBenchEvents and returns the queries the benchmarks
// time: the sessions by day, and a two-line trend (page views and their
// unique users, by day) over the same events.
func SessionsBench(b *testing.B, s Events) (analytics.SessionsQuery, analytics.TrendQuery) {
	n := 1_000_000
	if v := os.Getenv("STRATA_SESSIONS_BENCH_EVENTS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	rng, err := SessionsBenchEvents(n, func(events []analytics.Event) error { return s.AppendEvents(context.Background(), events) })
	if err != nil {
		b.Fatal(err)
	}
	return analytics.SessionsQuery{EventRange: rng, Interval: analytics.Day, Limit: 10},
		analytics.TrendQuery{EventRange: rng, Interval: analytics.Day,
			Series: []analytics.TrendSeries{{Event: analytics.PageviewEvent}, {Event: analytics.PageviewEvent, UniqueUsers: true}}}
}

// TimeSessions times, interleaved, five runs each of the trend tq, the
// sessions query q and column (the sessions statement reading the session
// id from a column), and reports the fastest of each as name-ms.
func TimeSessions(b *testing.B, s Events, q analytics.SessionsQuery, tq analytics.TrendQuery, column func() error) {
	ctx := context.Background()
	best := fastest{}
	for b.Loop() {
		for range 5 {
			best.time(b, "trend", func() error { _, err := s.Trend(ctx, tq); return err })
			best.time(b, "sessions", func() error { _, err := s.Sessions(ctx, q); return err })
			best.time(b, "sessions-column", column)
		}
	}
	for name, d := range best {
		b.ReportMetric(float64(d.Microseconds())/1000, name+"-ms")
	}
}

// fastest keeps the fastest run of each named operation.
type fastest map[string]time.Duration

// time runs f once and keeps its time if it is name's fastest.
func (m fastest) time(b *testing.B, name string, f func() error) {
	t0 := time.Now()
	if err := f(); err != nil {
		b.Fatal(name, ": ", err)
	}
	if d := time.Since(t0); m[name] == 0 || d < m[name] {
		m[name] = d
	}
}

// Drain reads every row of rows and closes them, as a client reading the
// whole answer would.
func Drain(rows interface {
	Next() bool
	Close() error
	Err() error
}) error {
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		return err
	}
	return rows.Err()
}
