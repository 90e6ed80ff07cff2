package sqlmeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"strata/internal/analytics"
)

// Shared links (migration 0026, docs/dashboard.md, "Shared links"),
// stored by the SHA-256 of their secret as query tokens are.

var _ analytics.SharedLinkStore = (*Store)(nil)

const sharedLinkColumns = `id, product_id, name, hash, prefix, password_hash, created_at, created_by, revoked_at`

// sharedLinkBoard selects, after sharedLinkColumns, the board of a board's
// link (board_links, migration 0040), 0 for an Overview link.
const sharedLinkBoard = `, COALESCE((SELECT b.board_id FROM board_links b WHERE b.link_id = shared_links.id), 0)`

func scanSharedLink(row Scanner) (analytics.SharedLink, error) {
	return scanLink(row, false)
}

func scanSharedLinkBoard(row Scanner) (analytics.SharedLink, error) {
	return scanLink(row, true)
}

func scanLink(row Scanner, board bool) (analytics.SharedLink, error) {
	var l analytics.SharedLink
	var revoked sql.NullTime
	dest := []any{&l.ID, &l.ProductID, &l.Name, &l.Hash, &l.Prefix, &l.PasswordHash, &l.CreatedAt, &l.CreatedBy, &revoked}
	if board {
		dest = append(dest, &l.BoardID)
	}
	err := row.Scan(dest...)
	l.HasPassword = l.PasswordHash != ""
	if revoked.Valid {
		t := revoked.Time
		l.RevokedAt = &t
	}
	return l, err
}

// CreateSharedLink stores a link unless the product has max links that
// are not revoked (its Overview's and its boards' together). A board's
// link (BoardID set) is also recorded in board_links, in the same
// transaction, once the board is found in the link's product. The count and the insert share a transaction; two
// creations at once on two nodes may both see room, so a product may go
// over max by the number of nodes that create one at that moment.
func (s *Store) CreateSharedLink(ctx context.Context, l *analytics.SharedLink, max int) error {
	l.CreatedAt = s.stamp()
	l.HasPassword = l.PasswordHash != ""
	err := s.inTx(ctx, "creating a shared link", func(tx *sql.Tx) error {
		if max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM shared_links WHERE product_id = $1 AND revoked_at IS NULL`,
				l.ProductID).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return analytics.SharedLinksFull(max)
			}
		}
		if l.BoardID != 0 {
			var one int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM boards WHERE product_id = $1 AND id = $2`, l.ProductID, l.BoardID).Scan(&one); err != nil {
				return notFound(err, fmt.Sprintf("board %d", l.BoardID))
			}
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO shared_links (product_id, name, hash, prefix, password_hash, created_at, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			l.ProductID, l.Name, l.Hash, l.Prefix, l.PasswordHash, l.CreatedAt, l.CreatedBy).Scan(&l.ID); err != nil {
			return err
		}
		if l.BoardID == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO board_links (link_id, board_id) VALUES ($1, $2)`, l.ID, l.BoardID)
		return err
	})
	if err != nil {
		var full *analytics.Error
		if errors.As(err, &full) {
			return full
		}
		return err
	}
	return nil
}

// SharedLinks returns a product's links that are not revoked, oldest first.
func (s *Store) SharedLinks(ctx context.Context, productID int64) ([]analytics.SharedLink, error) {
	return QueryAll(ctx, s.conn(), "listing shared links", scanSharedLinkBoard,
		`SELECT `+sharedLinkColumns+sharedLinkBoard+` FROM shared_links WHERE product_id = $1 AND revoked_at IS NULL ORDER BY id`, productID)
}

// SharedLinkByHash returns the link whose secret has this SHA-256.
func (s *Store) SharedLinkByHash(ctx context.Context, hash []byte) (analytics.SharedLink, error) {
	l, err := scanSharedLinkBoard(s.conn().QueryRowContext(ctx, `SELECT `+sharedLinkColumns+sharedLinkBoard+` FROM shared_links WHERE hash = $1`, hash))
	if err != nil {
		return l, notFound(err, "shared link")
	}
	return l, nil
}

// RevokeSharedLink sets the revoked time of one of the product's links.
func (s *Store) RevokeSharedLink(ctx context.Context, productID, id int64) (analytics.SharedLink, error) {
	l, err := scanSharedLink(s.conn().QueryRowContext(ctx,
		`UPDATE shared_links SET revoked_at = $1 WHERE id = $2 AND product_id = $3 AND revoked_at IS NULL RETURNING `+sharedLinkColumns,
		s.stamp(), id, productID))
	if err != nil {
		return l, notFound(err, fmt.Sprintf("shared link %d", id))
	}
	return l, nil
}
