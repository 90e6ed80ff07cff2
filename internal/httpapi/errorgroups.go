package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/errtrack"
	"strata/internal/query"
)

// The error pages' API: /api/v1/errors lists the groups of $exception
// events with their statuses, /api/v1/errors/{fingerprint} reads one with
// its latest occurrences, and …/status records what a person decided
// (docs/errors.md, "Groups"). Query token or dashboard session only.

var errGroupNotFound = analytics.Errorf(analytics.KindNotFound, "error_group_not_found", "No event of this error group is in the range.")

// maxGroupMessage bounds a group's message in the list.
const maxGroupMessage = 300

// dayCount is one day of a group's sparkline.
type dayCount struct {
	Date   string `json:"date"`
	Events int64  `json:"events"`
}

// errorGroupJSON is ErrorGroup in api/openapi.yaml.
type errorGroupJSON struct {
	Fingerprint     string     `json:"fingerprint"`
	Type            string     `json:"type"`
	Message         string     `json:"message"`
	Events          int64      `json:"events"`
	Users           int64      `json:"users"`
	FirstSeen       time.Time  `json:"firstSeen"`
	LastSeen        time.Time  `json:"lastSeen"`
	Daily           []dayCount `json:"daily"`
	Status          string     `json:"status"`
	Regressed       bool       `json:"regressed"`
	ResolvedRelease string     `json:"resolvedRelease"`
}

// occurrenceJSON is ErrorOccurrence in api/openapi.yaml.
type occurrenceJSON struct {
	Time       time.Time        `json:"time"`
	DistinctID string           `json:"distinctId"`
	Browser    string           `json:"browser"`
	OS         string           `json:"os"`
	URL        string           `json:"url"`
	Release    string           `json:"release"`
	Frames     []errtrack.Frame `json:"frames"`
	Resolution string           `json:"resolution"`
	Stack      string           `json:"stack"`
	// SessionID is the $session_id the SDK sent with the event, which
	// links it to the session's replay when one was recorded.
	SessionID string `json:"sessionId"`
}

// groupOf shapes a group row with its status. A resolved group with an
// event of another release after it was resolved is open again: a
// regression.
func (s *Server) groupOf(ctx context.Context, sc analytics.EventRange, aliases map[string]string, row analytics.ErrorGroupRow, days []time.Time, st analytics.ErrorGroupStatus) (errorGroupJSON, error) {
	g := errorGroupJSON{Fingerprint: row.Fingerprint, Type: row.Type, Message: truncateText(row.Message, maxGroupMessage), Events: row.Events,
		Users: row.Users, FirstSeen: row.FirstSeen, LastSeen: row.LastSeen, Daily: make([]dayCount, len(days)), Status: analytics.ErrorOpen}
	for i, d := range days {
		g.Daily[i] = dayCount{Date: d.Format(time.DateOnly), Events: row.Daily[i]}
	}
	if st.Status != "" {
		g.Status, g.ResolvedRelease = st.Status, st.ResolvedRelease
	}
	if g.Status == analytics.ErrorResolved && st.ChangedAt != nil && row.LastSeen.After(*st.ChangedAt) {
		since := sc
		since.From = *st.ChangedAt
		occ, err := s.Queries.RunErrorOccurrences(ctx, analytics.ErrorOccurrencesQuery{EventRange: since, Fingerprint: row.Fingerprint, Limit: query.MaxOccurrences, Aliases: aliases})
		if err != nil {
			return g, err
		}
		for _, o := range occ {
			if occurrenceOf(o).Release != st.ResolvedRelease {
				g.Status, g.Regressed = analytics.ErrorOpen, true
				break
			}
		}
	}
	return g, nil
}

// handleListErrorGroups is GET /api/v1/errors.
func (s *Server) handleListErrorGroups(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	qs := r.URL.Query()
	status := qs.Get("status")
	if status != "" && status != analytics.ErrorOpen && status != analytics.ErrorResolved && status != analytics.ErrorIgnored {
		return analytics.InvalidField("status", "must be open, resolved or ignored, not %q", status)
	}
	q, err := query.ParseErrorGroups(qs.Get("dateFrom"), qs.Get("dateTo"), qs.Get("release"), qs.Get("limit"), sc, s.Now())
	if err != nil {
		return err
	}
	if q.Aliases, err = s.errorAliases(r.Context(), sc.ProductID); err != nil {
		return err
	}
	rows, err := s.Queries.RunErrorGroups(r.Context(), q)
	if err != nil {
		return err
	}
	statuses, err := s.ErrorGroups.ErrorGroupStatuses(r.Context(), sc.ProductID)
	if err != nil {
		return err
	}
	groups := []errorGroupJSON{}
	for _, row := range rows {
		g, err := s.groupOf(r.Context(), q.EventRange, q.Aliases, row, q.Days, statuses[row.Fingerprint])
		if err != nil {
			return err
		}
		if status == "" || g.Status == status {
			groups = append(groups, g)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"from": q.From.Format(time.DateOnly), "to": q.To.AddDate(0, 0, -1).Format(time.DateOnly), "groups": groups})
	return nil
}

// handleGetErrorGroup is GET /api/v1/errors/{fingerprint}.
func (s *Server) handleGetErrorGroup(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	qs := r.URL.Query()
	q, err := query.ParseErrorGroups(qs.Get("dateFrom"), qs.Get("dateTo"), "", "", sc, s.Now())
	if err != nil {
		return err
	}
	limit := query.DefaultOccurrences
	if v := qs.Get("limit"); v != "" {
		if limit, err = query.ParseLimit(v, query.MaxOccurrences); err != nil {
			return err
		}
	}
	if q.Aliases, err = s.errorAliases(r.Context(), sc.ProductID); err != nil {
		return err
	}
	// A group merged into another is read as that one.
	q.Fingerprint, q.Limit = groupFingerprint(q.Aliases, r.PathValue("fingerprint")), 1
	rows, err := s.Queries.RunErrorGroups(r.Context(), q)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return errGroupNotFound
	}
	statuses, err := s.ErrorGroups.ErrorGroupStatuses(r.Context(), sc.ProductID)
	if err != nil {
		return err
	}
	g, err := s.groupOf(r.Context(), q.EventRange, q.Aliases, rows[0], q.Days, statuses[q.Fingerprint])
	if err != nil {
		return err
	}
	occ, err := s.Queries.RunErrorOccurrences(r.Context(), analytics.ErrorOccurrencesQuery{EventRange: q.EventRange, Fingerprint: q.Fingerprint, Limit: limit, Aliases: q.Aliases})
	if err != nil {
		return err
	}
	out := make([]occurrenceJSON, len(occ))
	for i, o := range occ {
		out[i] = occurrenceOf(o)
	}
	merged, err := s.mergedGroups(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"group": g, "occurrences": out, "merged": merged})
	return nil
}

// occurrenceOf reads an occurrence's properties: its release, the frames
// ingest stored, why some stayed minified, and the raw stack.
func occurrenceOf(o analytics.ErrorOccurrence) occurrenceJSON {
	var p struct {
		Release    any              `json:"$release"`
		Frames     []errtrack.Frame `json:"$exception_frames"`
		Resolution string           `json:"$exception_resolution"`
		Stack      any              `json:"$exception_stack"`
		SessionID  any              `json:"$session_id"`
	}
	json.Unmarshal(o.Properties, &p)
	out := occurrenceJSON{Time: o.Time, DistinctID: o.DistinctID, Browser: o.Browser, OS: o.OS, URL: o.URL,
		Frames: p.Frames, Resolution: p.Resolution}
	out.Release, _ = p.Release.(string)
	out.Stack, _ = p.Stack.(string)
	out.SessionID, _ = p.SessionID.(string)
	if out.Frames == nil {
		out.Frames = []errtrack.Frame{}
	}
	return out
}

// handleSetErrorGroupStatus is PUT /api/v1/errors/{fingerprint}/status.
// Resolving without a release takes the release of the group's latest
// event of the last 30 days.
func (s *Server) handleSetErrorGroupStatus(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	var req struct {
		Status  *string `json:"status"`
		Release *string `json:"release"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if req.Status == nil || (*req.Status != analytics.ErrorOpen && *req.Status != analytics.ErrorResolved && *req.Status != analytics.ErrorIgnored) {
		return analytics.InvalidField("status", "must be open, resolved or ignored")
	}
	st := analytics.ErrorGroupStatus{Fingerprint: r.PathValue("fingerprint"), Status: *req.Status, ChangedBy: p.Describe()}
	if utf8.RuneCountInString(st.Fingerprint) > 200 {
		return errGroupNotFound
	}
	aliases, err := s.errorAliases(r.Context(), p.ProductID)
	if err != nil {
		return err
	}
	// A group merged into another: the status is that group's.
	st.Fingerprint = groupFingerprint(aliases, st.Fingerprint)
	if st.Status == analytics.ErrorResolved {
		if req.Release != nil {
			if n := utf8.RuneCountInString(*req.Release); n > 200 {
				return analytics.InvalidField("release", "must be at most 200 characters")
			}
			st.ResolvedRelease = *req.Release
		} else {
			sc, err := scopeOf(r, p)
			if err != nil {
				return err
			}
			sc.From, sc.To = s.Now().AddDate(0, 0, -30), s.Now()
			occ, err := s.Queries.RunErrorOccurrences(r.Context(), analytics.ErrorOccurrencesQuery{EventRange: sc, Fingerprint: st.Fingerprint, Limit: 1, Aliases: aliases})
			if err != nil {
				return err
			}
			if len(occ) > 0 {
				st.ResolvedRelease = occurrenceOf(occ[0]).Release
			}
		}
	}
	if err := s.ErrorGroups.SetErrorGroupStatus(r.Context(), p.ProductID, &st); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// errorAliases returns a product's merged groups, none without a store.
func (s *Server) errorAliases(ctx context.Context, productID int64) (map[string]string, error) {
	if s.ErrorAliases == nil {
		return nil, nil
	}
	return s.ErrorAliases.ErrorAliases(ctx, productID)
}

// groupFingerprint is the group fp's events count in: the one it was
// merged into, or fp.
func groupFingerprint(aliases map[string]string, fp string) string {
	if into, ok := aliases[fp]; ok {
		return into
	}
	return fp
}

// maxMergedGroups bounds the groups one merge names: each is looked up in
// the events before anything is recorded.
const maxMergedGroups = 50

// handleMergeErrorGroups is POST /api/v1/errors/merge: {into, groups}
// makes each of groups an alias of into (docs/errors.md, "Merging
// groups"), so that their events, past and future, count in into's group.
// Every fingerprint must name a group of the principal's product with an
// event in the range (dateFrom, dateTo, as the list's): a fingerprint of
// another product's group is 404, as one that does not exist. The merge
// is charged to the credential's query budget, as it reads the events,
// and records who merged (created_by) with each alias.
func (s *Server) handleMergeErrorGroups(w http.ResponseWriter, r *http.Request) error {
	// readScope's steps, keeping the principal, who is recorded.
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	if err := s.allowQuery(p); err != nil {
		return err
	}
	sc, err := scopeOf(r, p)
	if err != nil {
		return err
	}
	var req struct {
		Into   *string  `json:"into"`
		Groups []string `json:"groups"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if req.Into == nil || *req.Into == "" || utf8.RuneCountInString(*req.Into) > 200 {
		return analytics.InvalidField("into", "must be the fingerprint of a group, 1 to 200 characters")
	}
	if len(req.Groups) == 0 || len(req.Groups) > maxMergedGroups {
		return analytics.InvalidField("groups", "must name 1 to %d groups to merge", maxMergedGroups)
	}
	for _, g := range req.Groups {
		if g == "" || utf8.RuneCountInString(g) > 200 {
			return analytics.InvalidField("groups", "must be fingerprints of groups, 1 to 200 characters each")
		}
	}
	if s.ErrorAliases == nil {
		return analytics.Errorf(analytics.KindUnavailable, "unavailable", "This server keeps no merged error groups.")
	}
	qs := r.URL.Query()
	q, err := query.ParseErrorGroups(qs.Get("dateFrom"), qs.Get("dateTo"), "", "", sc, s.Now())
	if err != nil {
		return err
	}
	if q.Aliases, err = s.errorAliases(r.Context(), sc.ProductID); err != nil {
		return err
	}
	// The tenant check: every group has events of this product. A
	// fingerprint already merged stands for its group.
	q.Limit = 1
	groups := make([]string, 0, len(req.Groups))
	for _, g := range req.Groups {
		if g := groupFingerprint(q.Aliases, g); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	for _, fp := range append([]string{*req.Into}, req.Groups...) {
		q.Fingerprint = groupFingerprint(q.Aliases, fp)
		rows, err := s.Queries.RunErrorGroups(r.Context(), q)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return analytics.Errorf(analytics.KindNotFound, "error_group_not_found",
				"No event of the error group %s is in this product over the range: merge only groups the Errors page lists.", truncateText(fp, 80))
		}
	}
	into, err := s.ErrorAliases.MergeErrorGroups(r.Context(), sc.ProductID, *req.Into, groups, p.Describe(), s.ErrorAliasLimit)
	if err != nil {
		return err
	}
	if s.Pipeline != nil && s.Pipeline.Exceptions != nil {
		s.Pipeline.Exceptions.Forget(sc.ProductID)
	}
	merged := slices.DeleteFunc(groups, func(g string) bool { return g == into })
	writeJSON(w, http.StatusOK, map[string]any{"into": into, "merged": merged})
	return nil
}

// handleUnmergeErrorGroups is POST /api/v1/errors/unmerge: {groups}
// takes each fingerprint out of the group it was merged into
// (errtrack.Unmerge, docs/errors.md, "Unmerging"). The credentials, budget
// and refusals are the merge's: a query token or the dashboard, charged
// to its query budget; a fingerprint that is not an alias of the
// principal's product is 404 and nothing is unmerged. The answer is the
// aliases deleted, as they were.
func (s *Server) handleUnmergeErrorGroups(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	if err := s.allowQuery(p); err != nil {
		return err
	}
	var req struct {
		Groups []string `json:"groups"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if s.ErrorAliases == nil {
		return analytics.Errorf(analytics.KindUnavailable, "unavailable", "This server keeps no merged error groups.")
	}
	unmerged, err := errtrack.Unmerge(r.Context(), s.ErrorAliases, p.ProductID, req.Groups)
	if err != nil {
		return err
	}
	if s.Pipeline != nil && s.Pipeline.Exceptions != nil {
		s.Pipeline.Exceptions.Forget(p.ProductID)
	}
	writeJSON(w, http.StatusOK, map[string]any{"unmerged": unmerged})
	return nil
}

// maxMergedDescribed bounds the merged fingerprints a group's page
// describes with their own type, message and events: they are read in one
// scan of the events, whose statement names each.
const maxMergedDescribed = 20

// mergedGroupJSON is MergedErrorGroup in api/openapi.yaml.
type mergedGroupJSON struct {
	Fingerprint string    `json:"fingerprint"`
	Reason      string    `json:"reason"`
	MergedAt    time.Time `json:"mergedAt"`
	MergedBy    string    `json:"mergedBy"`
	Type        string    `json:"type"`
	Message     string    `json:"message"`
	Events      int64     `json:"events"`
}

// mergedGroups lists the fingerprints merged into q.Fingerprint's group,
// newest first; the first maxMergedDescribed with their own events in
// q's range (type, message and count, as if unmerged), read in one query.
func (s *Server) mergedGroups(ctx context.Context, q analytics.ErrorGroupsQuery) ([]mergedGroupJSON, error) {
	out := []mergedGroupJSON{}
	if s.ErrorAliases == nil {
		return out, nil
	}
	aliases, err := s.ErrorAliases.MergedErrorGroups(ctx, q.ProductID, q.Fingerprint)
	if err != nil || len(aliases) == 0 {
		return out, err
	}
	own := q
	own.Fingerprint, own.Aliases = "", nil
	for _, a := range aliases[:min(len(aliases), maxMergedDescribed)] {
		own.Fingerprints = append(own.Fingerprints, a.Fingerprint)
	}
	own.Limit = len(own.Fingerprints)
	rows, err := s.Queries.RunErrorGroups(ctx, own)
	if err != nil {
		return nil, err
	}
	described := make(map[string]analytics.ErrorGroupRow, len(rows))
	for _, r := range rows {
		described[r.Fingerprint] = r
	}
	for _, a := range aliases {
		m := mergedGroupJSON{Fingerprint: a.Fingerprint, Reason: a.Reason, MergedAt: a.CreatedAt, MergedBy: a.CreatedBy}
		if r, ok := described[a.Fingerprint]; ok {
			m.Type, m.Message, m.Events = r.Type, truncateText(r.Message, maxGroupMessage), r.Events
		}
		out = append(out, m)
	}
	return out, nil
}

// truncateText cuts s to at most n characters.
func truncateText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
