//go:build !linux

package pgtest

import (
	"errors"
	"os/exec"
)

// setProcAttr runs cmd as the current user. Switching to the postgres
// user, which running as root needs, is only implemented on Linux.
func setProcAttr(cmd *exec.Cmd, owner *account) error {
	if owner != nil {
		return errors.New("running PostgreSQL tests as root is supported on Linux only")
	}
	return nil
}
