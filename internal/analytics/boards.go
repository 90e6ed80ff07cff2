package analytics

import (
	"context"
	"encoding/json"
	"time"
)

// Board is a product's named dashboard of saved insights (docs/dashboard.md,
// "Dashboards"). Its date range and filters apply to every tile when the
// tile runs: DateFrom and DateTo, when set, replace the range on screen,
// and Filters (a JSON array of the query API's filters, as validated) are
// ANDed with the tile's own.
type Board struct {
	ID          int64           `json:"id"`
	ProductID   int64           `json:"productId"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	DateFrom    string          `json:"dateFrom"`
	DateTo      string          `json:"dateTo"`
	Filters     json.RawMessage `json:"filters"`
	CreatedAt   time.Time       `json:"createdAt"`
	UpdatedAt   time.Time       `json:"updatedAt"`
	CreatedBy   string          `json:"createdBy"`
	// Tiles are the board's tiles in their order; a list of boards leaves
	// them out and counts them in TileCount.
	Tiles     []Tile `json:"tiles,omitempty"`
	TileCount int    `json:"tileCount"`
}

// Tile is one tile of a board: a saved query of the board's product
// (QueryID) or one of the Overview's cards (Card). Width is in grid
// columns (1 to 4) and Height is 1 (small) or 2 (large).
type Tile struct {
	ID       int64  `json:"id"`
	BoardID  int64  `json:"boardId"`
	QueryID  int64  `json:"queryId,omitempty"`
	Card     string `json:"card,omitempty"`
	Position int    `json:"position"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	// Kind and Name are the saved query's, filled in when a board is read.
	Kind QueryKind `json:"kind,omitempty"`
	Name string    `json:"name,omitempty"`
}

// BoardStore keeps the products' boards and their tiles. Every method is
// scoped to one product: a board of another product is ErrNotFound.
type BoardStore interface {
	// CreateBoard stores b (without tiles) and fills in its ID and times,
	// unless the product has max boards already (BoardsFull).
	CreateBoard(ctx context.Context, b *Board, max int) error
	// Board returns one board with its tiles in order, or ErrNotFound.
	Board(ctx context.Context, productID, id int64) (Board, error)
	// Boards returns a product's boards, by name, without their tiles.
	Boards(ctx context.Context, productID int64) ([]Board, error)
	// UpdateBoard replaces a board's name, description, range and filters
	// and, in the same transaction, its layout: b.Tiles must name exactly
	// the board's tiles, in their new order, with their sizes (else
	// ErrLayout, with nothing changed).
	UpdateBoard(ctx context.Context, b *Board) error
	// DeleteBoard removes a board with its tiles and revokes its shared
	// links, in one transaction, or returns ErrNotFound.
	DeleteBoard(ctx context.Context, productID, id int64) error
	// AddTile appends t to the end of board t.BoardID of the product,
	// unless it has max tiles (TilesFull). A tile's saved query must be
	// one of the product's (else ErrNotFound).
	AddTile(ctx context.Context, productID int64, t *Tile, max int) error
	// RemoveTile removes one tile of a board of the product, or returns
	// ErrNotFound.
	RemoveTile(ctx context.Context, productID, boardID, tileID int64) error
}

// ErrLayout is the refusal of a layout that does not name exactly the
// board's tiles (one was added or removed meanwhile).
var ErrLayout = Errorf(KindConflict, "layout_changed",
	"The layout must list every tile of the board once; the board changed meanwhile: reload it.")

// BoardsFull is the refusal of a board past a product's cap.
func BoardsFull(max int) error {
	return Errorf(KindConflict, "boards_full",
		"This product already has %d dashboards, the most it may have; delete one it no longer needs first.", max)
}

// TilesFull is the refusal of a tile past a board's cap.
func TilesFull(max int) error {
	return Errorf(KindConflict, "tiles_full",
		"This dashboard already has %d tiles, the most it may have; remove one first.", max)
}
