package privacy

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"strata/internal/analytics"
)

// The kinds of data a person leaves (docs/privacy.md, "What is stored
// about a person"). Error occurrences are $exception events and are
// deleted with the events; group memberships are the events' $groups
// property, deleted with them too and listed by the export.

// Events is a person's events. Sync, when set, waits until every event
// acknowledged before the call is in the store (the spool's), so that a
// deletion reaches the events acknowledged before it was requested.
type Events struct {
	Store analytics.PersonEventStore
	Sync  func(context.Context) error
}

func (Events) Name() string { return "events" }

func (k Events) DeletePersons(ctx context.Context, productID int64, ids []string) (int64, error) {
	if k.Sync != nil {
		if err := k.Sync(ctx); err != nil {
			return 0, err
		}
	}
	return k.Store.DeletePersons(ctx, productID, ids)
}

func (k Events) ExportPerson(ctx context.Context, productID int64, id string, emit func(any) error) error {
	if k.Sync != nil {
		if err := k.Sync(ctx); err != nil {
			return err
		}
	}
	return k.Store.PersonEvents(ctx, productID, id, func(e analytics.ExportedEvent) error { return emit(e) })
}

// maxExportGroups bounds the memberships an export gathers (a set that
// grows with the distinct groups, not with the events).
const maxExportGroups = 10_000

// Groups is a person's group memberships: the groups their events name.
// Deleting is the events' (the membership is a property of each event),
// so DeletePersons deletes nothing itself.
type Groups struct{ Events Events }

func (Groups) Name() string { return "groups" }

func (Groups) DeletePersons(context.Context, int64, []string) (int64, error) { return 0, nil }

// groupRow is one membership in the export.
type groupRow struct {
	Type      string    `json:"type"`
	Key       string    `json:"key"`
	FirstSeen time.Time `json:"firstSeen"`
}

func (k Groups) ExportPerson(ctx context.Context, productID int64, id string, emit func(any) error) error {
	seen := map[[2]string]time.Time{}
	err := k.Events.Store.PersonEvents(ctx, productID, id, func(e analytics.ExportedEvent) error {
		var p struct {
			Groups map[string]json.RawMessage `json:"$groups"`
		}
		if json.Unmarshal(e.Properties, &p) != nil {
			return nil
		}
		for typ, raw := range p.Groups {
			var key string
			if json.Unmarshal(raw, &key) != nil {
				key = string(raw)
			}
			g := [2]string{typ, key}
			if _, ok := seen[g]; !ok && len(seen) < maxExportGroups {
				seen[g] = e.Timestamp
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	rows := make([]groupRow, 0, len(seen))
	for g, at := range seen {
		rows = append(rows, groupRow{g[0], g[1], at})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Type != rows[j].Type {
			return rows[i].Type < rows[j].Type
		}
		return rows[i].Key < rows[j].Key
	})
	for _, r := range rows {
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

// Replays is a person's recorded sessions: every session in which the
// person appears. The export lists references (ids and times), not the
// recordings.
type Replays struct{ Store analytics.ReplayStore }

func (Replays) Name() string { return "replays" }

func (k Replays) sessions(ctx context.Context, productID int64, id string) ([]analytics.ReplaySession, error) {
	return k.Store.ListReplaySessions(ctx, productID, analytics.ReplayFilter{DistinctID: id})
}

func (k Replays) DeletePersons(ctx context.Context, productID int64, ids []string) (int64, error) {
	var sessions []string
	for _, id := range ids {
		list, err := k.sessions(ctx, productID, id)
		if err != nil {
			return 0, err
		}
		for _, x := range list {
			sessions = append(sessions, x.SessionID)
		}
	}
	if len(sessions) == 0 {
		return 0, nil
	}
	n, err := k.Store.DeleteReplaySessions(ctx, productID, sessions)
	return int64(n), err
}

// replayRow is one session in the export.
type replayRow struct {
	SessionID string    `json:"sessionId"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Pages     int       `json:"pages"`
	Chunks    int       `json:"chunks"`
}

func (k Replays) ExportPerson(ctx context.Context, productID int64, id string, emit func(any) error) error {
	list, err := k.sessions(ctx, productID, id)
	if err != nil {
		return err
	}
	for _, x := range list {
		if err := emit(replayRow{x.SessionID, x.Start, x.End, x.Pages, x.Chunks}); err != nil {
			return err
		}
	}
	return nil
}

// SurveyResponses is a person's answers to surveys.
type SurveyResponses struct{ Store analytics.PrivacyStore }

func (SurveyResponses) Name() string { return "surveyResponses" }

func (k SurveyResponses) DeletePersons(ctx context.Context, productID int64, ids []string) (int64, error) {
	return k.Store.DeletePersonSurveyResponses(ctx, productID, ids)
}

func (k SurveyResponses) ExportPerson(ctx context.Context, productID int64, id string, emit func(any) error) error {
	return k.Store.PersonSurveyResponses(ctx, productID, id, func(r analytics.SurveyResponse) error { return emit(r) })
}

// MessageStates is a person's states with the product's message
// campaigns and the outcomes they reached.
type MessageStates struct{ Store analytics.PrivacyStore }

func (MessageStates) Name() string { return "messageStates" }

func (k MessageStates) DeletePersons(ctx context.Context, productID int64, ids []string) (int64, error) {
	return k.Store.DeletePersonMessageStates(ctx, productID, ids)
}

func (k MessageStates) ExportPerson(ctx context.Context, productID int64, id string, emit func(any) error) error {
	return k.Store.PersonMessageStates(ctx, productID, id, func(r analytics.PersonMessageRow) error { return emit(r) })
}
