package httpapi

import (
	"net/http"
	"path/filepath"
	"regexp"
	"time"

	"strata/internal/analytics"
)

// backupName is what a backup requested through the API may be called: a
// single directory name under the configured backup directory, never a
// path, so that a request cannot write anywhere else.
var backupName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// backupRequest is the body of POST /api/v1/admin/backups.
type backupRequest struct {
	Name string `json:"name"`
}

// handleBackup is POST /api/v1/admin/backups: an online backup of the data
// directory into a new directory under --backup-dir, named by the request
// or after the time (docs/operations.md, "Backup and restore"). It is for
// a signed-in dashboard user only: never an API key or a query token, and
// the caller never names a path. Without --backup-dir it is refused.
func (s *Server) handleBackup(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.settingsCaller(r); err != nil {
		return err
	}
	var in backupRequest
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	if s.BackupDir == "" {
		return analytics.Errorf(analytics.KindConflict, "backup_dir_unset",
			"This server takes no backups through the API: start it with --backup-dir DIR (env STRATA_BACKUP_DIR), or run strata backup --to DIR on its machine.")
	}
	name := in.Name
	if name == "" {
		name = "strata-" + s.now().UTC().Format("20060102T150405Z")
	}
	if !backupName.MatchString(name) {
		return analytics.Errorf(analytics.KindInvalid, "invalid_request",
			"name must be 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit.")
	}
	m, err := s.Admin.Backup(r.Context(), filepath.Join(s.BackupDir, name))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"name": name, "manifest": m})
	return nil
}

// now is the server's clock.
func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
