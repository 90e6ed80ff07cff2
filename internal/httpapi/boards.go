package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"strata/internal/analytics"
	"strata/internal/boards"
	"strata/internal/jsontext"
)

// Dashboards (docs/dashboard.md, "Dashboards"): a product's boards of
// saved insights under /api/v1/boards, with the roles of saved queries
// (a viewer reads and runs tiles, a member creates and lays out, an admin
// deletes a board). The operations are internal/boards'.

// boardID reads the {id} of a /boards/{id} path.
func boardID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, boards.ErrNotFound
	}
	return id, nil
}

// tileID reads the {tileId} of a /boards/{id}/tiles/{tileId} path.
func tileID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("tileId"), 10, 64)
	if err != nil || id < 1 {
		return 0, boards.ErrTileNotFound
	}
	return id, nil
}

// boardTarget authenticates a request on /boards/{id} and reads the id.
func (s *Server) boardTarget(r *http.Request) (analytics.EventRange, int64, error) {
	sc, err := s.scope(r)
	if err != nil {
		return sc, 0, err
	}
	id, err := boardID(r)
	return sc, id, err
}

// creatorName names who made a board: the dashboard user's e-mail, else
// the query token's prefix (never its secret).
func creatorName(r *http.Request, s *Server) string {
	p, err := s.principal(r)
	if err != nil {
		return ""
	}
	if p.Email != "" {
		return p.Email
	}
	return p.Prefix
}

// handleListBoards is GET /api/v1/boards.
func (s *Server) handleListBoards(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.scope(r)
	if err != nil {
		return err
	}
	list, err := readMeta(s, r, func(ctx context.Context) ([]analytics.Board, error) {
		return s.Boards.List(ctx, sc.ProductID)
	})
	if err != nil {
		return err
	}
	writeItems(w, list)
	return nil
}

// handleCreateBoard is POST /api/v1/boards.
func (s *Server) handleCreateBoard(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.scope(r)
	if err != nil {
		return err
	}
	var in boards.Input
	if err := readJSON(w, r, &in); err != nil {
		return err
	}
	b, err := s.Boards.Create(r.Context(), sc, in, creatorName(r, s))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, b)
	return nil
}

// handleGetBoard is GET /api/v1/boards/{id}: the board with its tiles in
// order.
func (s *Server) handleGetBoard(w http.ResponseWriter, r *http.Request) error {
	sc, id, err := s.boardTarget(r)
	if err != nil {
		return err
	}
	b, err := s.Boards.Get(r.Context(), sc.ProductID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// handleUpdateBoard is PUT /api/v1/boards/{id}: the name, description,
// range and filters, and the layout (tiles: every tile once, in order,
// with its size) in one transaction.
func (s *Server) handleUpdateBoard(w http.ResponseWriter, r *http.Request) error {
	sc, id, err := s.boardTarget(r)
	if err != nil {
		return err
	}
	var in boards.Input
	if err := readJSON(w, r, &in); err != nil {
		return err
	}
	b, err := s.Boards.Update(r.Context(), sc, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// handleDeleteBoard is DELETE /api/v1/boards/{id}.
func (s *Server) handleDeleteBoard(w http.ResponseWriter, r *http.Request) error {
	sc, id, err := s.boardTarget(r)
	if err != nil {
		return err
	}
	if err := s.Boards.Delete(r.Context(), sc.ProductID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleAddTile is POST /api/v1/boards/{id}/tiles.
func (s *Server) handleAddTile(w http.ResponseWriter, r *http.Request) error {
	sc, id, err := s.boardTarget(r)
	if err != nil {
		return err
	}
	var in boards.TileInput
	body, err := readQueryBody(w, r)
	if err != nil {
		return err
	}
	if err := jsontext.Decode(body, &in); err != nil {
		return err
	}
	t, err := s.Boards.AddTile(r.Context(), sc.ProductID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, t)
	return nil
}

// handleRemoveTile is DELETE /api/v1/boards/{id}/tiles/{tileId}.
func (s *Server) handleRemoveTile(w http.ResponseWriter, r *http.Request) error {
	sc, id, err := s.boardTarget(r)
	if err != nil {
		return err
	}
	tid, err := tileID(r)
	if err != nil {
		return err
	}
	if err := s.Boards.RemoveTile(r.Context(), sc.ProductID, id, tid); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleRunTile is POST /api/v1/boards/{id}/tiles/{tileId}/run: the
// tile's saved query with the board's filters, over the board's range or
// else the URL's dateFrom and dateTo, answered as its endpoint would. It
// is budgeted as every query is (the credential's query budget, then an
// admission slot), so a board's tiles, asked for all at once, queue in
// the admission like any other queries.
func (s *Server) handleRunTile(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	id, err := boardID(r)
	if err != nil {
		return err
	}
	tid, err := tileID(r)
	if err != nil {
		return err
	}
	qs := r.URL.Query()
	run, err := s.Boards.PrepareTile(r.Context(), sc, id, tid, qs.Get("dateFrom"), qs.Get("dateTo"))
	if err != nil {
		return err
	}
	res, err := run(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// boardShareRoute is the handler a board's shared link reaches at
// route ("METHOD /path" under /share/{secret}), with the path values it
// takes, or nil: its board's own routes (boardShareRoutes, with {id} its
// board's), the annotations its charts draw, and, when the board shows
// Overview cards, the Overview's reads under their checks (shareRoutes).
// Another board's paths are not reached.
func (s *Server) boardShareRoute(r *http.Request, link analytics.SharedLink, route string) (handlerFunc, map[string]string) {
	board := strconv.FormatInt(link.BoardID, 10)
	for pattern, h := range s.boardShareRoutes() {
		if values, ok := matchRoute(pattern, route); ok && values["id"] == board {
			return h, values
		}
	}
	if route == "GET /api/v1/annotations" {
		return s.handleListAnnotations, nil
	}
	h, ok := s.shareRoutes()[route]
	if !ok {
		return nil, nil
	}
	b, err := s.Boards.Get(r.Context(), link.ProductID, link.BoardID)
	if err != nil {
		return nil, nil
	}
	for _, t := range b.Tiles {
		if t.Card != "" {
			return h, nil
		}
	}
	return nil, nil
}

// matchRoute matches route against pattern, whose {name} segments match
// any one segment, and returns those segments by name.
func matchRoute(pattern, route string) (map[string]string, bool) {
	ps, rs := strings.Split(pattern, "/"), strings.Split(route, "/")
	if len(ps) != len(rs) {
		return nil, false
	}
	values := map[string]string{}
	for i, p := range ps {
		if name, ok := strings.CutPrefix(p, "{"); ok && rs[i] != "" {
			values[strings.TrimSuffix(name, "}")] = rs[i]
		} else if p != rs[i] {
			return nil, false
		}
	}
	return values, true
}
