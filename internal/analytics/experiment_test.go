package analytics

import (
	"strings"
	"testing"
	"time"
)

func TestExperimentValidate(t *testing.T) {
	day := func(d int) *time.Time { t := time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC); return &t }
	ok := Experiment{Name: "Pricing copy test", Holdout: 25, SecondaryEvents: []string{"checkout"}, StartDate: day(1), EndDate: day(1)}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid experiment: %v", err)
	}
	for _, c := range []struct {
		name   string
		change func(*Experiment)
		want   string
	}{
		{"no name", func(e *Experiment) { e.Name = "" }, "name: is required"},
		{"holdout over 25", func(e *Experiment) { e.Holdout = 25.01 }, "holdout: must be a percentage from 0 to 25"},
		{"holdout negative", func(e *Experiment) { e.Holdout = -1 }, "holdout: must be"},
		{"holdout three decimals", func(e *Experiment) { e.Holdout = 1.005 }, "holdout: must be"},
		{"primary event too long", func(e *Experiment) { e.PrimaryEvent = strings.Repeat("e", 256) }, "primaryEvent: must be an event name"},
		{"empty secondary event", func(e *Experiment) { e.SecondaryEvents = []string{"a", ""} }, "secondaryEvents[1]: must be an event name"},
		{"too many secondary events", func(e *Experiment) { e.SecondaryEvents = make([]string, 11) }, "secondaryEvents: must list at most 10"},
		{"ends before it starts", func(e *Experiment) { e.EndDate = day(0) }, "endDate: must not be before startDate"},
	} {
		e := ok
		c.change(&e)
		if err := e.Validate(); err == nil || !strings.HasPrefix(AsError(err).Message, c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	if err := CheckArms(&Flag{Key: "k"}); err == nil || !strings.Contains(err.Error(), "needs 2 to 4 arms") {
		t.Errorf("a flag without arms: %v", err)
	}
}
