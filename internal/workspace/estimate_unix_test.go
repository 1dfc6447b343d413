//go:build unix

package workspace

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestGitIndexEntriesSkipsFIFO: a .git/index that is a FIFO (the folder is
// untrusted) gives no estimate instead of blocking the scan in open(2).
func TestGitIndexEntriesSkipsFIFO(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, ".git", "index"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if n := gitIndexEntries(root); n != 0 {
		t.Fatalf("gitIndexEntries with a FIFO index = %d, want 0", n)
	}
}
