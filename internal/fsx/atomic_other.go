//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package fsx

import (
	"io/fs"
	"os"
)

// writeVia: without renameat, WriteFileAtomicVia always falls back to a temp
// file next to the target.
func writeVia(root *os.Root, name string, data []byte, perm fs.FileMode, tmpDir string) (bool, error) {
	return false, nil
}
