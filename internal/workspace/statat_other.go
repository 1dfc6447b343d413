//go:build !linux

package workspace

import (
	"errors"
	"io/fs"
	"os"
)

// statAt is not available here: callers fall back to fs.DirEntry.Info.
func statAt(dirfd int, name string) (fs.FileInfo, error) {
	return nil, errors.ErrUnsupported
}

// lstatPath is os.Lstat.
func lstatPath(abs string) (fs.FileInfo, error) { return os.Lstat(abs) }

// openDirPath is not available here: a reused listing's files are stated
// by path.
func openDirPath(abs string) (int, error) { return -1, errors.ErrUnsupported }

func closeFD(fd int) {}
