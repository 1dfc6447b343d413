//go:build windows

package fsx

import (
	"os"

	"golang.org/x/sys/windows"
)

// LockFile takes an exclusive LockFileEx lock on the first byte of f,
// waiting for other holders; closing f or the process ending releases it.
func LockFile(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol)
}

// UnlockFile releases LockFile's lock.
func UnlockFile(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}
