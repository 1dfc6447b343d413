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
	if s, ok := fi.(interface{ fileID() fileID }); ok {
		return s.fileID(), true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}

// inodeOf returns the inode of a file's lstat (statAt's or os's), 0 when
// unknown.
func inodeOf(fi fs.FileInfo) uint64 {
	if s, ok := fi.(interface{ inode() uint64 }); ok {
		return s.inode()
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
