package boards

import (
	"regexp"
	"strconv"
	"time"

	"strata/internal/analytics"
)

// relativeDay is a board's relative date: N days before today, in the
// product's zone ("-0d" is today, "-6d" six days ago), as PostHog writes
// a dashboard's date filter. A board whose dateFrom and dateTo are both
// relative follows the calendar: "-6d" to "-0d" is the last 7 days on
// every day it is opened (docs/dashboard.md, "The board's range and
// filters").
var relativeDay = regexp.MustCompile(`^-([0-9]{1,4})d$`)

// relative reads a relative date's days back, and reports whether s is one.
func relative(s string) (int, bool) {
	m := relativeDay.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// resolveRange writes a board's range as the query API's dates: relative
// dates counted back from today in loc, absolute ones as they are.
func resolveRange(from, to string, now time.Time, loc *time.Location) (string, string) {
	today := analytics.Day.Truncate(analytics.Wall(now, loc))
	day := func(s string) string {
		if n, ok := relative(s); ok {
			return today.AddDate(0, 0, -n).Format(time.DateOnly)
		}
		return s
	}
	return day(from), day(to)
}

// checkRelative refuses a range that mixes a relative date with an
// absolute one, or whose relative end comes before its start.
func checkRelative(from, to string) error {
	f, fr := relative(from)
	t, tr := relative(to)
	switch {
	case fr != tr:
		return analytics.InvalidField("dateTo", "a board's range is two dates (YYYY-MM-DD) or two relative days (-6d to -0d), not one of each")
	case fr && t > f:
		return analytics.InvalidField("dateTo", "%s is before dateFrom %s", to, from)
	}
	return nil
}
