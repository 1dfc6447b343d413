//go:build !linux

package workspace

import (
	"errors"
	"io/fs"
)

// statAt is not available here: callers fall back to fs.DirEntry.Info.
func statAt(dirfd int, name string) (fs.FileInfo, error) {
	return nil, errors.ErrUnsupported
}
