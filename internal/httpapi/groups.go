package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"strata/internal/analytics"
	"strata/internal/ingest"
	"strata/internal/jsontext"
	"strata/internal/query"
)

// Groups (docs/ingest.md, "Groups"): the SDK's group() sends a group's
// properties here with the product's API key, as it reads its
// configuration (sdkconfig.go); the dashboard lists the groups with a
// token or a session.

// groupsPathPrefix starts the SDK's group path, whose body has its own
// limit (serveAdapted).
const groupsPathPrefix = "/api/v1/groups/"

// maxGroupBody bounds the body of POST /api/v1/groups/{type}/{key}: the
// properties' own limit, as an event's.
const maxGroupBody = 64 << 10

var errGroupBodyTooLarge = analytics.Errorf(analytics.KindTooLarge, "body_too_large",
	"The request body is over 64 KB (%d bytes), the limit of a group's properties.", maxGroupBody)

// groupRequest is the body of POST /api/v1/groups/{type}/{key}.
type groupRequest struct {
	Properties json.RawMessage `json:"properties"`
}

// handleUpsertGroup is POST /api/v1/groups/{type}/{key}: it creates the
// group or merges the properties sent into its stored ones, and answers
// 202 {}. The API key comes from X-API-Key, else the query, as for the
// configuration; it is rate-limited as ingest is, since every page view
// of a site may send it.
func (s *Server) handleUpsertGroup(w http.ResponseWriter, r *http.Request) error {
	key, err := s.admit(r.Context(), []byte(r.Header.Get("Origin")), sdkKeyText(r))
	if err != nil {
		return err
	}
	groupType, groupKey := r.PathValue("type"), r.PathValue("key")
	if err := analytics.CheckGroupType("type", groupType); err != nil {
		return err
	}
	if err := analytics.CheckGroupKey("key", groupKey); err != nil {
		return err
	}
	body, err := readQueryBody(w, r)
	if err != nil {
		return err
	}
	var req groupRequest
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := jsontext.Decode(body, &req); err != nil {
			return err
		}
	}
	props, err := ingest.GroupProperties(req.Properties)
	if err != nil {
		return err
	}
	if _, err := s.Groups.UpsertGroup(r.Context(), key.ProductID, groupType, groupKey, props); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, struct{}{})
	return nil
}

// handleListGroups is GET /api/v1/groups: the product's groups, of one
// type when ?type= names it, most recently updated first, and the types
// the product has groups of (the dashboard's "Count" selector).
func (s *Server) handleListGroups(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	groupType := q.Get("type")
	if groupType != "" {
		if err := analytics.CheckGroupType("type", groupType); err != nil {
			return err
		}
	}
	limit := analytics.DefaultGroupList
	if l := q.Get("limit"); l != "" {
		if limit, err = query.ParseLimit(l, analytics.MaxGroupList); err != nil {
			return err
		}
	}
	list, err := readMeta(s, r, func(ctx context.Context) ([]analytics.Group, error) {
		return s.Groups.ListGroups(ctx, p.ProductID, groupType, limit)
	})
	if err != nil {
		return err
	}
	types, err := s.Groups.GroupTypes(r.Context(), p.ProductID)
	if err != nil {
		return err
	}
	if list == nil {
		list = []analytics.Group{}
	}
	if types == nil {
		types = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": list, "types": types})
	return nil
}
