//go:build !linux

package proctree

import (
	"os/exec"
	"syscall"
)

// StartTied is cmd.Start: there is no parent-death signal outside Linux,
// so a child there learns of the runtime's death only from its pipes
// (see start_linux.go).
func StartTied(cmd *exec.Cmd, sig syscall.Signal) error {
	return cmd.Start()
}
