package sqlmeta

import (
	"context"
	"time"
)

// TouchQueryTokens records when query tokens were last used, as
// TouchAPIKeys does for keys.
func (s *Store) TouchQueryTokens(ctx context.Context, lastUsed map[int64]time.Time) error {
	return s.touch(ctx, "query token", `UPDATE query_tokens SET last_used_at = $1 WHERE id = $2`, lastUsed)
}
