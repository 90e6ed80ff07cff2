package query

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
)

// eventsStore answers UserEvents with the events of its list that the
// query asks for (newest first, as the stores order them), and records
// the query; every other method is stubStore's.
type eventsStore struct {
	stubStore
	events []analytics.UserEvent
	asked  []analytics.UserEventsQuery
}

func (s *eventsStore) UserEvents(_ context.Context, q analytics.UserEventsQuery) ([]analytics.UserEvent, error) {
	s.asked = append(s.asked, q)
	var out []analytics.UserEvent
	for _, e := range s.events {
		if (q.Before.IsZero() || e.Time.Before(q.Before)) && len(out) < q.Limit {
			out = append(out, e)
		}
	}
	return out, nil
}

// TestUserEventsPages pages through a user's events three at a time:
// every event comes exactly once, in order, although three share a
// microsecond that the first page of three would cut through, and the last
// page says there is nothing older.
func TestUserEventsPages(t *testing.T) {
	base := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	// Newest first: t+5s, then three at t+3s, then t+1s, t.
	at := []time.Duration{5 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second, time.Second, 0}
	st := &eventsStore{}
	for i, d := range at {
		e := analytics.UserEvent{Time: base.Add(d), Name: "e" + string(rune('a'+i)), Properties: json.RawMessage(`{}`)}
		e.UUID[0] = byte(i)
		if i == 1 {
			e.SessionID = "s1"
		}
		st.events = append(st.events, e)
	}
	eng := &Engine{Store: st, Admission: NewAdmission(1, 0, time.Second)}
	sc := analytics.EventRange{ProductID: 7, Env: analytics.EnvTest}
	var names []string
	var pages [][]string
	before := ""
	for range 10 {
		res, err := eng.UserEvents(context.Background(), sc, "u1", before, "3")
		if err != nil {
			t.Fatal(err)
		}
		var page []string
		for _, e := range res.Events {
			page = append(page, e.Name)
			if (e.SessionID != nil) != (e.Name == "eb") || (e.SessionID != nil && *e.SessionID != "s1") {
				t.Errorf("%s: sessionId %v", e.Name, e.SessionID)
			}
		}
		names = append(names, page...)
		pages = append(pages, page)
		if res.NextBefore == nil {
			break
		}
		before = res.NextBefore.Format(time.RFC3339Nano)
	}
	if got := strings.Join(names, ","); got != "ea,eb,ec,ed,ee,ef" {
		t.Errorf("events over the pages = %s (pages %v), want each once, newest first", got, pages)
	}
	// The first page stops before the microsecond it would cut: ea alone.
	if len(pages[0]) != 1 {
		t.Errorf("first page = %v, want [ea]: eb shares its time with ec and ed", pages[0])
	}
	if len(pages) != 3 || len(pages[1]) != 3 {
		t.Errorf("pages = %v, want [ea] [eb ec ed] [ee ef]", pages)
	}
	for _, q := range st.asked {
		if q.Limit != 4 || q.ProductID != 7 || q.Env != analytics.EnvTest || q.DistinctID != "u1" {
			t.Errorf("store asked %+v, want one more than the limit of product 7's test events of u1", q)
		}
	}
	if r, _ := eng.Admission.Load(); r != 0 {
		t.Errorf("%d admission slots still held", r)
	}

	// More events of one microsecond than a page holds: the page keeps
	// the limit, and the rest of that microsecond is skipped.
	st.events = st.events[1:4]
	res, err := eng.UserEvents(context.Background(), sc, "u1", "", "2")
	if err != nil || len(res.Events) != 2 || res.NextBefore == nil || !res.NextBefore.Equal(base.Add(3*time.Second)) {
		t.Errorf("a page inside one microsecond = %+v, %v", res, err)
	}
}

// TestUserEventsWaitsForASlot checks that a user's events are read like
// every query: with no slot and no queue, it is refused as server_busy.
func TestUserEventsWaitsForASlot(t *testing.T) {
	eng := &Engine{Store: &eventsStore{}, Admission: NewAdmission(1, 0, time.Second)}
	release, err := eng.Admission.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = eng.UserEvents(context.Background(), analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}, "u1", "", "")
	var ae *analytics.Error
	if !errors.As(err, &ae) || ae.Code != "server_busy" {
		t.Errorf("with every slot taken: %v, want server_busy", err)
	}
}

func TestParseUserEvents(t *testing.T) {
	sc := analytics.EventRange{ProductID: 3, Env: analytics.EnvLive}
	q, err := ParseUserEvents("ü/1", "", "", sc)
	if err != nil || q.Limit != DefaultUserEvents || !q.Before.IsZero() || q.DistinctID != "ü/1" || q.ProductID != 3 {
		t.Errorf("defaults: %+v, %v", q, err)
	}
	q, err = ParseUserEvents("u", "2026-05-04T10:00:00.0000015+02:00", "1000", sc)
	if want := time.Date(2026, 5, 4, 8, 0, 0, 2000, time.UTC); err != nil || !q.Before.Equal(want) || q.Limit != 1000 {
		t.Errorf("before with a fraction of a microsecond = %v (limit %d), %v; want %v, rounded up", q.Before, q.Limit, err, want)
	}
	for _, c := range []struct{ id, before, limit, field string }{
		{"u", "", "0", "limit"},
		{"u", "", "1001", "limit"},
		{"u", "", "ten", "limit"},
		{"u", "", "01", "limit"},
		{"u", "yesterday", "", "before"},
		{"u", "2026-05-04", "", "before"},
		{"", "", "", "distinctId"},
		{strings.Repeat("x", 256), "", "", "distinctId"},
	} {
		_, err := ParseUserEvents(c.id, c.before, c.limit, sc)
		var ae *analytics.Error
		if !errors.As(err, &ae) || ae.Kind != analytics.KindInvalid || ae.Code != "invalid_request" || !strings.HasPrefix(ae.Message, c.field+": ") {
			t.Errorf("ParseUserEvents(%.10q, %q, %q) = %v, want invalid_request naming %s", c.id, c.before, c.limit, err, c.field)
		}
	}
}
