//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// writeVia is the out-of-tree write of WriteFileAtomicVia. done is false when
// it did not write and the caller should fall back to a temp file next to
// the target (another file system, a setgid folder, a folder that cannot be
// opened: the fallback reports that error).
func writeVia(root *os.Root, name string, data []byte, perm fs.FileMode, tmpDir string) (done bool, err error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	parent, err := root.Open(dir)
	if err != nil {
		return false, nil
	}
	defer parent.Close()
	var pst, tst unix.Stat_t
	if unix.Fstat(int(parent.Fd()), &pst) != nil || pst.Mode&unix.S_IFMT != unix.S_IFDIR || pst.Mode&unix.S_ISGID != 0 {
		return false, nil
	}
	if unix.Stat(tmpDir, &tst) != nil || tst.Mode&unix.S_IFMT != unix.S_IFDIR || tst.Dev != pst.Dev {
		return false, nil
	}
	mode, keepMode, err := modeOf(root, name)
	if err != nil {
		return true, err
	}
	f, tmp, err := createTemp(osOps{}, filepath.Join(tmpDir, base), perm)
	if err != nil {
		return false, nil
	}
	if err := fill(f, name, data, mode, keepMode); err != nil {
		os.Remove(tmp)
		return true, err
	}
	if err := unix.Renameat(unix.AT_FDCWD, tmp, int(parent.Fd()), base); err != nil {
		os.Remove(tmp)
		if errors.Is(err, unix.EXDEV) {
			return false, nil
		}
		return true, fmt.Errorf("write %s: %w", name, &os.LinkError{Op: "rename", Old: tmp, New: name, Err: err})
	}
	parent.Sync()
	return true, nil
}
