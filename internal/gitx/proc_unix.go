//go:build unix

package gitx

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, and a cancel of its
// context kills the group: what git started (a hook, a credential helper,
// an ssh, or a wrapper earlier in PATH) ends with it instead of holding
// its output open and living on.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
