package pgtest

import (
	"os/exec"
	"syscall"
)

// setProcAttr runs cmd as owner (nil: the current user) and has the kernel
// send it SIGQUIT, PostgreSQL's immediate shutdown, if the test process dies
// without stopping it, so that a killed test run leaves no server behind.
// Go sets the parent-death signal after switching user, which would
// otherwise clear it.
func setProcAttr(cmd *exec.Cmd, owner *account) error {
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGQUIT}
	if owner != nil {
		attr.Credential = &syscall.Credential{Uid: owner.uid, Gid: owner.gid}
	}
	cmd.SysProcAttr = attr
	return nil
}
