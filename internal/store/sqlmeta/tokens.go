package sqlmeta

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// TouchQueryTokens records when query tokens were last used, in one
// transaction and in id order, for the reasons TouchAPIKeys gives.
func (s *Store) TouchQueryTokens(ctx context.Context, lastUsed map[int64]time.Time) error {
	if len(lastUsed) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(lastUsed))
	for id := range lastUsed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("touching query tokens: %w", err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx,
			`UPDATE query_tokens SET last_used_at = $1 WHERE id = $2`, utc(lastUsed[id]), id); err != nil {
			return fmt.Errorf("touching query token %d: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("touching query tokens: %w", err)
	}
	return nil
}
