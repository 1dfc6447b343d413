package workspace

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// gitIndexEntries returns the number of entries in the git index of the
// repository whose work tree is root (root/.git a folder, or a file
// "gitdir: PATH" of a linked worktree), read from the index header
// ("DIRC", version, entry count); 0 when root is not a repository's top,
// the index is absent or its header is not one git writes. It is the
// count `git ls-files` lists (the tracked files), without running git: a
// first scan's progress total before the walk, which the file checks pace,
// has found the files.
func gitIndexEntries(root string) int {
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return 0
	}
	gitDir := dotgit
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() || fi.Size() > 4096 {
			return 0
		}
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return 0
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return 0
		}
		if gitDir = strings.TrimSpace(p); !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(root, gitDir)
		}
	}
	// The folder is untrusted: .git/index (or a gitdir's) could be a FIFO
	// or a device, whose open would block the scan. Only a regular file
	// is read.
	index := filepath.Join(gitDir, "index")
	if st, err := os.Stat(index); err != nil || !st.Mode().IsRegular() {
		return 0
	}
	f, err := os.Open(index)
	if err != nil {
		return 0
	}
	defer f.Close()
	var h [12]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:4]) != "DIRC" {
		return 0
	}
	if v := binary.BigEndian.Uint32(h[4:8]); v < 2 || v > 4 {
		return 0
	}
	n := binary.BigEndian.Uint32(h[8:12])
	if n > 1<<26 {
		return 0
	}
	return int(n)
}
