package querytest

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// LiveVisitors returns the number of visitors now: the distinct users
// with an event of the requested environment, bots left out, whose time
// is in [now − 5 minutes, now + 1 minute). The minute after now lets a
// clock a little ahead count; an event older than five minutes, however
// recently it arrived, does not.
func LiveVisitors(events []Event, test bool, now time.Time) int64 {
	from, to := now.Add(-5*time.Minute), now.Add(time.Minute)
	users := map[string]bool{}
	for _, e := range events {
		if e.Test != test || e.Bot {
			continue
		}
		if e.Time.Before(from) || !e.Time.Before(to) {
			continue
		}
		users[e.DistinctID] = true
	}
	return int64(len(users))
}

// LiveDataset is a random set of events around one instant, Now, for the
// live visitors count.
type LiveDataset struct {
	Now    time.Time
	Events []Event
}

// GenerateLive returns a reproducible dataset for the seed: 0 to 120
// events of up to 40 users between fifteen minutes before Now and five
// after, some exactly on the window's edges (five minutes before Now, and
// one minute after), about 5% test events and 5% bot events.
func GenerateLive(seed int64) LiveDataset {
	r := rand.New(rand.NewPCG(uint64(seed), 0x11fe))
	// g draws the location and the screen class, as in Generate.
	g := rand.New(rand.NewPCG(uint64(seed), 0x11ff))
	now := firstBase.AddDate(0, 0, r.IntN(60)).Add(time.Duration(r.Int64N(int64(24 * time.Hour))).Truncate(time.Microsecond))
	users := make([]string, 1+r.IntN(40))
	for i := range users {
		users[i] = fmt.Sprintf("live-%d-%d", seed, i)
	}
	edges := []time.Duration{-5 * time.Minute, -5*time.Minute - time.Microsecond, time.Minute, time.Minute - time.Microsecond, 0}
	ds := LiveDataset{Now: now}
	for range r.IntN(121) {
		e := randomEvent(r, g, users, namePool)
		if r.IntN(5) == 0 {
			e.Time = now.Add(edges[r.IntN(len(edges))])
		} else {
			e.Time = now.Add(time.Duration(r.Int64N(int64(20*time.Minute))) - 15*time.Minute).Truncate(time.Microsecond)
		}
		ds.Events = append(ds.Events, e)
	}
	return ds
}
