package sqlmeta

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"strata/internal/analytics"
)

// Boards and their tiles (migrations 0039 and 0040, docs/dashboard.md,
// "Dashboards").

var _ analytics.BoardStore = (*Store)(nil)

const boardColumns = `id, product_id, name, description, date_from, date_to, filters, created_at, updated_at, created_by`

func scanBoard(row Scanner) (analytics.Board, error) {
	var b analytics.Board
	var filters string
	err := row.Scan(&b.ID, &b.ProductID, &b.Name, &b.Description, &b.DateFrom, &b.DateTo, &filters, &b.CreatedAt, &b.UpdatedAt, &b.CreatedBy)
	b.Filters = json.RawMessage(filters)
	return b, err
}

func scanTile(row Scanner) (analytics.Tile, error) {
	var t analytics.Tile
	var q sql.NullInt64
	err := row.Scan(&t.ID, &t.BoardID, &q, &t.Card, &t.Position, &t.Width, &t.Height)
	t.QueryID = q.Int64
	return t, err
}

// boardFilters is how a board's filters are stored: a JSON array, never
// empty text.
func boardFilters(f json.RawMessage) string {
	if len(f) == 0 {
		return "[]"
	}
	return string(f)
}

// keepRefusal returns the analytics refusal inside err, unwrapped, so
// that inTx's wrapping does not hide it from the API.
func keepRefusal(err error) error {
	var e *analytics.Error
	if errors.As(err, &e) {
		return e
	}
	return err
}

// CreateBoard stores b unless the product has max boards; the count and
// the insert share a transaction, as shared links' do.
func (s *Store) CreateBoard(ctx context.Context, b *analytics.Board, max int) error {
	b.CreatedAt = s.stamp()
	b.UpdatedAt = b.CreatedAt
	b.Filters = json.RawMessage(boardFilters(b.Filters))
	return keepRefusal(s.inTx(ctx, "creating a board", func(tx *sql.Tx) error {
		if max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM boards WHERE product_id = $1`, b.ProductID).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return analytics.BoardsFull(max)
			}
		}
		return tx.QueryRowContext(ctx, `INSERT INTO boards (product_id, name, description, date_from, date_to, filters, created_at, updated_at, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
			b.ProductID, b.Name, b.Description, b.DateFrom, b.DateTo, string(b.Filters), b.CreatedAt, b.UpdatedAt, b.CreatedBy).Scan(&b.ID)
	}))
}

// Board returns one board of a product with its tiles in order.
func (s *Store) Board(ctx context.Context, productID, id int64) (analytics.Board, error) {
	b, err := queryOne(ctx, s.conn(), "reading board", scanBoard,
		`SELECT `+boardColumns+` FROM boards WHERE product_id = $1 AND id = $2`, productID, id)
	if err != nil {
		return b, err
	}
	b.Tiles, err = QueryAll(ctx, s.conn(), "reading board tiles", scanTile,
		`SELECT id, board_id, query_id, card, position, width, height FROM board_tiles WHERE board_id = $1 ORDER BY position, id`, id)
	if b.Tiles == nil {
		b.Tiles = []analytics.Tile{}
	}
	b.TileCount = len(b.Tiles)
	return b, err
}

// Boards returns a product's boards by name (then id), each with its
// number of tiles.
func (s *Store) Boards(ctx context.Context, productID int64) ([]analytics.Board, error) {
	return QueryAll(ctx, s.conn(), "listing boards", func(row Scanner) (analytics.Board, error) {
		var b analytics.Board
		var filters string
		err := row.Scan(&b.ID, &b.ProductID, &b.Name, &b.Description, &b.DateFrom, &b.DateTo, &filters, &b.CreatedAt, &b.UpdatedAt, &b.CreatedBy, &b.TileCount)
		b.Filters = json.RawMessage(filters)
		return b, err
	}, `SELECT b.id, b.product_id, b.name, b.description, b.date_from, b.date_to, b.filters, b.created_at, b.updated_at, b.created_by,
		(SELECT count(*) FROM board_tiles t WHERE t.board_id = b.id)
		FROM boards b WHERE b.product_id = $1 ORDER BY b.name, b.id`, productID)
}

// UpdateBoard replaces a board's fields and layout in one transaction:
// the tiles b.Tiles names must be exactly the board's, else ErrLayout.
func (s *Store) UpdateBoard(ctx context.Context, b *analytics.Board) error {
	b.UpdatedAt = s.stamp()
	b.Filters = json.RawMessage(boardFilters(b.Filters))
	err := s.inTx(ctx, "updating board", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE boards SET name = $1, description = $2, date_from = $3, date_to = $4, filters = $5, updated_at = $6
			 WHERE product_id = $7 AND id = $8`,
			b.Name, b.Description, b.DateFrom, b.DateTo, string(b.Filters), b.UpdatedAt, b.ProductID, b.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return fmt.Errorf("board %d: %w", b.ID, analytics.ErrNotFound)
		}
		if b.Tiles == nil {
			return nil
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM board_tiles WHERE board_id = $1`, b.ID).Scan(&n); err != nil {
			return err
		}
		seen := map[int64]bool{}
		for _, t := range b.Tiles {
			seen[t.ID] = true
		}
		if n != len(b.Tiles) || len(seen) != n {
			return analytics.ErrLayout
		}
		for i := range b.Tiles {
			t := &b.Tiles[i]
			t.Position, t.BoardID = i, b.ID
			res, err := tx.ExecContext(ctx, `UPDATE board_tiles SET position = $1, width = $2, height = $3 WHERE board_id = $4 AND id = $5`,
				t.Position, t.Width, t.Height, b.ID, t.ID)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err == nil && n == 0 {
				return analytics.ErrLayout
			}
		}
		return nil
	})
	return keepRefusal(err)
}

// DeleteBoard removes a board and its tiles and revokes its shared links,
// in one transaction.
func (s *Store) DeleteBoard(ctx context.Context, productID, id int64) error {
	return s.inTx(ctx, "deleting board", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM boards WHERE product_id = $1 AND id = $2`, productID, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return fmt.Errorf("board %d: %w", id, analytics.ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM board_tiles WHERE board_id = $1`, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE shared_links SET revoked_at = $1
			WHERE revoked_at IS NULL AND id IN (SELECT link_id FROM board_links WHERE board_id = $2)`, s.stamp(), id)
		return err
	})
}

// AddTile appends a tile to a board of the product unless the board has
// max tiles; the board, the saved query, the count and the insert are
// read and written in one transaction.
func (s *Store) AddTile(ctx context.Context, productID int64, t *analytics.Tile, max int) error {
	err := s.inTx(ctx, "adding a tile", func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM boards WHERE product_id = $1 AND id = $2`, productID, t.BoardID).Scan(&one); err != nil {
			return notFound(err, fmt.Sprintf("board %d", t.BoardID))
		}
		var query any
		if t.QueryID != 0 {
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM saved_queries WHERE product_id = $1 AND id = $2`, productID, t.QueryID).Scan(&one); err != nil {
				return notFound(err, fmt.Sprintf("saved query %d", t.QueryID))
			}
			query = t.QueryID
		}
		var n int
		var last sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT count(*), max(position) FROM board_tiles WHERE board_id = $1`, t.BoardID).Scan(&n, &last); err != nil {
			return err
		}
		if max > 0 && n >= max {
			return analytics.TilesFull(max)
		}
		t.Position = 0
		if last.Valid {
			t.Position = int(last.Int64) + 1
		}
		return tx.QueryRowContext(ctx, `INSERT INTO board_tiles (board_id, product_id, query_id, card, position, width, height)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			t.BoardID, productID, query, t.Card, t.Position, t.Width, t.Height).Scan(&t.ID)
	})
	return keepRefusal(err)
}

// RemoveTile removes one tile of a board of the product.
func (s *Store) RemoveTile(ctx context.Context, productID, boardID, tileID int64) error {
	res, err := s.conn().ExecContext(ctx, `DELETE FROM board_tiles WHERE product_id = $1 AND board_id = $2 AND id = $3`, productID, boardID, tileID)
	if err != nil {
		return fmt.Errorf("removing tile: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("tile %d: %w", tileID, analytics.ErrNotFound)
	}
	return nil
}
