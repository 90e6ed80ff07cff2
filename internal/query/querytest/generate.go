package querytest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"strata/internal/enrich/ua"
)

// Dataset is a small random set of events together with one set of query
// parameters chosen to hit edge cases. Generate builds it from a seed.
type Dataset struct {
	// Base is the reference day of the dataset; most event times lie
	// between two days before and twenty days after it.
	Base time.Time
	// Events are the generated events, in no particular order.
	Events []Event
	// Steps are the funnel steps, 2 to 4 names, sometimes with a repeat.
	Steps []string
	// From and To are the first and last day of the query range.
	From, To time.Time
	// WindowHours is the funnel conversion window.
	WindowHours int
	// Filters are 0 to 2 global filters for a trend query.
	Filters []Filter
	// Breakdown is "" or the property a trend query breaks down by.
	Breakdown string
	// StepFilters are 0 to 2 filters for each funnel step, for the
	// funnel with step filters (FunnelSteps); Steps' funnel has none.
	StepFilters [][]Filter
	// Exclusions are 0 to 2 funnel exclusions, for the funnel with
	// exclusions and a breakdown (FunnelBreakdown, by Breakdown).
	Exclusions []FunnelExclusion
	// StartEvent and ReturnEvent are the retention events.
	StartEvent, ReturnEvent string
}

// firstBase is the earliest Base: a Monday in 2026.
var firstBase = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// namePool holds the event names a dataset draws from. All are 1 to 40
// characters and none starts with "$" or "message_".
var namePool = []string{
	"signup",
	"page_viewed",
	"button_clicked",
	"café_opened",
	"注文",
	"checkout_started",
	"Invite Sent",
	"x",
	"a_forty_character_event_name_exactly_40c", // 40 characters
}

// The pools for the fixed columns and custom properties; "" means not set.
var (
	pathPool     = []string{"/", "/pricing", "/docs/getting-started", "/café", "/Pricing/Team", ""}
	referrerPool = []string{"", "", "https://www.google.com/", "https://news.ycombinator.com/item?id=1"}
	browserPool  = []string{"Chrome", "Chrome", "Firefox", "Safari", "Edge", ""}
	osPool       = []string{"Mac OS X", "Windows", "Linux", "iOS", "Android", ""}
	devicePool   = []string{"Desktop", "Mobile", "Tablet", ""}
	planPool     = []string{"free", "pro", "Team"}
	sourcePool   = []string{"", "", "Google", "ChatGPT", "news.example.org"}
	channelPool  = []string{"", "direct", "search", "ai", "referral"}
	countryPool  = []string{"", "", "US", "DE", "NL", "BR"}
	regionPool   = []string{"", "Bavaria", "California", "São Paulo"}
	cityPool     = []string{"", "Munich", "San Francisco", "São Paulo"}
	// widthPool are viewport widths, one or two in each screen class and
	// at its edges (ua.ScreenClass).
	widthPool  = []int64{320, 575, 576, 991, 992, 1280, 1439, 1440, 2560}
	screenPool = []string{"mobile", "tablet", "laptop", "desktop"}
)

// Generate returns a reproducible random dataset for the seed. The same
// seed always gives the same dataset, and the random source is
// math/rand/v2 with rand.NewPCG(uint64(seed), 0).
func Generate(seed int64) Dataset {
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	// g draws what later columns add (the location and the screen class):
	// from a source of its own, so that r's draws, and every dataset
	// before them, stay as they were.
	g := rand.New(rand.NewPCG(uint64(seed), 1))
	ds := Dataset{Base: firstBase.AddDate(0, 0, r.IntN(61))}

	// Users: always one Japanese and one accented id, then a mix.
	nUsers := 3 + r.IntN(23)
	users := []string{"ユーザー7", "émilie"}
	for i := len(users); i < nUsers; i++ {
		switch r.IntN(4) {
		case 0:
			users = append(users, fmt.Sprintf("ユーザー%d", 100+i))
		case 1:
			users = append(users, fmt.Sprintf("émilie-%d", i))
		default:
			users = append(users, fmt.Sprintf("user_%d", i))
		}
	}

	// Event names: 3 to 5 from the pool, occasionally "$pageview".
	pool := append([]string(nil), namePool...)
	r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	names := pool[:3+r.IntN(3)]
	if r.IntN(5) == 0 {
		names[len(names)-1] = "$pageview"
	}

	// Funnel parameters.
	ds.Steps = pickSteps(r, names)
	ds.WindowHours = 1 + r.IntN(72)
	if r.IntN(8) == 0 {
		ds.WindowHours = 720
	}
	window := time.Duration(ds.WindowHours) * time.Hour

	// The range starts between one day before and five days after Base, so
	// events from two days before Base fall before From, and lasts 1 to 14
	// days, so events up to twenty days after Base fall after To.
	ds.From = ds.Base.AddDate(0, 0, r.IntN(7)-1)
	ds.To = ds.From.AddDate(0, 0, r.IntN(14))

	// Ordinary events on a coarse grid so that equal timestamps occur. The
	// first events go to each user in turn, so every user has one.
	nEvents := max(8+r.IntN(250), nUsers)
	for i := range nEvents {
		e := randomEvent(r, g, users, names)
		if i < nUsers {
			e.DistinctID = users[i]
		}
		e.Time = ds.Base.Add(gridOffset(r))
		ds.Events = append(ds.Events, e)
	}

	// Boundary pairs: after an earlier event of a user, the next funnel
	// step exactly at the window's end and one microsecond past it.
	// Anchors are preferably non-bot events of a step that has a next step.
	var anchors []Event
	for _, e := range ds.Events {
		if !e.Bot && slices.Contains(ds.Steps[:len(ds.Steps)-1], e.Name) {
			anchors = append(anchors, e)
		}
	}
	if len(anchors) == 0 {
		anchors = ds.Events
	}
	nPairs := 1 + r.IntN(10)
	for range nPairs {
		anchor := anchors[r.IntN(len(anchors))]
		next := names[r.IntN(len(names))]
		for i, step := range ds.Steps[:len(ds.Steps)-1] {
			if step == anchor.Name {
				next = ds.Steps[i+1]
				break
			}
		}
		for _, extra := range []time.Duration{0, time.Microsecond} {
			e := randomEvent(r, g, users, names)
			e.DistinctID = anchor.DistinctID
			e.Name = next
			e.Test, e.Bot = anchor.Test, false
			e.Time = anchor.Time.Add(window + extra)
			ds.Events = append(ds.Events, e)
		}
	}

	// Trend parameters.
	for range r.IntN(3) {
		ds.Filters = append(ds.Filters, randomFilter(r))
	}
	ds.Breakdown = []string{"", "browser", "properties.plan", "properties.n", "channel", "source"}[r.IntN(6)]
	if g.IntN(3) == 0 {
		ds.Breakdown = pick(g, []string{"country", "screen_class", "region", "city"})
	}
	if len(ds.Filters) < 2 && g.IntN(3) == 0 {
		ds.Filters = append(ds.Filters, geoFilter(g))
	}

	// Step filters: from a source of their own, as g's draws are.
	f := rand.New(rand.NewPCG(uint64(seed), 2))
	ds.StepFilters = make([][]Filter, len(ds.Steps))
	for i := range ds.Steps {
		for range f.IntN(3) {
			ds.StepFilters[i] = append(ds.StepFilters[i], randomFilter(f))
		}
	}
	for range f.IntN(3) {
		x := FunnelExclusion{Event: names[f.IntN(len(names))], FromStep: f.IntN(len(ds.Steps) - 1)}
		x.ToStep = x.FromStep + 1 + f.IntN(len(ds.Steps)-1-x.FromStep)
		if f.IntN(3) == 0 {
			x.Filters = []Filter{randomFilter(f)}
		}
		ds.Exclusions = append(ds.Exclusions, x)
	}

	// Retention parameters: the first step, and sometimes the same event.
	ds.StartEvent = ds.Steps[0]
	ds.ReturnEvent = names[r.IntN(len(names))]
	if r.IntN(3) == 0 {
		ds.ReturnEvent = ds.StartEvent
	}
	return ds
}

// pickSteps returns 2 to 4 funnel steps from names, sometimes repeating a
// name (for example [a, b, a] or [a, a]).
func pickSteps(r *rand.Rand, names []string) []string {
	n := 2 + r.IntN(3)
	steps := make([]string, n)
	for i := range steps {
		steps[i] = names[r.IntN(len(names))]
	}
	if r.IntN(4) == 0 {
		// Force a repeat of an earlier step.
		i := 1 + r.IntN(n-1)
		steps[i] = steps[r.IntN(i)]
	}
	return steps
}

// gridOffset returns an offset from Base between −2 and +20 days: mostly
// whole hours or whole minutes, sometimes with a microsecond part.
func gridOffset(r *rand.Rand) time.Duration {
	const minutes = 22 * 24 * 60
	switch k := r.IntN(10); {
	case k < 5:
		return time.Duration(r.IntN(22*24)-48) * time.Hour
	case k < 9:
		return time.Duration(r.IntN(minutes)-2*24*60) * time.Minute
	default:
		return time.Duration(r.Int64N(int64(minutes)*60*1e6)-2*24*3600*1e6) * time.Microsecond
	}
}

// randomEvent returns an event without a time: random user, name, columns
// and properties, about 5% test events and 5% bot events.
func randomEvent(r, g *rand.Rand, users, names []string) Event {
	e := Event{
		DistinctID: users[r.IntN(len(users))],
		Name:       names[r.IntN(len(names))],
		Path:       pick(r, pathPool),
		Referrer:   pick(r, referrerPool),
		Browser:    pick(r, browserPool),
		OS:         pick(r, osPool),
		DeviceType: pick(r, devicePool),
		Source:     pick(r, sourcePool),
		Channel:    pick(r, channelPool),
		UTMSource:  pick(r, []string{"", "", "newsletter", "chatgpt.com"}),
	}
	if e.Path != "" && r.IntN(5) != 0 {
		e.URL = "https://example.com" + e.Path
	}
	if r.IntN(20) == 0 {
		e.Test = true
	}
	if r.IntN(20) == 0 {
		e.Bot = true
		if r.IntN(2) == 0 {
			e.Name = "$bot_pageview"
		}
	}
	if r.IntN(10) != 0 { // otherwise the map stays nil
		e.Properties = map[string]any{}
		switch k := r.IntN(20); {
		case k == 0:
			e.Properties["plan"] = nil
		case k == 1:
			e.Properties["plan"] = "" // set, but breaks down as ""
		case k < 16:
			e.Properties["plan"] = pick(r, planPool)
		} // else missing
		if r.IntN(4) != 0 {
			e.Properties["n"] = int64(r.IntN(21))
		}
		switch r.IntN(5) {
		case 0:
			e.Properties["beta"] = nil
		case 1, 2:
			e.Properties["beta"] = r.IntN(2) == 0
		}
	}
	// Where the client was (ingest's GeoIP lookup), and the viewport the
	// browser SDK reported, which ingest turns into the screen class.
	e.Country = pick(g, countryPool)
	if e.Country != "" && g.IntN(2) == 0 {
		e.Region, e.City = pick(g, regionPool), pick(g, cityPool)
	}
	if g.IntN(3) != 0 {
		w := widthPool[g.IntN(len(widthPool))]
		if e.Properties == nil {
			e.Properties = map[string]any{}
		}
		e.Properties["$viewport_width"] = w
		e.ScreenClass = ua.ScreenClass(float64(w))
	}
	return e
}

// randomFilter returns one filter, its operator drawn from all operators
// and its value taken from the pools so that it sometimes matches.
func randomFilter(r *rand.Rand) Filter {
	operators := []string{"eq", "neq", "contains", "not_contains", "regex", "gt", "lt", "is_set", "is_not_set"}
	op := pick(r, operators)
	switch op {
	case "eq", "neq":
		switch r.IntN(5) {
		case 0:
			return Filter{"browser", op, pick(r, browserPool[:5])}
		case 1:
			return Filter{"properties.plan", op, pick(r, planPool)}
		case 2:
			if r.IntN(2) == 0 {
				return Filter{"properties.n", op, int64(r.IntN(21))}
			}
			return Filter{"properties.n", op, float64(r.IntN(21))}
		case 3:
			return Filter{"properties.beta", op, r.IntN(2) == 0}
		default:
			return Filter{"channel", op, pick(r, channelPool[1:])}
		}
	case "contains", "not_contains":
		switch r.IntN(3) {
		case 0:
			return Filter{"path", op, pick(r, []string{"pric", "CAFÉ", "/docs", "team"})}
		case 1:
			return Filter{"url", op, pick(r, []string{"example.com/p", "HTTPS", "café"})}
		default:
			return Filter{"properties.plan", op, pick(r, []string{"PRO", "ee", "t"})}
		}
	case "regex":
		if r.IntN(2) == 0 {
			return Filter{"path", op, pick(r, []string{"^/p", "(?i)^/pricing", "é$", "^/$"})}
		}
		return Filter{"os", op, pick(r, []string{"^(iOS|Android)$", "Win", "(?i)mac"})}
	case "gt", "lt":
		if r.IntN(2) == 0 {
			return Filter{"properties.n", op, int64(r.IntN(21))}
		}
		return Filter{"properties.n", op, float64(r.IntN(40)) / 2}
	default: // is_set, is_not_set
		property := pick(r, []string{"browser", "referrer", "device_type", "properties.plan", "properties.beta", "properties.missing", "source", "utm_source"})
		return Filter{property, op, nil}
	}
}

// geoFilter returns a filter on the location or the screen class, with
// any operator but the numeric ones.
func geoFilter(g *rand.Rand) Filter {
	op := pick(g, []string{"eq", "neq", "contains", "not_contains", "regex", "is_set", "is_not_set"})
	switch op {
	case "eq", "neq":
		if g.IntN(2) == 0 {
			return Filter{"country", op, pick(g, countryPool[2:])}
		}
		return Filter{"screen_class", op, pick(g, screenPool)}
	case "contains", "not_contains":
		return Filter{"city", op, pick(g, []string{"MUN", "são", "san "})}
	case "regex":
		return Filter{"region", op, pick(g, []string{"^Bav", "(?i)paulo$", "a"})}
	}
	return Filter{pick(g, []string{"country", "region", "city", "screen_class"}), op, nil}
}

// pick returns a random element of list.
func pick(r *rand.Rand, list []string) string {
	return list[r.IntN(len(list))]
}

// namesOK reports whether an event name is one the generator may use:
// 1 to 40 characters, and not starting with "$" or "message_" unless it is
// "$pageview" or "$bot_pageview". The tests check every generated name.
func namesOK(name string) bool {
	n := len([]rune(name))
	if n < 1 || n > 40 {
		return false
	}
	if name == "$pageview" || name == "$bot_pageview" {
		return true
	}
	return !strings.HasPrefix(name, "$") && !strings.HasPrefix(name, "message_")
}

// SessionDataset is a random set of visits and one sessions query over it.
type SessionDataset struct {
	Events []Event
	// From and To are the first and last day of the range.
	From, To time.Time
	Interval string
	Filters  []Filter
	Limit    int
}

// sessionNames are the event names visits are made of: mostly page views,
// the SDK's non-interactive events, and interactions.
var sessionNames = []string{"$pageview", "$pageview", "$pageview", "$pageview", "$identify", "$exposure", "signup", "button_clicked"}

// sessionGaps are the gaps between a visit's consecutive events, chosen to
// sit on both sides of the 30-minute rule.
var sessionGaps = []time.Duration{0, time.Microsecond, time.Minute, 10 * time.Minute, 29*time.Minute + 59*time.Second,
	30 * time.Minute, 30*time.Minute + time.Microsecond, 31 * time.Minute, 2 * time.Hour}

// GenerateSessions returns a reproducible random dataset for the sessions
// query: runs of events per user, with and without $session_id (a session
// id now and then reused after a long gap, or shared by two users), gaps
// around 30 minutes, runs that start just before the range, around
// midnight, just before its end and within a day after it, and the usual
// share of bot and test events.
func GenerateSessions(seed int64) SessionDataset {
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	// g draws the location and the screen class, as in Generate.
	g := rand.New(rand.NewPCG(uint64(seed), 2))
	base := firstBase.AddDate(0, 0, r.IntN(61))
	ds := SessionDataset{From: base, To: base.AddDate(0, 0, r.IntN(4)),
		Interval: []string{"day", "hour", "week", "month"}[r.IntN(4)], Limit: 1 + r.IntN(4)}
	for range r.IntN(3) {
		ds.Filters = append(ds.Filters, randomFilter(r))
	}
	end := ds.To.AddDate(0, 0, 1)
	// Where runs start: around the range's edges and its midnights, or
	// anywhere from a day before it to a day after.
	starts := []time.Time{ds.From, ds.From.Add(-sessionGap), end, end.Add(sessionLookahead), ds.From.AddDate(0, 0, 1)}
	users := []string{"ユーザー7", "émilie", "user_2", "user_3", "user_4", "user_5"}[:2+r.IntN(5)]
	nRuns := 3 + r.IntN(25)
	for i := range nRuns {
		user := users[r.IntN(len(users))]
		var t time.Time
		if r.IntN(2) == 0 {
			t = starts[r.IntN(len(starts))].Add(time.Duration(r.IntN(121)-60) * time.Minute)
		} else {
			t = ds.From.AddDate(0, 0, -1).Add(time.Duration(r.Int64N(int64(end.Sub(ds.From) + 2*day))))
		}
		t = t.Truncate(time.Microsecond)
		sid := ""
		switch r.IntN(4) {
		case 0: // none: the 30-minute rule alone makes the visits
		case 1:
			sid = fmt.Sprintf("s%d", r.IntN(3)) // reused by other runs and users
		default:
			sid = fmt.Sprintf("run-%d-%d", seed, i)
		}
		for range 1 + r.IntN(6) {
			e := randomEvent(r, g, users, sessionNames)
			e.DistinctID, e.Name, e.Time = user, pick(r, sessionNames), t
			if e.Bot && r.IntN(2) == 0 {
				e.Name = "$bot_pageview"
			}
			if sid != "" && r.IntN(10) != 0 {
				if e.Properties == nil {
					e.Properties = map[string]any{}
				}
				e.Properties["$session_id"] = sid
			}
			ds.Events = append(ds.Events, e)
			t = t.Add(sessionGaps[r.IntN(len(sessionGaps))])
		}
	}
	// An entry or exit page filter now and then, drawn after the events
	// so that the datasets before it stay as they were; its path is
	// mostly one the page views have, so that it keeps some visits.
	if r.IntN(2) == 0 {
		prop := pick(r, []string{"entry_page", "exit_page"})
		var paths []string
		for _, e := range ds.Events {
			if e.Name == "$pageview" {
				paths = append(paths, e.Path)
			}
		}
		path := "/nowhere"
		if len(paths) > 0 && r.IntN(5) != 0 {
			path = pick(r, paths)
		}
		ds.Filters = append(ds.Filters, Filter{prop, "eq", path})
	}
	return ds
}
