package errtrack

import (
	"context"
	"encoding/json"
	"slices"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/query"
)

// Groups holds the operations on error groups (docs/errors.md, "Groups",
// "Merging groups", "Unmerging"), below every door that asks for them:
// how a group is assembled from its events with its status (and whether a
// resolved group regressed), the status a person sets, and merges and
// unmerges. The HTTP API calls it, and the alerts job reads a product's
// aliases through it, so that both count a merged group's events alike.
type Groups struct {
	// Events reads the groups and their occurrences from the events: the
	// query engine.
	Events GroupQueries
	// Statuses keeps what people decided about groups.
	Statuses analytics.ErrorGroupStore
	// Aliases keeps the merged groups, at most AliasLimit a product
	// (0: no cap); nil on a server that keeps none, where merges are
	// refused and every group is its own.
	Aliases    analytics.ErrorAliasStore
	AliasLimit int
	// Cache is what this node remembers of each product's aliases (the
	// ingest processor, Processor.Forget): a merge or an unmerge made
	// here makes it forget the product, so that the next events of this
	// node count in the groups as they now are. Other nodes read the
	// aliases again within aliasTTL. nil: nothing is remembered.
	Cache interface{ Forget(productID int64) }
	// Now is the clock of the merge's range and of a resolution's release;
	// nil means time.Now.
	Now func() time.Time
}

// GroupQueries is what Groups reads of the events.
type GroupQueries interface {
	RunErrorGroups(ctx context.Context, q analytics.ErrorGroupsQuery) ([]analytics.ErrorGroupRow, error)
	RunErrorOccurrences(ctx context.Context, q analytics.ErrorOccurrencesQuery) ([]analytics.ErrorOccurrence, error)
}

var (
	// ErrGroupNotFound answers a group with no event in the range.
	ErrGroupNotFound = analytics.Errorf(analytics.KindNotFound, "error_group_not_found", "No event of this error group is in the range.")
	// ErrNoAliases refuses a merge or an unmerge on a server that keeps
	// no merged groups.
	ErrNoAliases = analytics.Errorf(analytics.KindUnavailable, "unavailable", "This server keeps no merged error groups.")
)

// Bounds of what one group's assembly or one merge reads and answers.
const (
	// MaxGroupMessage bounds a group's message in the answers.
	MaxGroupMessage = 300
	// MaxMerged bounds the groups one merge names: each is looked up in
	// the events before anything is recorded.
	MaxMerged = 50
	// maxMergedDescribed bounds the merged fingerprints a group's page
	// describes with their own type, message and events: they are read in
	// one scan of the events, whose statement names each.
	maxMergedDescribed = 20
	// maxFingerprint is the longest fingerprint, in characters, any
	// operation takes.
	maxFingerprint = 200
	// resolveLookback is how far back the release a group is resolved in
	// is looked for when the resolution names none.
	resolveLookback = 30
)

// DayCount is one day of a group's sparkline.
type DayCount struct {
	Date   string `json:"date"`
	Events int64  `json:"events"`
}

// Group is ErrorGroup in api/openapi.yaml: a group's activity over a range
// with its status.
type Group struct {
	Fingerprint     string     `json:"fingerprint"`
	Type            string     `json:"type"`
	Message         string     `json:"message"`
	Events          int64      `json:"events"`
	Users           int64      `json:"users"`
	FirstSeen       time.Time  `json:"firstSeen"`
	LastSeen        time.Time  `json:"lastSeen"`
	Daily           []DayCount `json:"daily"`
	Status          string     `json:"status"`
	Regressed       bool       `json:"regressed"`
	ResolvedRelease string     `json:"resolvedRelease"`
}

// Occurrence is ErrorOccurrence in api/openapi.yaml: one event of a group.
type Occurrence struct {
	Time       time.Time `json:"time"`
	DistinctID string    `json:"distinctId"`
	Browser    string    `json:"browser"`
	OS         string    `json:"os"`
	URL        string    `json:"url"`
	Release    string    `json:"release"`
	Frames     []Frame   `json:"frames"`
	Resolution string    `json:"resolution"`
	Stack      string    `json:"stack"`
	// SessionID is the $session_id the SDK sent with the event, which
	// links it to the session's replay when one was recorded.
	SessionID string `json:"sessionId"`
}

// MergedGroup is MergedErrorGroup in api/openapi.yaml: a fingerprint
// merged into a group, described by its own events when it has some in
// the range.
type MergedGroup struct {
	Fingerprint string    `json:"fingerprint"`
	Reason      string    `json:"reason"`
	MergedAt    time.Time `json:"mergedAt"`
	MergedBy    string    `json:"mergedBy"`
	Type        string    `json:"type"`
	Message     string    `json:"message"`
	Events      int64     `json:"events"`
}

// GroupDetail is one group's page: the group, its latest occurrences and
// the fingerprints merged into it.
type GroupDetail struct {
	Group       Group
	Occurrences []Occurrence
	Merged      []MergedGroup
}

func (g *Groups) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// ErrorAliases returns a product's merged groups (fingerprint → the group
// it counts in), none on a server that keeps none.
func (g *Groups) ErrorAliases(ctx context.Context, productID int64) (map[string]string, error) {
	if g.Aliases == nil {
		return nil, nil
	}
	return g.Aliases.ErrorAliases(ctx, productID)
}

// GroupOf is the group fp's events count in: the one it was merged into,
// or fp.
func GroupOf(aliases map[string]string, fp string) string {
	if into, ok := aliases[fp]; ok {
		return into
	}
	return fp
}

// ValidStatus reports whether s is a status a group may have.
func ValidStatus(s string) bool {
	return s == analytics.ErrorOpen || s == analytics.ErrorResolved || s == analytics.ErrorIgnored
}

// List returns q's groups (its product's, in its range, release and limit;
// the aliases are read here) with their statuses; with status, only the
// groups that have it, a regression being open.
func (g *Groups) List(ctx context.Context, q analytics.ErrorGroupsQuery, status string) ([]Group, error) {
	var err error
	if q.Aliases, err = g.ErrorAliases(ctx, q.ProductID); err != nil {
		return nil, err
	}
	rows, err := g.Events.RunErrorGroups(ctx, q)
	if err != nil {
		return nil, err
	}
	statuses, err := g.Statuses.ErrorGroupStatuses(ctx, q.ProductID)
	if err != nil {
		return nil, err
	}
	groups := []Group{}
	for _, row := range rows {
		gr, err := g.assemble(ctx, q.EventRange, q.Aliases, row, q.Days, statuses[row.Fingerprint])
		if err != nil {
			return nil, err
		}
		if status == "" || gr.Status == status {
			groups = append(groups, gr)
		}
	}
	return groups, nil
}

// Get returns the group of fingerprint fp in q's range (a fingerprint
// merged into another group is read as that group) with its latest limit
// occurrences and the fingerprints merged into it; ErrGroupNotFound when it
// has no event in the range.
func (g *Groups) Get(ctx context.Context, q analytics.ErrorGroupsQuery, fp string, limit int) (GroupDetail, error) {
	var err error
	if q.Aliases, err = g.ErrorAliases(ctx, q.ProductID); err != nil {
		return GroupDetail{}, err
	}
	q.Fingerprint, q.Limit = GroupOf(q.Aliases, fp), 1
	rows, err := g.Events.RunErrorGroups(ctx, q)
	if err != nil {
		return GroupDetail{}, err
	}
	if len(rows) == 0 {
		return GroupDetail{}, ErrGroupNotFound
	}
	statuses, err := g.Statuses.ErrorGroupStatuses(ctx, q.ProductID)
	if err != nil {
		return GroupDetail{}, err
	}
	var d GroupDetail
	if d.Group, err = g.assemble(ctx, q.EventRange, q.Aliases, rows[0], q.Days, statuses[q.Fingerprint]); err != nil {
		return GroupDetail{}, err
	}
	occ, err := g.Events.RunErrorOccurrences(ctx, analytics.ErrorOccurrencesQuery{EventRange: q.EventRange, Fingerprint: q.Fingerprint, Limit: limit, Aliases: q.Aliases})
	if err != nil {
		return GroupDetail{}, err
	}
	d.Occurrences = make([]Occurrence, len(occ))
	for i, o := range occ {
		d.Occurrences[i] = OccurrenceOf(o)
	}
	if d.Merged, err = g.merged(ctx, q); err != nil {
		return GroupDetail{}, err
	}
	return d, nil
}

// assemble shapes a group row with its status. A resolved group with an
// event of another release after it was resolved is open again: a
// regression.
func (g *Groups) assemble(ctx context.Context, sc analytics.EventRange, aliases map[string]string, row analytics.ErrorGroupRow, days []time.Time, st analytics.ErrorGroupStatus) (Group, error) {
	out := Group{Fingerprint: row.Fingerprint, Type: row.Type, Message: Truncate(row.Message, MaxGroupMessage), Events: row.Events,
		Users: row.Users, FirstSeen: row.FirstSeen, LastSeen: row.LastSeen, Daily: make([]DayCount, len(days)), Status: analytics.ErrorOpen}
	for i, d := range days {
		out.Daily[i] = DayCount{Date: d.Format(time.DateOnly), Events: row.Daily[i]}
	}
	if st.Status != "" {
		out.Status, out.ResolvedRelease = st.Status, st.ResolvedRelease
	}
	if out.Status == analytics.ErrorResolved && st.ChangedAt != nil && row.LastSeen.After(*st.ChangedAt) {
		since := sc
		since.From = *st.ChangedAt
		occ, err := g.Events.RunErrorOccurrences(ctx, analytics.ErrorOccurrencesQuery{EventRange: since, Fingerprint: row.Fingerprint, Limit: query.MaxOccurrences, Aliases: aliases})
		if err != nil {
			return out, err
		}
		for _, o := range occ {
			if OccurrenceOf(o).Release != st.ResolvedRelease {
				out.Status, out.Regressed = analytics.ErrorOpen, true
				break
			}
		}
	}
	return out, nil
}

// OccurrenceOf reads an occurrence's properties: its release, the frames
// ingest stored, why some stayed minified, and the raw stack.
func OccurrenceOf(o analytics.ErrorOccurrence) Occurrence {
	var p struct {
		Release    any     `json:"$release"`
		Frames     []Frame `json:"$exception_frames"`
		Resolution string  `json:"$exception_resolution"`
		Stack      any     `json:"$exception_stack"`
		SessionID  any     `json:"$session_id"`
	}
	json.Unmarshal(o.Properties, &p)
	out := Occurrence{Time: o.Time, DistinctID: o.DistinctID, Browser: o.Browser, OS: o.OS, URL: o.URL,
		Frames: p.Frames, Resolution: p.Resolution}
	out.Release, _ = p.Release.(string)
	out.Stack, _ = p.Stack.(string)
	out.SessionID, _ = p.SessionID.(string)
	if out.Frames == nil {
		out.Frames = []Frame{}
	}
	return out
}

// merged lists the fingerprints merged into q.Fingerprint's group, newest
// first; the first maxMergedDescribed with their own events in q's range
// (type, message and count, as if unmerged), read in one query.
func (g *Groups) merged(ctx context.Context, q analytics.ErrorGroupsQuery) ([]MergedGroup, error) {
	out := []MergedGroup{}
	if g.Aliases == nil {
		return out, nil
	}
	aliases, err := g.Aliases.MergedErrorGroups(ctx, q.ProductID, q.Fingerprint)
	if err != nil || len(aliases) == 0 {
		return out, err
	}
	own := q
	own.Fingerprint, own.Aliases = "", nil
	for _, a := range aliases[:min(len(aliases), maxMergedDescribed)] {
		own.Fingerprints = append(own.Fingerprints, a.Fingerprint)
	}
	own.Limit = len(own.Fingerprints)
	rows, err := g.Events.RunErrorGroups(ctx, own)
	if err != nil {
		return nil, err
	}
	described := make(map[string]analytics.ErrorGroupRow, len(rows))
	for _, r := range rows {
		described[r.Fingerprint] = r
	}
	for _, a := range aliases {
		m := MergedGroup{Fingerprint: a.Fingerprint, Reason: a.Reason, MergedAt: a.CreatedAt, MergedBy: a.CreatedBy}
		if r, ok := described[a.Fingerprint]; ok {
			m.Type, m.Message, m.Events = r.Type, Truncate(r.Message, MaxGroupMessage), r.Events
		}
		out = append(out, m)
	}
	return out, nil
}

// StatusChange is what a person decided about a group.
type StatusChange struct {
	Fingerprint string
	// Status is open, resolved or ignored (ValidStatus).
	Status string
	// Release is the release a resolution names; nil: the release of the
	// group's latest event of the last 30 days in Scope.
	Release *string
	// Scope is the product and environment whose events that release is
	// looked for in. It is read only then, so that a change that needs
	// no release is made whatever the environment the request named.
	Scope func() (analytics.EventRange, error)
}

// SetStatus records c on the product's group, as actor decided it: on the
// group a merged fingerprint counts in, that group's status. A
// fingerprint longer than any is ErrGroupNotFound. It returns the status
// as stored.
func (g *Groups) SetStatus(ctx context.Context, actor string, productID int64, c StatusChange) (analytics.ErrorGroupStatus, error) {
	st := analytics.ErrorGroupStatus{Fingerprint: c.Fingerprint, Status: c.Status, ChangedBy: actor}
	if utf8.RuneCountInString(st.Fingerprint) > maxFingerprint {
		return st, ErrGroupNotFound
	}
	aliases, err := g.ErrorAliases(ctx, productID)
	if err != nil {
		return st, err
	}
	st.Fingerprint = GroupOf(aliases, st.Fingerprint)
	if st.Status == analytics.ErrorResolved {
		if c.Release != nil {
			if n := utf8.RuneCountInString(*c.Release); n > 200 {
				return st, analytics.InvalidField("release", "must be at most 200 characters")
			}
			st.ResolvedRelease = *c.Release
		} else {
			sc, err := c.Scope()
			if err != nil {
				return st, err
			}
			sc.From, sc.To = g.now().AddDate(0, 0, -resolveLookback), g.now()
			occ, err := g.Events.RunErrorOccurrences(ctx, analytics.ErrorOccurrencesQuery{EventRange: sc, Fingerprint: st.Fingerprint, Limit: 1, Aliases: aliases})
			if err != nil {
				return st, err
			}
			if len(occ) > 0 {
				st.ResolvedRelease = OccurrenceOf(occ[0]).Release
			}
		}
	}
	if err := g.Statuses.SetErrorGroupStatus(ctx, productID, &st); err != nil {
		return st, err
	}
	return st, nil
}

// Merge makes each of groups an alias of into, as actor did it, so that
// their events, past and future, count in into's group (docs/errors.md,
// "Merging groups"). Every fingerprint must name a group of sc's product
// with an event in the range from, to (as the list reads them,
// query.ParseErrorGroups): one of another product's group is
// error_group_not_found, as one that does not exist, and nothing is
// recorded. A fingerprint already merged stands for its group. The
// aliases are written in one transaction by the store. It returns the
// group they were merged into and the groups merged into it.
func (g *Groups) Merge(ctx context.Context, actor string, sc analytics.EventRange, from, to, into string, groups []string) (string, []string, error) {
	if into == "" || utf8.RuneCountInString(into) > maxFingerprint {
		return "", nil, analytics.InvalidField("into", "must be the fingerprint of a group, 1 to 200 characters")
	}
	if len(groups) == 0 || len(groups) > MaxMerged {
		return "", nil, analytics.InvalidField("groups", "must name 1 to %d groups to merge", MaxMerged)
	}
	for _, fp := range groups {
		if fp == "" || utf8.RuneCountInString(fp) > maxFingerprint {
			return "", nil, analytics.InvalidField("groups", "must be fingerprints of groups, 1 to 200 characters each")
		}
	}
	if g.Aliases == nil {
		return "", nil, ErrNoAliases
	}
	q, err := query.ParseErrorGroups(from, to, "", "", sc, g.now())
	if err != nil {
		return "", nil, err
	}
	if q.Aliases, err = g.ErrorAliases(ctx, sc.ProductID); err != nil {
		return "", nil, err
	}
	// The tenant check: every group has events of this product.
	q.Limit = 1
	named := make([]string, 0, len(groups))
	for _, fp := range groups {
		if fp := GroupOf(q.Aliases, fp); !slices.Contains(named, fp) {
			named = append(named, fp)
		}
	}
	for _, fp := range append([]string{into}, groups...) {
		q.Fingerprint = GroupOf(q.Aliases, fp)
		rows, err := g.Events.RunErrorGroups(ctx, q)
		if err != nil {
			return "", nil, err
		}
		if len(rows) == 0 {
			return "", nil, analytics.Errorf(analytics.KindNotFound, "error_group_not_found",
				"No event of the error group %s is in this product over the range: merge only groups the Errors page lists.", Truncate(fp, 80))
		}
	}
	stored, err := g.Aliases.MergeErrorGroups(ctx, sc.ProductID, into, named, actor, g.AliasLimit)
	if err != nil {
		return "", nil, err
	}
	g.forget(sc.ProductID)
	return stored, slices.DeleteFunc(named, func(fp string) bool { return fp == stored }), nil
}

// Unmerge takes fingerprints of the product out of the groups they were
// merged into (the function Unmerge, with its rules) and returns the
// aliases deleted, as they were.
func (g *Groups) Unmerge(ctx context.Context, productID int64, fingerprints []string) ([]analytics.ErrorAlias, error) {
	if g.Aliases == nil {
		return nil, ErrNoAliases
	}
	unmerged, err := Unmerge(ctx, g.Aliases, productID, fingerprints)
	if err != nil {
		return nil, err
	}
	g.forget(productID)
	return unmerged, nil
}

// forget makes this node's cache of the product's aliases forget them,
// after a change of them.
func (g *Groups) forget(productID int64) {
	if g.Cache != nil {
		g.Cache.Forget(productID)
	}
}

// Truncate cuts s to at most n characters.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
