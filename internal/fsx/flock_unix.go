//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package fsx

import (
	"os"

	"golang.org/x/sys/unix"
)

// LockFile takes an exclusive flock(2) on f, waiting for other holders
// (another runtime, or another open file in this one: the edit log's
// checkpoint, the worktree registry). The lock goes with the open file:
// closing f, or the process ending, releases it.
func LockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}

// UnlockFile releases LockFile's lock.
func UnlockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
