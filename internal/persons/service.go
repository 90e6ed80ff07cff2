package persons

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/query"
)

// The people list's bounds (docs/queries.md, "People"; docs/security.md's
// limits table).
const (
	DefaultPage   = 50
	MaxPage       = 200
	MaxFilters    = 10
	MaxColumns    = 20
	MaxSearch     = 200
	MaxFilterKey  = 200
	MaxFilterText = 1000
)

// ListRequest is GET /api/v1/persons's query, as sent.
type ListRequest struct {
	Search  string
	Where   string // a JSON array of analytics.PersonFilter
	Columns string // property keys, comma-separated
	Cursor  string
	Limit   string
}

// Row is one person of the list.
type Row struct {
	DistinctID string          `json:"distinctId"`
	Properties json.RawMessage `json:"properties"`
	FirstSeen  time.Time       `json:"firstSeen"`
	LastSeen   time.Time       `json:"lastSeen"`
	// EventCount is the person's events in the event store, every
	// environment.
	EventCount int64 `json:"eventCount"`
}

// Page is one page of the list; NextCursor is set when more follow.
type Page struct {
	Items      []Row   `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

func invalid(format string, args ...any) error {
	return analytics.Errorf(analytics.KindInvalid, "invalid_request", format, args...)
}

// ParseList checks a list request of a product.
func ParseList(productID int64, req ListRequest) (analytics.PersonQuery, []string, error) {
	q := analytics.PersonQuery{ProductID: productID, Search: strings.TrimSpace(req.Search), Limit: DefaultPage}
	if utf8.RuneCountInString(q.Search) > MaxSearch {
		return q, nil, invalid("search: at most %d characters", MaxSearch)
	}
	if req.Limit != "" {
		var err error
		if q.Limit, err = query.ParseLimit(req.Limit, MaxPage); err != nil {
			return q, nil, err
		}
	}
	if req.Where != "" {
		dec := json.NewDecoder(strings.NewReader(req.Where))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q.Filters); err != nil {
			return q, nil, invalid("where: a JSON array of {key, operator, value}: %v", err)
		}
		if len(q.Filters) > MaxFilters {
			return q, nil, invalid("where: at most %d filters", MaxFilters)
		}
		for i, f := range q.Filters {
			if err := checkKey(f.Key); err != nil {
				return q, nil, invalid("where[%d].key: %v", i, err)
			}
			if !slices.Contains(analytics.PersonOperators, f.Operator) {
				return q, nil, invalid("where[%d].operator: one of eq, neq, contains, is_set, is_not_set, not %q", i, f.Operator)
			}
			if utf8.RuneCountInString(f.Value) > MaxFilterText {
				return q, nil, invalid("where[%d].value: at most %d characters", i, MaxFilterText)
			}
		}
	}
	var columns []string
	if req.Columns != "" {
		for _, c := range strings.Split(req.Columns, ",") {
			if c = strings.TrimSpace(c); c == "" {
				continue
			}
			if err := checkKey(c); err != nil {
				return q, nil, invalid("columns: %q: %v", c, err)
			}
			columns = append(columns, c)
		}
		if len(columns) > MaxColumns {
			return q, nil, invalid("columns: at most %d", MaxColumns)
		}
	}
	if req.Cursor != "" {
		c, err := decodeCursor(req.Cursor)
		if err != nil {
			return q, nil, invalid("cursor: not one this list gave")
		}
		q.After = &c
	}
	return q, columns, nil
}

// checkKey refuses a property key the stores cannot filter on alike: one
// that starts with $ or / is a JSON path or pointer to DuckDB.
func checkKey(k string) error {
	switch {
	case k == "":
		return errText("empty")
	case len(k) > MaxFilterKey:
		return errText("too long")
	case k[0] == '$' || k[0] == '/':
		return errText("may not start with $ or /")
	}
	return nil
}

type errText string

func (e errText) Error() string { return string(e) }

func encodeCursor(c analytics.PersonCursor) string {
	b, _ := json.Marshal([]any{c.LastSeen.UTC().Format(time.RFC3339Nano), c.DistinctID})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (analytics.PersonCursor, error) {
	var c analytics.PersonCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, err
	}
	var parts []string
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) != 2 {
		return c, errText("malformed")
	}
	c.LastSeen, err = time.Parse(time.RFC3339Nano, parts[0])
	c.DistinctID = parts[1]
	return c, err
}

// List returns one page of persons, each with only the chosen columns of
// its properties when columns are given, and with its event count from
// counts (the page's ids only) when counts is set.
func List(ctx context.Context, store analytics.PersonStore, counts analytics.PersonCountStore, q analytics.PersonQuery, columns []string) (Page, error) {
	page := q.Limit
	q.Limit++
	list, err := store.ListPersons(ctx, q)
	if err != nil {
		return Page{}, err
	}
	res := Page{Items: []Row{}}
	if len(list) > page {
		list = list[:page]
		last := list[page-1]
		next := encodeCursor(analytics.PersonCursor{LastSeen: last.LastSeen, DistinctID: last.DistinctID})
		res.NextCursor = &next
	}
	var n map[string]int64
	if counts != nil && len(list) > 0 {
		ids := make([]string, len(list))
		for i, p := range list {
			ids[i] = p.DistinctID
		}
		if n, err = counts.PersonEventCounts(ctx, q.ProductID, ids); err != nil {
			return Page{}, err
		}
	}
	for _, p := range list {
		props := p.Properties
		if len(columns) > 0 {
			props = pick(props, columns)
		}
		res.Items = append(res.Items, Row{DistinctID: p.DistinctID, Properties: props, FirstSeen: p.FirstSeen, LastSeen: p.LastSeen,
			EventCount: n[p.DistinctID]})
	}
	return res, nil
}

// pick returns the keys of the object props that columns name.
func pick(props json.RawMessage, columns []string) json.RawMessage {
	var all map[string]json.RawMessage
	if json.Unmarshal(props, &all) != nil {
		return json.RawMessage(`{}`)
	}
	out := map[string]json.RawMessage{}
	for _, c := range columns {
		if v, ok := all[c]; ok {
			out[c] = v
		}
	}
	b, _ := json.Marshal(out)
	return b
}
