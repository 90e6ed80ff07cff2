package httpapi

import (
	"net/http"
	"time"

	"strata/internal/analytics"
	"strata/internal/errtrack"
	"strata/internal/query"
)

// The error pages' API: /api/v1/errors lists the groups of $exception
// events with their statuses, /api/v1/errors/{fingerprint} reads one with
// its latest occurrences, and …/status records what a person decided
// (docs/errors.md, "Groups"); …/merge and …/unmerge change which groups
// count together. Query token or dashboard session only. The operations
// and their rules are errtrack.Groups' (ErrorGroupOps): the handlers
// authenticate, decode, call and encode.

// handleListErrorGroups is GET /api/v1/errors.
func (s *Server) handleListErrorGroups(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	qs := r.URL.Query()
	status := qs.Get("status")
	if status != "" && !errtrack.ValidStatus(status) {
		return analytics.InvalidField("status", "must be open, resolved or ignored, not %q", status)
	}
	q, err := query.ParseErrorGroups(qs.Get("dateFrom"), qs.Get("dateTo"), qs.Get("release"), qs.Get("limit"), sc, s.Now())
	if err != nil {
		return err
	}
	groups, err := s.ErrorGroupOps.List(r.Context(), q, status)
	if err != nil {
		return err
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
	d, err := s.ErrorGroupOps.Get(r.Context(), q, r.PathValue("fingerprint"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"group": d.Group, "occurrences": d.Occurrences, "merged": d.Merged})
	return nil
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
	if req.Status == nil || !errtrack.ValidStatus(*req.Status) {
		return analytics.InvalidField("status", "must be open, resolved or ignored")
	}
	st, err := s.ErrorGroupOps.SetStatus(r.Context(), p.Describe(), p.ProductID, errtrack.StatusChange{
		Fingerprint: r.PathValue("fingerprint"), Status: *req.Status, Release: req.Release,
		Scope: func() (analytics.EventRange, error) { return s.scopeOf(r, p) }})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// handleMergeErrorGroups is POST /api/v1/errors/merge: {into, groups}
// makes each of groups an alias of into (errtrack.Groups.Merge,
// docs/errors.md, "Merging groups") among the groups with an event in the
// range (dateFrom, dateTo, as the list's). The merge is charged to the
// credential's query budget, as it reads the events, and records who
// merged (created_by) with each alias.
func (s *Server) handleMergeErrorGroups(w http.ResponseWriter, r *http.Request) error {
	// readScope's steps, keeping the principal, who is recorded.
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	if err := s.allowQuery(p); err != nil {
		return err
	}
	sc, err := s.scopeOf(r, p)
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
	var into string
	if req.Into != nil {
		into = *req.Into
	}
	qs := r.URL.Query()
	into, merged, err := s.ErrorGroupOps.Merge(r.Context(), p.Describe(), sc, qs.Get("dateFrom"), qs.Get("dateTo"), into, req.Groups)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"into": into, "merged": merged})
	return nil
}

// handleUnmergeErrorGroups is POST /api/v1/errors/unmerge: {groups}
// takes each fingerprint out of the group it was merged into
// (errtrack.Groups.Unmerge, docs/errors.md, "Unmerging"). The credentials,
// budget and refusals are the merge's: a query token or the dashboard,
// charged to its query budget; a fingerprint that is not an alias of the
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
	unmerged, err := s.ErrorGroupOps.Unmerge(r.Context(), p.ProductID, req.Groups)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"unmerged": unmerged})
	return nil
}
