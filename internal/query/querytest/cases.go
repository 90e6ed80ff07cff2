package querytest

import "time"

// FunnelCase is a small funnel query whose answer was worked out by hand.
// Want holds literal numbers; it is never computed by calling Funnel.
type FunnelCase struct {
	// Name says which edge case the case covers.
	Name string
	// Events are the events of the case. The query runs on live events
	// (test false); some cases include test events to show they are ignored.
	Events []Event
	// Steps are the funnel steps.
	Steps []string
	// From and To are the first and last day of the range.
	From, To time.Time
	// WindowHours is the conversion window.
	WindowHours int
	// Want is the expected count per step.
	Want []int64
}

// at returns 2026-03-<d> hh:mm UTC. March 2, 2026 is a Monday.
func at(d, hh, mm int) time.Time {
	return time.Date(2026, 3, d, hh, mm, 0, 0, time.UTC)
}

// ev returns a live, non-bot event.
func ev(user, name string, t time.Time) Event {
	return Event{DistinctID: user, Name: name, Time: t}
}

// FunnelCases returns the hand-checked funnel cases. Each case's comment
// explains, user by user, why Want is what it is.
func FunnelCases() []FunnelCase {
	signupPurchase := []string{"signup", "purchase"}
	return []FunnelCase{
		{
			// u1: signup 10:00, purchase exactly 24h later: the window's
			// end counts. → [1, 1]
			Name: "window boundary exactly windowHours counts",
			Events: []Event{
				ev("u1", "signup", at(2, 10, 0)),
				ev("u1", "purchase", at(3, 10, 0)),
			},
			Steps: signupPurchase, From: at(2, 0, 0), To: at(3, 0, 0), WindowHours: 24,
			Want: []int64{1, 1},
		},
		{
			// u1: purchase 24h plus 1µs after signup: too late. → [1, 0]
			Name: "one microsecond over the window does not count",
			Events: []Event{
				ev("u1", "signup", at(2, 10, 0)),
				ev("u1", "purchase", at(3, 10, 0).Add(time.Microsecond)),
			},
			Steps: signupPurchase, From: at(2, 0, 0), To: at(3, 0, 0), WindowHours: 24,
			Want: []int64{1, 0},
		},
		{
			// u1: purchase at the very time of signup: not strictly later,
			// stops at step 0. u2: purchase 1µs after signup converts.
			// → [2, 1]
			Name: "equal timestamps do not advance",
			Events: []Event{
				ev("u1", "signup", at(2, 10, 0)),
				ev("u1", "purchase", at(2, 10, 0)),
				ev("u2", "signup", at(2, 10, 0)),
				ev("u2", "purchase", at(2, 10, 0).Add(time.Microsecond)),
			},
			Steps: signupPurchase, From: at(2, 0, 0), To: at(2, 0, 0), WindowHours: 1,
			Want: []int64{2, 1},
		},
		{
			// Range is March 3–4. u1: signup on March 2 is ignored; the
			// signup at 03-03 12:00 anchors and the purchase at 13:00
			// converts. u2: only a signup before the range, so u2 is not in
			// the funnel even though the purchase is in range. u3: the
			// purchase at 02:00 follows the ignored early signup but
			// precedes the anchoring signup at 05:00, so u3 stops at step 0.
			// → [2, 1]
			Name: "step-0 event before from is ignored; a later in-range one anchors",
			Events: []Event{
				ev("u1", "signup", at(2, 23, 0)),
				ev("u1", "purchase", at(3, 1, 0)),
				ev("u1", "signup", at(3, 12, 0)),
				ev("u1", "purchase", at(3, 13, 0)),
				ev("u2", "signup", at(2, 23, 0)),
				ev("u2", "purchase", at(3, 1, 0)),
				ev("u3", "signup", at(2, 22, 0)),
				ev("u3", "purchase", at(3, 2, 0)),
				ev("u3", "signup", at(3, 5, 0)),
			},
			Steps: signupPurchase, From: at(3, 0, 0), To: at(4, 0, 0), WindowHours: 24,
			Want: []int64{2, 1},
		},
		{
			// Range is March 2 only, window 48h. u1: signup 03-02 20:00,
			// purchase 03-04 19:00 (47h later, after To) converts. u2:
			// signup 03-02 23:59, purchase 03-05 00:00 is 48h01m later:
			// too late. u3: signup 03-03 09:00 is after To, so u3 is not in
			// the funnel. → [2, 1]
			Name: "conversion after to but inside the window counts",
			Events: []Event{
				ev("u1", "signup", at(2, 20, 0)),
				ev("u1", "purchase", at(4, 19, 0)),
				ev("u2", "signup", at(2, 23, 59)),
				ev("u2", "purchase", at(5, 0, 0)),
				ev("u3", "signup", at(3, 9, 0)),
				ev("u3", "purchase", at(3, 10, 0)),
			},
			Steps: signupPurchase, From: at(2, 0, 0), To: at(2, 0, 0), WindowHours: 48,
			Want: []int64{2, 1},
		},
		{
			// Steps [page_viewed, page_viewed, signup]. u1: one page view
			// cannot be both steps; stops at step 0. u2: two page views at
			// the same instant; the second is not strictly later, stops at
			// step 0. u3: page views at 10:00 and 10:30, signup 11:00:
			// reaches step 2. → [3, 1, 1]
			Name: "same event name in two consecutive steps needs two distinct later events",
			Events: []Event{
				ev("u1", "page_viewed", at(2, 10, 0)),
				ev("u1", "signup", at(2, 11, 0)),
				ev("u2", "page_viewed", at(2, 10, 0)),
				ev("u2", "page_viewed", at(2, 10, 0)),
				ev("u2", "signup", at(2, 11, 0)),
				ev("u3", "page_viewed", at(2, 10, 0)),
				ev("u3", "page_viewed", at(2, 10, 30)),
				ev("u3", "signup", at(2, 11, 0)),
			},
			Steps: []string{"page_viewed", "page_viewed", "signup"}, From: at(2, 0, 0), To: at(2, 0, 0), WindowHours: 24,
			Want: []int64{3, 1, 1},
		},
		{
			// Steps [a, b, a]. u1: a 10:00, b 11:00; the only a is before b,
			// so step 2 fails. u2: a 10:00, b 11:00, a 12:00 reaches step 2.
			// u3: a 10:00, then a and b both at 11:00; b at 11:00 is step 1
			// and the a at 11:00 is not strictly later. → [3, 3, 1]
			Name: "same event name in steps 0 and 2",
			Events: []Event{
				ev("u1", "a", at(2, 10, 0)),
				ev("u1", "b", at(2, 11, 0)),
				ev("u2", "a", at(2, 10, 0)),
				ev("u2", "b", at(2, 11, 0)),
				ev("u2", "a", at(2, 12, 0)),
				ev("u3", "a", at(2, 10, 0)),
				ev("u3", "a", at(2, 11, 0)),
				ev("u3", "b", at(2, 11, 0)),
			},
			Steps: []string{"a", "b", "a"}, From: at(2, 0, 0), To: at(2, 0, 0), WindowHours: 24,
			Want: []int64{3, 3, 1},
		},
		{
			// Window 1h. u1: first signup 10:00 anchors; purchase 12:00 is
			// too late. A second signup at 13:00 with a purchase at 13:30
			// would convert, but only the first signup anchors. → [1, 0]
			Name: "first occurrence anchors; a later second attempt does not count",
			Events: []Event{
				ev("u1", "signup", at(2, 10, 0)),
				ev("u1", "purchase", at(2, 12, 0)),
				ev("u1", "signup", at(2, 13, 0)),
				ev("u1", "purchase", at(2, 13, 30)),
			},
			Steps: signupPurchase, From: at(2, 0, 0), To: at(2, 0, 0), WindowHours: 1,
			Want: []int64{1, 0},
		},
		{
			// ユーザー7: café_opened then 注文 two hours later: converts.
			// émilie: "cafe_opened" (no accent) is another event; her
			// café_opened at 10:00 anchors, her 注文 at 08:00 is earlier:
			// stops at step 0. Émilie (capital É) is a different user with
			// only 注文: not in the funnel. → [2, 1]
			Name: "unicode event names and distinct ids",
			Events: []Event{
				ev("ユーザー7", "café_opened", at(2, 10, 0)),
				ev("ユーザー7", "注文", at(2, 12, 0)),
				ev("émilie", "cafe_opened", at(2, 9, 0)),
				ev("émilie", "注文", at(2, 8, 0)),
				ev("émilie", "café_opened", at(2, 10, 0)),
				ev("Émilie", "注文", at(2, 11, 0)),
			},
			Steps: []string{"café_opened", "注文"}, From: at(2, 0, 0), To: at(2, 0, 0), WindowHours: 24,
			Want: []int64{2, 1},
		},
		{
			// Window 1h. u1: the signup is a test event,
			// so u1 is not in the funnel. u2: the purchase is a bot event:
			// stops at step 0. u3: the bot signup at 09:00 is ignored (it
			// would convert with the purchase at 09:30); the live signup at
			// 12:00 anchors and nothing follows: stops at step 0. u4: test
			// purchase ignored: stops at step 0. → [3, 0]
			Name:   "test and bot events are ignored",
			Events: testAndBotEvents(),
			Steps:  signupPurchase, From: at(2, 0, 0), To: at(2, 0, 0), WindowHours: 1,
			Want: []int64{3, 0},
		},
		{
			// Steps [signup, activate, purchase], window 2h. u1: signup
			// 10:00, activate 10:30 (step 1) and again 11:45. The purchase
			// at 12:40 is 2h10m after the first activate: too late; the
			// second activate does not move the anchor. u2: signups 10:00
			// and 11:00, activate 12:30 is 2h30m after the first: stops at
			// step 0. → [2, 1, 0]
			Name: "repeats of step N-1 do not move the anchor",
			Events: []Event{
				ev("u1", "signup", at(2, 10, 0)),
				ev("u1", "activate", at(2, 10, 30)),
				ev("u1", "activate", at(2, 11, 45)),
				ev("u1", "purchase", at(2, 12, 40)),
				ev("u2", "signup", at(2, 10, 0)),
				ev("u2", "signup", at(2, 11, 0)),
				ev("u2", "activate", at(2, 12, 30)),
			},
			Steps: []string{"signup", "activate", "purchase"}, From: at(2, 0, 0), To: at(2, 0, 0), WindowHours: 2,
			Want: []int64{2, 1, 0},
		},
		{
			// Steps [signup, activate, purchase], window 24h, range March
			// 2–3. Events are listed out of time order on purpose.
			// alice: all three steps within hours: step 2.
			// bob: signup, activate 23h later, purchase 25h after the
			// activate: step 1.
			// carol: activate then signup; no activate after the signup:
			// step 0.
			// dave: purchase only: not in the funnel.
			// erin: signup 03-03 23:00 (last hour of the range), activate
			// 03-04 22:00, purchase 03-05 21:59: step 2.
			// frank: signup on 03-04, after To: not in the funnel.
			// → [4, 3, 2]
			Name: "several users mixed",
			Events: []Event{
				ev("alice", "purchase", at(2, 12, 0)),
				ev("alice", "activate", at(2, 11, 0)),
				ev("alice", "signup", at(2, 10, 0)),
				ev("bob", "signup", at(2, 9, 0)),
				ev("bob", "activate", at(3, 8, 0)),
				ev("bob", "purchase", at(4, 9, 0)),
				ev("carol", "activate", at(2, 9, 0)),
				ev("carol", "signup", at(2, 10, 0)),
				ev("dave", "purchase", at(2, 10, 0)),
				ev("erin", "purchase", at(5, 21, 59)),
				ev("erin", "signup", at(3, 23, 0)),
				ev("erin", "activate", at(4, 22, 0)),
				ev("frank", "signup", at(4, 0, 0)),
				ev("frank", "activate", at(4, 1, 0)),
			},
			Steps: []string{"signup", "activate", "purchase"}, From: at(2, 0, 0), To: at(3, 0, 0), WindowHours: 24,
			Want: []int64{4, 3, 2},
		},
		{
			// No event matches step 0 in the range. → [0, 0]
			Name: "nobody enters",
			Events: []Event{
				ev("u1", "purchase", at(2, 10, 0)),
			},
			Steps: signupPurchase, From: at(2, 0, 0), To: at(2, 0, 0), WindowHours: 24,
			Want: []int64{0, 0},
		},
	}
}

// testAndBotEvents are the events of the test-and-bot case.
func testAndBotEvents() []Event {
	testSignup := ev("u1", "signup", at(2, 10, 0))
	testSignup.Test = true
	botPurchase := ev("u2", "purchase", at(2, 10, 30))
	botPurchase.Bot = true
	botSignup := ev("u3", "signup", at(2, 9, 0))
	botSignup.Bot = true
	testPurchase := ev("u4", "purchase", at(2, 10, 30))
	testPurchase.Test = true
	return []Event{
		testSignup,
		ev("u1", "purchase", at(2, 10, 30)),
		ev("u2", "signup", at(2, 10, 0)),
		botPurchase,
		botSignup,
		ev("u3", "purchase", at(2, 9, 30)),
		ev("u3", "signup", at(2, 12, 0)),
		ev("u4", "signup", at(2, 10, 0)),
		testPurchase,
	}
}

// GroupCase is a small dataset whose users belong to companies, with the
// answers of a funnel and a trend worked out by hand both by user and by
// company (aggregateBy "company"). Users and groups give different
// answers, so a store that counted users would fail it.
type GroupCase struct {
	Events      []Event
	Steps       []string
	From, To    time.Time
	WindowHours int
	// FunnelUsers and FunnelGroups are the funnel's counts per step.
	FunnelUsers, FunnelGroups []int64
	// TrendEvent is counted per day from From to To; TrendTotal is its
	// events with a company, TrendUsers its distinct users (with or
	// without a company), TrendGroups its distinct companies.
	TrendEvent                          string
	TrendTotal, TrendUsers, TrendGroups []int64
}

// GroupCases returns the hand-checked group case. Days are 2026-03-02
// and 03-03.
//
// Funnel signup → invite_sent, 24 hours:
//   - acme: u1 signs up on the 2nd at 10:00, u2 (also acme) sends an
//     invite at 11:00. Neither user converts, the company does.
//   - "globex \"eu\" 株式会社": u3 signs up, sends no invite.
//   - u4 has no company: signs up and invites, counted by user only.
//   - u5 signs up at 09:00 without a company, then at 12:00 as a
//     member of initech, which sends no invite: initech enters the
//     funnel with the later event.
//   - u6 signs up in the team acme, which is no company.
//
// By user: u1, u3, u4, u5, u6 sign up, u4 converts → [5, 1]. By company:
// acme, globex, initech enter, acme converts → [3, 1].
//
// Trend of page_viewed, per day: on the 2nd u1 twice, u2 once (acme), u3
// once (globex), u4 three times (no company); on the 3rd u2 once (acme),
// u4 once. Events with a company: [4, 1]; users: [4, 2]; companies:
// [2, 1].
func GroupCases() GroupCase {
	company := func(key string) map[string]any {
		return map[string]any{"$groups": map[string]any{"company": key}, "plan": "pro"}
	}
	acme, globex, initech := company("acme"), company(`globex "eu" 株式会社`), company("initech")
	in := func(e Event, props map[string]any) Event { e.Properties = props; return e }
	return GroupCase{
		Events: []Event{
			in(ev("u1", "signup", at(2, 10, 0)), acme),
			in(ev("u2", "invite_sent", at(2, 11, 0)), acme),
			in(ev("u3", "signup", at(2, 10, 0)), globex),
			ev("u4", "signup", at(2, 10, 0)),
			ev("u4", "invite_sent", at(2, 10, 30)),
			ev("u5", "signup", at(2, 9, 0)),
			in(ev("u5", "signup", at(2, 12, 0)), initech),
			// A team is another group type, not counted as a company.
			in(ev("u6", "signup", at(2, 12, 0)), map[string]any{"$groups": map[string]any{"team": "acme"}}),

			in(ev("u1", "page_viewed", at(2, 8, 0)), acme),
			in(ev("u1", "page_viewed", at(2, 9, 0)), acme),
			in(ev("u2", "page_viewed", at(2, 9, 30)), acme),
			in(ev("u3", "page_viewed", at(2, 9, 0)), globex),
			ev("u4", "page_viewed", at(2, 9, 0)),
			ev("u4", "page_viewed", at(2, 10, 0)),
			ev("u4", "page_viewed", at(2, 11, 0)),
			in(ev("u2", "page_viewed", at(3, 9, 0)), acme),
			ev("u4", "page_viewed", at(3, 9, 0)),
		},
		Steps: []string{"signup", "invite_sent"}, From: at(2, 0, 0), To: at(3, 0, 0), WindowHours: 24,
		FunnelUsers: []int64{5, 1}, FunnelGroups: []int64{3, 1},
		TrendEvent: "page_viewed", TrendTotal: []int64{4, 1}, TrendUsers: []int64{4, 2}, TrendGroups: []int64{2, 1},
	}
}

// FunnelViewsCase is a funnel broken down by a property whose time to
// convert and conversion over time, of the whole funnel and of each
// breakdown row, were worked out by hand. The wants are literal numbers,
// never computed by calling FunnelTimesBy or FunnelOverTimeBy.
type FunnelViewsCase struct {
	Events      []Event
	Steps       []string
	From, To    time.Time
	WindowHours int
	Breakdown   string
	Limit       int
	// Counts and Times are the whole funnel's; Rows each breakdown row's,
	// in the steps view's order (the other values last), with their own.
	Counts []int64
	Times  []StepTime
	Rows   []FunnelTimesRow
	// Days are the whole funnel's counts on each day from From to To;
	// RowDays[i] are Rows[i]'s.
	Days    [][]int64
	RowDays [][][]int64
}

// FunnelViewsCases returns the hand-checked case of the views with a
// breakdown: signup → paid within 48 hours on 2026-03-02 and 03-03, by
// browser, the top 2 values and the others.
//
//   - Chrome: a pays 10 s after signing up on the 2nd, b 2 h after, on
//     the 2nd; c signs up on the 3rd and never pays. → [3, 2].
//   - Firefox: d signs up on the 2nd at 09:00 in Firefox and again at
//     20:00 in Chrome (their value is the first sign-up's) and pays 24 h
//     after the first; e signs up on the 3rd. → [2, 1].
//   - Other values, 1 user each, ranked "", Edge, Safari (ties by value):
//     h ("") pays 30 s after signing up on the 2nd; i signs up on the 2nd
//     in Safari and Edge at the same instant (Edge, the least) and never
//     pays; f (Safari) pays 60 s after signing up on the 3rd. → [3, 2].
//
// Whole funnel: 8 entered, 5 paid, after 10 s, 30 s, 60 s, 2 h, 24 h:
// lower median 60 s, one user each in 10–30 s, 30 s–1 min, 1–5 min,
// 1–3 h and 1–3 days. Chrome: 10 s and 2 h, median 10 s. Firefox: 24 h.
// Other: 30 s and 60 s, median 30 s.
//
// By day of sign-up: the 2nd a, b, d, h, i enter and a, b, d, h pay →
// [5, 4]; the 3rd c, e, f enter and f pays → [3, 1]. Chrome [2, 2] and
// [1, 0]; Firefox [1, 1] and [1, 0]; other [2, 1] and [1, 1].
func FunnelViewsCases() FunnelViewsCase {
	in := func(e Event, browser string) Event { e.Browser = browser; return e }
	sec := func(d, hh, mm, ss int) time.Time { return at(d, hh, mm).Add(time.Duration(ss) * time.Second) }
	// hist is a histogram with one user in each bucket listed.
	hist := func(buckets ...int) []int64 {
		h := make([]int64, len(ConvertBuckets))
		for _, k := range buckets {
			h[k]++
		}
		return h
	}
	value := func(v string) *string { return &v }
	return FunnelViewsCase{
		Events: []Event{
			in(ev("a", "signup", at(2, 9, 0)), "Chrome"),
			ev("a", "paid", sec(2, 9, 0, 10)),
			in(ev("b", "signup", at(2, 10, 0)), "Chrome"),
			ev("b", "paid", at(2, 12, 0)),
			in(ev("c", "signup", at(3, 8, 0)), "Chrome"),
			in(ev("d", "signup", at(2, 9, 0)), "Firefox"),
			in(ev("d", "signup", at(2, 20, 0)), "Chrome"),
			ev("d", "paid", at(3, 9, 0)),
			in(ev("e", "signup", at(3, 9, 0)), "Firefox"),
			ev("h", "signup", at(2, 11, 0)),
			ev("h", "paid", sec(2, 11, 0, 30)),
			in(ev("i", "signup", at(2, 13, 0)), "Safari"),
			in(ev("i", "signup", at(2, 13, 0)), "Edge"),
			in(ev("f", "signup", at(3, 10, 0)), "Safari"),
			ev("f", "paid", at(3, 10, 1)),
		},
		Steps: []string{"signup", "paid"}, From: at(2, 0, 0), To: at(3, 0, 0), WindowHours: 48,
		Breakdown: "browser", Limit: 2,
		Counts: []int64{8, 5},
		Times:  []StepTime{{Converted: 5, Median: time.Minute, Histogram: hist(1, 2, 3, 6, 8)}},
		Rows: []FunnelTimesRow{
			{Value: value("Chrome"), Counts: []int64{3, 2}, Times: []StepTime{{Converted: 2, Median: 10 * time.Second, Histogram: hist(1, 6)}}},
			{Value: value("Firefox"), Counts: []int64{2, 1}, Times: []StepTime{{Converted: 1, Median: 24 * time.Hour, Histogram: hist(8)}}},
			{Other: true, Counts: []int64{3, 2}, Times: []StepTime{{Converted: 2, Median: 30 * time.Second, Histogram: hist(2, 3)}}},
		},
		Days:    [][]int64{{5, 4}, {3, 1}},
		RowDays: [][][]int64{{{2, 2}, {1, 0}}, {{1, 1}, {1, 0}}, {{2, 1}, {1, 1}}},
	}
}

// SessionCase is a small sessions query whose answer was worked out by
// hand; Want holds literal numbers, never computed by calling Sessions.
type SessionCase struct {
	Name     string
	Events   []Event
	From, To time.Time
	Interval string
	Limit    int
	Filters  []Filter
	Want     SessionsResult
}

// pv returns a live page view of path, with $session_id sid when not "".
func pv(user, path string, t time.Time, sid string) Event {
	e := Event{DistinctID: user, Name: "$pageview", Time: t, Path: path}
	if sid != "" {
		e.Properties = map[string]any{"$session_id": sid}
	}
	return e
}

// stats is SessionStats in one line: visits, bounces, page views and the
// summed duration.
func stats(visits, bounces, pageviews int64, duration time.Duration) SessionStats {
	return SessionStats{Visits: visits, Bounces: bounces, Pageviews: pageviews, DurationMicros: duration.Microseconds()}
}

// SessionCases returns the hand-checked sessions cases. Each case's
// comment explains, visit by visit, why Want is what it is.
func SessionCases() []SessionCase {
	return []SessionCase{
		{
			// u1: one page view: a bounce of 0 s entering and leaving by
			// /a. u2: / then /pricing 5 minutes later: 2 page views, not a
			// bounce, 300 s, entering by / and leaving by /pricing. u3: /a
			// at 10:00 and /b at 10:31: 31 minutes apart, so two visits,
			// each a bounce. → 4 visits of 3 users, 3 bounces, 5 page
			// views, 300 s in all; entry / 1, /a 2, /b 1 (ties by path).
			Name: "a bounce, a non-bounce, and a 31-minute gap splitting a visit",
			Events: []Event{
				pv("u1", "/a", at(2, 10, 0), ""),
				pv("u2", "/", at(2, 10, 0), ""),
				pv("u2", "/pricing", at(2, 10, 5), ""),
				pv("u3", "/a", at(2, 10, 0), ""),
				pv("u3", "/b", at(2, 10, 31), ""),
			},
			From: at(2, 0, 0), To: at(2, 0, 0), Interval: "day", Limit: 10,
			Want: SessionsResult{
				Totals: stats(4, 3, 5, 5*time.Minute), Visitors: 3,
				Buckets: []SessionBucket{{Date: at(2, 0, 0), SessionStats: stats(4, 3, 5, 5*time.Minute)}},
				Entry:   []SessionPage{{"/a", stats(2, 2, 2, 0)}, {"/", stats(1, 0, 2, 5*time.Minute)}, {"/b", stats(1, 1, 1, 0)}},
				Exit:    []SessionPage{{"/a", stats(2, 2, 2, 0)}, {"/b", stats(1, 1, 1, 0)}, {"/pricing", stats(1, 0, 2, 5*time.Minute)}},
			},
		},
		{
			// Range March 2. u1: 23:50 /x and 00:10 on March 3 /y: one
			// visit of 20 minutes that starts on March 2 and so belongs to
			// it whole, leaving by /y. u2: 23:45 on March 1 and 00:05 on
			// March 2, 20 minutes apart: the visit started before the
			// range and is not counted. u3: 00:05 on March 3: after the
			// range. → 1 visit, 0 bounces, 2 page views, 1200 s.
			Name: "a visit across midnight belongs to the day it starts",
			Events: []Event{
				pv("u1", "/x", at(2, 23, 50), ""),
				pv("u1", "/y", at(3, 0, 10), ""),
				pv("u2", "/p", at(1, 23, 45), ""),
				pv("u2", "/q", at(2, 0, 5), ""),
				pv("u3", "/z", at(3, 0, 5), ""),
			},
			From: at(2, 0, 0), To: at(2, 0, 0), Interval: "hour", Limit: 10,
			Want: SessionsResult{
				Totals: stats(1, 0, 2, 20*time.Minute), Visitors: 1,
				Buckets: []SessionBucket{{Date: at(2, 23, 0), SessionStats: stats(1, 0, 2, 20*time.Minute)}},
				Entry:   []SessionPage{{"/x", stats(1, 0, 2, 20*time.Minute)}},
				Exit:    []SessionPage{{"/y", stats(1, 0, 2, 20*time.Minute)}},
			},
		},
		{
			// u1: a page view and $identify 1 minute later in session s1:
			// $identify is not an interaction, so a bounce of 60 s. u2: a
			// page view and a signup in s2: an interaction, not a bounce,
			// 120 s. u2 again: a page view 40 minutes after the signup,
			// still s2: 30 minutes or more apart, so a second visit (a
			// bounce). u3: a signup alone, no page view: a visit with no
			// entry or exit page, and not a bounce. → 4 visits of 3 users,
			// 2 bounces, 3 page views, 180 s; only page views name pages, so
			// u2's first visit leaves by /.
			Name: "$session_id visits, non-interactive events, and a visit without a page view",
			Events: []Event{
				pv("u1", "/", at(4, 9, 0), "s1"),
				{DistinctID: "u1", Name: "$identify", Time: at(4, 9, 1), Properties: map[string]any{"$session_id": "s1"}},
				pv("u2", "/", at(4, 9, 0), "s2"),
				{DistinctID: "u2", Name: "signup", Time: at(4, 9, 2), Path: "/signup", Properties: map[string]any{"$session_id": "s2"}},
				pv("u2", "/docs", at(4, 9, 42), "s2"),
				{DistinctID: "u3", Name: "signup", Time: at(4, 9, 0), Path: "/signup"},
			},
			From: at(4, 0, 0), To: at(4, 0, 0), Interval: "day", Limit: 1,
			Want: SessionsResult{
				Totals: stats(4, 2, 3, 3*time.Minute), Visitors: 3,
				Buckets: []SessionBucket{{Date: at(4, 0, 0), SessionStats: stats(4, 2, 3, 3*time.Minute)}},
				Entry:   []SessionPage{{"/", stats(2, 1, 2, 3*time.Minute)}},
				Exit:    []SessionPage{{"/", stats(2, 1, 2, 3*time.Minute)}},
			},
		},
		{
			// Entry page / and a page view of /pricing somewhere in the
			// visit. u1: / then /pricing 4 minutes later: enters by /
			// and views /pricing, kept (2 page views, 240 s). u2: / then
			// /docs: enters by / but never views /pricing, left out. u3:
			// /pricing then /: views /pricing but enters by /pricing, left
			// out. u4: a signup without a page view: no entry page, left
			// out. u5: /, then /pricing 31 minutes later: two visits, the
			// first enters by / without /pricing and the second enters by
			// /pricing, both left out. → 1 visit of 1 user, no bounce, 2
			// page views, 240 s, entering by / and leaving by /pricing.
			Name: "an entry page filter and an event filter together",
			Events: []Event{
				pv("u1", "/", at(5, 8, 0), "a"),
				pv("u1", "/pricing", at(5, 8, 4), "a"),
				pv("u2", "/", at(5, 8, 0), "b"),
				pv("u2", "/docs", at(5, 8, 1), "b"),
				pv("u3", "/pricing", at(5, 8, 0), ""),
				pv("u3", "/", at(5, 8, 2), ""),
				{DistinctID: "u4", Name: "signup", Time: at(5, 8, 0), Path: "/pricing"},
				pv("u5", "/", at(5, 9, 0), ""),
				pv("u5", "/pricing", at(5, 9, 31), ""),
			},
			From: at(5, 0, 0), To: at(5, 0, 0), Interval: "day", Limit: 10,
			Filters: []Filter{{"entry_page", "eq", "/"}, {"path", "eq", "/pricing"}},
			Want: SessionsResult{
				Totals: stats(1, 0, 2, 4*time.Minute), Visitors: 1,
				Buckets: []SessionBucket{{Date: at(5, 0, 0), SessionStats: stats(1, 0, 2, 4*time.Minute)}},
				Entry:   []SessionPage{{"/", stats(1, 0, 2, 4*time.Minute)}},
				Exit:    []SessionPage{{"/pricing", stats(1, 0, 2, 4*time.Minute)}},
			},
		},
		{
			// Exit page /b. u1: /a then /b: leaves by /b, kept (2 page
			// views, 60 s, not a bounce). u2: /b alone: enters and leaves
			// by /b, kept (a bounce). u3: /b then /a: leaves by /a, left
			// out. u4: /b then a click: its last page view is /b, so it
			// leaves by /b although the click came after, kept (1 page
			// view, not a bounce, 30 s). → 3 visits of 3 users, 1 bounce,
			// 4 page views, 90 s; entry /a 1, /b 2; exit /b 3.
			Name: "an exit page filter",
			Events: []Event{
				pv("u1", "/a", at(6, 8, 0), ""),
				pv("u1", "/b", at(6, 8, 1), ""),
				pv("u2", "/b", at(6, 8, 0), ""),
				pv("u3", "/b", at(6, 8, 0), ""),
				pv("u3", "/a", at(6, 8, 1), ""),
				pv("u4", "/b", at(6, 8, 0), ""),
				{DistinctID: "u4", Name: "button_clicked", Time: at(6, 8, 0).Add(30 * time.Second), Path: "/c"},
			},
			From: at(6, 0, 0), To: at(6, 0, 0), Interval: "day", Limit: 10,
			Filters: []Filter{{"exit_page", "eq", "/b"}},
			Want: SessionsResult{
				Totals: stats(3, 1, 4, 90*time.Second), Visitors: 3,
				Buckets: []SessionBucket{{Date: at(6, 0, 0), SessionStats: stats(3, 1, 4, 90*time.Second)}},
				Entry:   []SessionPage{{"/b", stats(2, 1, 2, 30*time.Second)}, {"/a", stats(1, 0, 2, time.Minute)}},
				Exit:    []SessionPage{{"/b", stats(3, 1, 4, 90*time.Second)}},
			},
		},
	}
}
