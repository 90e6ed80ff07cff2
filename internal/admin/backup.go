package admin

import (
	"context"
	"net/http"
	"path/filepath"

	"strata/internal/analytics"
	"strata/internal/backup"
)

// BackupRequest is the body of the admin socket's POST /backups.
type BackupRequest struct {
	To string `json:"to"`
}

// Backup implements Admin on the server's stores.
func (s *Service) Backup(ctx context.Context, dir string) (backup.Manifest, error) {
	if s.Backups == nil {
		return backup.Manifest{}, analytics.Errorf(analytics.KindConflict, "backup_not_embedded",
			"This server keeps its events or metadata in ClickHouse or PostgreSQL; back those up with their own tools (docs/operations.md, \"Backup and restore\").")
	}
	if !filepath.IsAbs(dir) {
		// The socket's client and the server may not share a working
		// directory; the CLI resolves the path it was given.
		return backup.Manifest{}, analytics.Errorf(analytics.KindInvalid, "invalid_request", "The backup target must be an absolute path.")
	}
	return s.Backups.Take(ctx, filepath.Clean(dir))
}

// Backup implements Admin over the socket.
func (c *Client) Backup(ctx context.Context, dir string) (backup.Manifest, error) {
	var m backup.Manifest
	err := c.doWith(c.long, ctx, http.MethodPost, "/backups", BackupRequest{To: dir}, &m)
	return m, err
}
