//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package editlog

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock(2) on f, waiting for other holders
// (another runtime, or another Log on the same checkpoint). The lock goes
// with the open file: closing f, or the process ending, releases it.
func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
