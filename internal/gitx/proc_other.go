//go:build !unix

package gitx

import "os/exec"

// ownGroup leaves cmd as it is (proc_unix.go).
func ownGroup(cmd *exec.Cmd) {}
