// Package boards holds the operations on dashboards (docs/dashboard.md,
// "Dashboards"): a product's named boards of saved insights and Overview
// cards, laid out as tiles, with a date range and filters that apply to
// every tile. It validates boards and tiles, keeps them under their caps,
// and runs a tile's saved query with the board's range and filters. Who
// the caller is, the roles, the rate limits and the wire forms are the
// transport's (internal/httpapi/boards.go).
package boards

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/query"
)

// Limits of the operations on boards.
const (
	MaxNameLen        = 100
	MaxDescriptionLen = 500
	// MaxFilters bounds a board's filters, as many as a trend takes.
	MaxFilters = 20
	// MaxWidth is the grid's columns; a tile is 1 to MaxWidth wide and
	// 1 (small) or 2 (large) high.
	MaxWidth  = 4
	MaxHeight = 2
	// MaxBoardsPerProduct and MaxTilesPerBoard are the caps the server
	// runs with (docs/security.md, the limits table): a board's tiles all
	// run when it opens, so their number bounds what one page view asks.
	MaxBoardsPerProduct = 100
	MaxTilesPerBoard    = 24
)

// Cards are the Overview's cards a tile may show (dashboard/src/pages/
// Overview.tsx): each runs the Overview's own reads over the board's range.
var Cards = []string{"traffic", "top_pages", "sources", "countries", "devices"}

// Refusals of the operations, in the API's vocabulary.
var (
	ErrNotFound = analytics.Errorf(analytics.KindNotFound, "board_not_found",
		"There is no dashboard with this id in this product.")
	ErrTileNotFound = analytics.Errorf(analytics.KindNotFound, "tile_not_found",
		"There is no tile with this id on this dashboard.")
	ErrQueryNotFound = analytics.Errorf(analytics.KindNotFound, "query_not_found",
		"There is no saved query with this id in this product.")
	ErrCardTile = analytics.Errorf(analytics.KindInvalid, "card_tile",
		"This tile shows an Overview card, which runs the Overview's own reads; it has no saved query to run.")
)

// Service runs the operations on one metadata store's boards.
type Service struct {
	Store   analytics.BoardStore
	Saved   analytics.SavedQueryStore
	Queries *query.Engine
	// MaxBoards is how many boards a product may have; MaxTiles, how many
	// tiles a board may have.
	MaxBoards, MaxTiles int
	Now                 func() time.Time
}

// Input is what a create or an update sets: the name, description, range
// and filters and, on an update, the layout (every tile of the board once,
// in its new order, with its size), or nil to keep it.
type Input struct {
	Name        string                `json:"name"`
	Description string                `json:"description"`
	DateFrom    string                `json:"dateFrom"`
	DateTo      string                `json:"dateTo"`
	Filters     []query.FilterRequest `json:"filters"`
	Tiles       []Layout              `json:"tiles"`
}

// Layout is one tile's place in an update: its id and size; the order is
// the list's.
type Layout struct {
	ID     int64 `json:"id"`
	Width  int   `json:"width"`
	Height int   `json:"height"`
}

// TileInput is a tile to add: a saved query of the product or an
// Overview card, and its size (0: 2 wide, small).
type TileInput struct {
	QueryID int64  `json:"queryId"`
	Card    string `json:"card"`
	Width   int    `json:"width"`
	Height  int    `json:"height"`
}

// fill validates in and sets b's fields from it. The range and filters are
// checked as a trend's body would check them, so that every tile's query
// accepts them.
func (s *Service) fill(sc analytics.EventRange, in Input, b *analytics.Board) error {
	name := strings.TrimSpace(in.Name)
	if n := utf8.RuneCountInString(name); n < 1 || n > MaxNameLen {
		return analytics.InvalidField("name", "must be 1 to %d characters, not %d", MaxNameLen, n)
	}
	desc := strings.TrimSpace(in.Description)
	if n := utf8.RuneCountInString(desc); n > MaxDescriptionLen {
		return analytics.InvalidField("description", "must be at most %d characters, not %d", MaxDescriptionLen, n)
	}
	if len(in.Filters) > MaxFilters {
		return analytics.InvalidField("filters", "at most %d filters, not %d", MaxFilters, len(in.Filters))
	}
	filters := in.Filters
	if filters == nil {
		filters = []query.FilterRequest{}
	}
	if err := checkRelative(in.DateFrom, in.DateTo); err != nil {
		return err
	}
	from, to := resolveRange(in.DateFrom, in.DateTo, s.Now(), sc.Location())
	probe, _ := json.Marshal(query.TrendRequest{Series: []query.SeriesRequest{{Event: "$pageview"}},
		DateFrom: from, DateTo: to, Filters: filters})
	if _, err := query.ParseTrend(probe, sc, s.Now()); err != nil {
		return err
	}
	if (in.DateFrom == "") != (in.DateTo == "") {
		return analytics.InvalidField("dateTo", "a board's range needs both dateFrom and dateTo, or neither for the range on screen")
	}
	f, _ := json.Marshal(filters)
	b.Name, b.Description, b.DateFrom, b.DateTo, b.Filters = name, desc, in.DateFrom, in.DateTo, f
	return nil
}

// size checks a tile's width and height; 0 picks the default.
func size(width, height int) (int, int, error) {
	if width == 0 {
		width = 2
	}
	if height == 0 {
		height = 1
	}
	if width < 1 || width > MaxWidth {
		return 0, 0, analytics.InvalidField("width", "must be 1 to %d columns, not %d", MaxWidth, width)
	}
	if height < 1 || height > MaxHeight {
		return 0, 0, analytics.InvalidField("height", "must be 1 (small) or 2 (large), not %d", height)
	}
	return width, height, nil
}

// Create makes a board of the product with no tiles.
func (s *Service) Create(ctx context.Context, sc analytics.EventRange, in Input, createdBy string) (analytics.Board, error) {
	b := analytics.Board{ProductID: sc.ProductID, CreatedBy: createdBy}
	if in.Tiles != nil {
		return b, analytics.InvalidField("tiles", "a new dashboard has no tiles: add them with POST /boards/{id}/tiles")
	}
	if err := s.fill(sc, in, &b); err != nil {
		return b, err
	}
	if err := s.Store.CreateBoard(ctx, &b, s.MaxBoards); err != nil {
		return b, err
	}
	b.Tiles = []analytics.Tile{}
	return b, nil
}

// List returns the product's boards, by name, without their tiles.
func (s *Service) List(ctx context.Context, productID int64) ([]analytics.Board, error) {
	list, err := s.Store.Boards(ctx, productID)
	if list == nil {
		list = []analytics.Board{}
	}
	return list, err
}

// Get returns one board with its tiles.
func (s *Service) Get(ctx context.Context, productID, id int64) (analytics.Board, error) {
	b, err := s.Store.Board(ctx, productID, id)
	if err != nil {
		return b, lookup(err, ErrNotFound)
	}
	// Each tile names its saved query's kind and name, which the board
	// (and a board's shared link, which cannot list saved queries) shows.
	for i := range b.Tiles {
		t := &b.Tiles[i]
		if t.QueryID == 0 {
			continue
		}
		q, err := s.Saved.SavedQuery(ctx, productID, t.QueryID)
		if err != nil {
			return b, lookup(err, ErrNotFound)
		}
		t.Kind, t.Name = q.Kind, q.Name
	}
	return b, nil
}

// Update replaces a board's name, description, range and filters and, when
// in.Tiles is not nil, its layout, in one transaction: the layout must list
// every tile of the board once (else 409 layout_changed, nothing changed).
func (s *Service) Update(ctx context.Context, sc analytics.EventRange, id int64, in Input) (analytics.Board, error) {
	b := analytics.Board{ID: id, ProductID: sc.ProductID}
	if err := s.fill(sc, in, &b); err != nil {
		return b, err
	}
	if in.Tiles != nil {
		b.Tiles = make([]analytics.Tile, len(in.Tiles))
		for i, l := range in.Tiles {
			w, h, err := size(l.Width, l.Height)
			if err != nil {
				return b, err
			}
			b.Tiles[i] = analytics.Tile{ID: l.ID, Width: w, Height: h}
		}
	}
	if err := s.Store.UpdateBoard(ctx, &b); err != nil {
		return b, lookup(err, ErrNotFound)
	}
	return s.Get(ctx, sc.ProductID, id)
}

// Delete removes a board with its tiles and revokes its shared links.
func (s *Service) Delete(ctx context.Context, productID, id int64) error {
	return lookup(s.Store.DeleteBoard(ctx, productID, id), ErrNotFound)
}

// AddTile appends a tile to the end of a board.
func (s *Service) AddTile(ctx context.Context, productID, boardID int64, in TileInput) (analytics.Tile, error) {
	t := analytics.Tile{BoardID: boardID, QueryID: in.QueryID, Card: in.Card}
	switch {
	case in.QueryID != 0 && in.Card != "":
		return t, analytics.InvalidField("card", "a tile shows a saved query or an Overview card, not both")
	case in.QueryID == 0 && in.Card == "":
		return t, analytics.InvalidField("queryId", "is required, or card for an Overview card")
	case in.QueryID < 0:
		return t, ErrQueryNotFound
	case in.Card != "" && !slices.Contains(Cards, in.Card):
		return t, analytics.InvalidField("card", "must be one of %s, not %q", strings.Join(Cards, ", "), in.Card)
	}
	var err error
	if t.Width, t.Height, err = size(in.Width, in.Height); err != nil {
		return t, err
	}
	if _, err := s.Store.Board(ctx, productID, boardID); err != nil {
		return t, lookup(err, ErrNotFound)
	}
	if err := s.Store.AddTile(ctx, productID, &t, s.MaxTiles); err != nil {
		// The board was found just now: a miss is the saved query's, or
		// the board's, deleted in between.
		return t, lookup(err, ErrQueryNotFound)
	}
	return t, nil
}

// RemoveTile removes one tile of a board.
func (s *Service) RemoveTile(ctx context.Context, productID, boardID, tileID int64) error {
	if _, err := s.Store.Board(ctx, productID, boardID); err != nil {
		return lookup(err, ErrNotFound)
	}
	return lookup(s.Store.RemoveTile(ctx, productID, boardID, tileID), ErrTileNotFound)
}

// PrepareTile returns tile tileID of board boardID ready to run: its saved
// query's definition with the board's filters ANDed with the tile's own
// (ApplyFilters), over the board's range when it has one (relative days
// counted back from today in the product's zone), else over
// dateFrom and dateTo (the range on screen; both "" for the definition's
// own). It reads the board, so that a tile of another board or product,
// or one removed, is not found.
func (s *Service) PrepareTile(ctx context.Context, sc analytics.EventRange, boardID, tileID int64, dateFrom, dateTo string) (func(context.Context) (any, error), error) {
	b, err := s.Get(ctx, sc.ProductID, boardID)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(b.Tiles, func(t analytics.Tile) bool { return t.ID == tileID })
	if i < 0 {
		return nil, ErrTileNotFound
	}
	t := b.Tiles[i]
	if t.QueryID == 0 {
		return nil, ErrCardTile
	}
	q, err := s.Saved.SavedQuery(ctx, sc.ProductID, t.QueryID)
	if err != nil {
		return nil, lookup(err, ErrQueryNotFound)
	}
	def, err := ApplyFilters(q.Kind, q.Definition, b.Filters)
	if err != nil {
		return nil, err
	}
	if b.DateFrom != "" {
		dateFrom, dateTo = resolveRange(b.DateFrom, b.DateTo, s.Now(), sc.Location())
	}
	return s.Queries.PrepareSaved(q.Kind, sc, def, dateFrom, dateTo)
}

// ApplyFilters ANDs a board's filters (a JSON array of the query API's
// filters) with a saved definition of the given kind: a trend's, a paths
// query's and a retention query's are appended to its filters (retention
// applies them to its start and return events), a funnel's to every
// step's where (so that each step counts only events that pass them).
func ApplyFilters(kind analytics.QueryKind, def, filters json.RawMessage) (json.RawMessage, error) {
	var board []json.RawMessage
	if len(bytes.TrimSpace(filters)) > 0 {
		if err := json.Unmarshal(filters, &board); err != nil {
			return nil, err
		}
	}
	if len(board) == 0 {
		return def, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(def, &fields); err != nil {
		return nil, err
	}
	if fields == nil {
		fields = map[string]json.RawMessage{}
	}
	appendTo := func(obj map[string]json.RawMessage, key string) error {
		var have []json.RawMessage
		if raw, ok := obj[key]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &have); err != nil {
				return err
			}
		}
		raw, err := json.Marshal(append(have, board...))
		obj[key] = raw
		return err
	}
	switch kind {
	case analytics.QueryTrend, analytics.QueryPaths, analytics.QueryRetention:
		if err := appendTo(fields, "filters"); err != nil {
			return nil, err
		}
	case analytics.QueryFunnel:
		var raws []json.RawMessage
		if err := json.Unmarshal(fields["steps"], &raws); err != nil {
			return nil, err
		}
		steps := make([]map[string]json.RawMessage, len(raws))
		for i, raw := range raws {
			// A step saved as a plain event name becomes the object
			// form, which has a where.
			if bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
				steps[i] = map[string]json.RawMessage{"event": raw}
			} else if err := json.Unmarshal(raw, &steps[i]); err != nil {
				return nil, err
			}
			if err := appendTo(steps[i], "where"); err != nil {
				return nil, err
			}
		}
		raw, err := json.Marshal(steps)
		if err != nil {
			return nil, err
		}
		fields["steps"] = raw
	}
	return json.Marshal(fields)
}

// lookup turns a store miss into the operation's not-found refusal.
func lookup(err error, notFound error) error {
	if errors.Is(err, analytics.ErrNotFound) {
		return notFound
	}
	return err
}
