package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"strata/internal/analytics"
)

// testBoards checks the boards and their tiles: a board is stored with
// its range and filters and read back with its tiles in order; every
// method is scoped to its product; the caps refuse with nothing stored; a
// layout that does not name exactly the board's tiles changes nothing (the
// reorder is one transaction); a tile's saved query must be the product's,
// and deleting the saved query removes its tiles; deleting a board removes
// its tiles and revokes its shared links, which stay board links.
func testBoards(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	saved := func(p int64, name string) analytics.SavedQuery {
		q := analytics.SavedQuery{ProductID: p, Kind: analytics.QueryTrend, Name: name, Definition: json.RawMessage(`{"series":[{"event":"x"}]}`)}
		if err := s.CreateSavedQuery(ctx, &q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	qa, qa2, qb := saved(a.ID, "A1"), saved(a.ID, "A2"), saved(b.ID, "B1")

	board := analytics.Board{ProductID: a.ID, Name: "Growth", Description: "weekly", DateFrom: "-30d",
		Filters: json.RawMessage(`[{"property":"country","operator":"eq","value":"FR"}]`), CreatedBy: "user 1"}
	if err := s.CreateBoard(ctx, &board, 2); err != nil || board.ID == 0 || board.CreatedAt.IsZero() {
		t.Fatalf("create: %+v %v", board, err)
	}
	other := analytics.Board{ProductID: a.ID, Name: "Another", CreatedBy: "user 1"}
	if err := s.CreateBoard(ctx, &other, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBoard(ctx, &analytics.Board{ProductID: a.ID, Name: "Third"}, 2); analytics.AsError(err).Code != "boards_full" {
		t.Errorf("a board past the cap: %v", err)
	}
	bb := analytics.Board{ProductID: b.ID, Name: "B's", CreatedBy: "user 2"}
	if err := s.CreateBoard(ctx, &bb, 2); err != nil {
		t.Fatal(err)
	}
	list, err := s.Boards(ctx, a.ID)
	if err != nil || len(list) != 2 || list[0].ID != other.ID || list[1].ID != board.ID || string(list[0].Filters) != "[]" {
		t.Fatalf("A's boards: %+v %v", list, err)
	}

	// Tiles: a saved query of A, an Overview card, and not B's query.
	add := func(p, boardID, query int64, card string, max int) (analytics.Tile, error) {
		tile := analytics.Tile{BoardID: boardID, QueryID: query, Card: card, Width: 2, Height: 1}
		err := s.AddTile(ctx, p, &tile, max)
		return tile, err
	}
	t1, err := add(a.ID, board.ID, qa.ID, "", 3)
	if err != nil || t1.ID == 0 || t1.Position != 0 {
		t.Fatalf("add: %+v %v", t1, err)
	}
	t2, _ := add(a.ID, board.ID, 0, "top_pages", 3)
	t3, _ := add(a.ID, board.ID, qa2.ID, "", 3)
	if t2.Position != 1 || t3.Position != 2 {
		t.Errorf("positions %d %d, want 1 2", t2.Position, t3.Position)
	}
	if _, err := add(a.ID, board.ID, qa.ID, "", 3); analytics.AsError(err).Code != "tiles_full" {
		t.Errorf("a tile past the cap: %v", err)
	}
	if _, err := add(a.ID, other.ID, qb.ID, "", 3); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a tile of B's saved query on A's board: %v", err)
	}
	if _, err := add(b.ID, board.ID, qb.ID, "", 3); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a tile on A's board through B: %v", err)
	}
	if _, err := s.Board(ctx, b.ID, board.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("A's board read through B: %v", err)
	}
	got, err := s.Board(ctx, a.ID, board.ID)
	if err != nil || got.Name != "Growth" || got.Description != "weekly" || got.DateFrom != "-30d" || got.DateTo != "" ||
		string(got.Filters) != string(board.Filters) || got.CreatedBy != "user 1" || len(got.Tiles) != 3 ||
		got.Tiles[0].QueryID != qa.ID || got.Tiles[1].Card != "top_pages" || got.Tiles[1].QueryID != 0 || got.Tiles[2].ID != t3.ID {
		t.Fatalf("board: %+v %v", got, err)
	}

	// The layout: reordered and resized whole, or not at all.
	upd := got
	upd.Name, upd.DateFrom, upd.DateTo = "Growth 2", "2026-01-01", "2026-01-31"
	upd.Tiles = []analytics.Tile{{ID: t3.ID, Width: 4, Height: 2}, {ID: t1.ID, Width: 1, Height: 1}, {ID: t2.ID, Width: 2, Height: 1}}
	if err := s.UpdateBoard(ctx, &upd); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Board(ctx, a.ID, board.ID)
	if got.Name != "Growth 2" || got.DateTo != "2026-01-31" || got.Tiles[0].ID != t3.ID || got.Tiles[0].Width != 4 || got.Tiles[0].Height != 2 ||
		got.Tiles[1].ID != t1.ID || got.Tiles[2].ID != t2.ID {
		t.Errorf("after the layout: %+v", got)
	}
	for _, bad := range [][]analytics.Tile{
		{{ID: t1.ID, Width: 1, Height: 1}, {ID: t2.ID, Width: 1, Height: 1}},
		{{ID: t1.ID, Width: 1, Height: 1}, {ID: t1.ID, Width: 1, Height: 1}, {ID: t2.ID, Width: 1, Height: 1}},
		{{ID: t1.ID, Width: 1, Height: 1}, {ID: t2.ID, Width: 1, Height: 1}, {ID: t3.ID + 1000, Width: 1, Height: 1}},
	} {
		u := got
		u.Name, u.Tiles = "Changed", bad
		if err := s.UpdateBoard(ctx, &u); analytics.AsError(err).Code != "layout_changed" {
			t.Errorf("layout %+v: %v", bad, err)
		}
	}
	if again, _ := s.Board(ctx, a.ID, board.ID); again.Name != "Growth 2" || again.Tiles[0].ID != t3.ID || again.Tiles[0].Width != 4 {
		t.Errorf("a refused layout changed the board: %+v", again)
	}
	u := got
	u.ProductID = b.ID
	if err := s.UpdateBoard(ctx, &u); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("update through B: %v", err)
	}

	// Removing a tile; deleting a saved query removes its tiles.
	if err := s.RemoveTile(ctx, b.ID, board.ID, t2.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("remove through B: %v", err)
	}
	if err := s.RemoveTile(ctx, a.ID, other.ID, t2.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("remove through another board: %v", err)
	}
	if err := s.RemoveTile(ctx, a.ID, board.ID, t2.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSavedQuery(ctx, a.ID, qa2.ID); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Board(ctx, a.ID, board.ID)
	if len(got.Tiles) != 1 || got.Tiles[0].ID != t1.ID {
		t.Errorf("tiles after a remove and a saved query's delete: %+v", got.Tiles)
	}
	if list, _ := s.Boards(ctx, a.ID); list[1].TileCount != 1 {
		t.Errorf("tile count %d, want 1", list[1].TileCount)
	}

	// A board's shared link, and the board's delete.
	link := analytics.SharedLink{ProductID: a.ID, BoardID: board.ID, Name: "Board", Hash: []byte("board-hash-00000"), Prefix: "st_share_boar", CreatedBy: "user 1"}
	if err := s.CreateSharedLink(ctx, &link, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSharedLink(ctx, &analytics.SharedLink{ProductID: b.ID, BoardID: board.ID, Name: "x", Hash: []byte("board-hash-b0000"),
		Prefix: "st_share_boar"}, 5); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a link of B to A's board: %v", err)
	}
	if l, err := s.SharedLinkByHash(ctx, link.Hash); err != nil || l.BoardID != board.ID {
		t.Errorf("a board's link by hash: %+v %v", l, err)
	}
	if links, _ := s.SharedLinks(ctx, a.ID); len(links) != 1 || links[0].BoardID != board.ID {
		t.Errorf("A's links: %+v", links)
	}
	if err := s.DeleteBoard(ctx, b.ID, board.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("delete through B: %v", err)
	}
	if err := s.DeleteBoard(ctx, a.ID, board.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Board(ctx, a.ID, board.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a deleted board: %v", err)
	}
	if l, err := s.SharedLinkByHash(ctx, link.Hash); err != nil || l.RevokedAt == nil || l.BoardID != board.ID {
		t.Errorf("the link of a deleted board: %+v %v, want it revoked and still the board's", l, err)
	}
	if err := s.RemoveTile(ctx, a.ID, board.ID, t1.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a tile of a deleted board: %v", err)
	}
	if list, _ := s.Boards(ctx, b.ID); len(list) != 1 || list[0].ID != bb.ID {
		t.Errorf("B's boards: %+v", list)
	}
}
