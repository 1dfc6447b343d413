//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package fsx

import "os"

// LockFile is a no-op where no file lock is available: two runtimes on one
// file can then lose each other's changes (in-process mutexes still
// serialise one process).
func LockFile(*os.File) error { return nil }

// UnlockFile releases LockFile's lock.
func UnlockFile(*os.File) error { return nil }
