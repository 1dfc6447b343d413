//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// fileID identifies a folder for symlink loop detection.
type fileID struct{ dev, ino uint64 }

// idOf returns the device and inode of fi, or false when unknown.
func idOf(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}
