//go:build !unix

package workspace

import "io/fs"

// fileID identifies a folder for symlink loop detection. Where the platform
// gives no inode, loop detection falls back to resolved paths (see
// scanner.followLinks).
type fileID struct{ dev, ino uint64 }

func idOf(fs.FileInfo) (fileID, bool) { return fileID{}, false }

// inodeOf is 0 where the platform gives no inode.
func inodeOf(fs.FileInfo) uint64 { return 0 }
