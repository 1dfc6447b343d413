//go:build linux

package workspace

import (
	"io/fs"
	"syscall"
)

// ctimeOf returns the inode change time (ctime, ns) of a file's lstat
// (statAt's or os's), 0 when unknown. Unlike the modification time it
// cannot be set by a user (cp -p, rsync -t, touch -d, os.Chtimes set the
// mtime and so change the ctime), so a file rewritten in place with its
// size and mtime restored still shows a new stamp.
func ctimeOf(fi fs.FileInfo) int64 {
	if s, ok := fi.(interface{ changeTime() int64 }); ok {
		return s.changeTime()
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
