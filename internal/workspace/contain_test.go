package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFilesChangedSymlinkOutside: filesChanged of a path through an in-root
// symlink to an outside folder indexes nothing (the scan refuses the same
// link); an in-root link still works; a file the index held whose folder
// became a link outside is forgotten.
func TestFilesChangedSymlinkOutside(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, outside, map[string]string{"secret.txt": "the outside secret"})
	write(t, root, map[string]string{"a.go": "package a", "in/b.go": "package b", "was/c.go": "package c"})
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "in"), filepath.Join(root, "inlink")); err != nil {
		t.Fatal(err)
	}
	w := open(t, root, nil)
	ctx := context.Background()
	if got := w.Snapshot().Files(); slices.Contains(got, "out/secret.txt") {
		t.Fatalf("the scan indexed through the link: %q", got)
	}
	os.RemoveAll(filepath.Join(root, "was"))
	os.Symlink(outside, filepath.Join(root, "was"))
	paths := []string{"out/secret.txt", filepath.Join(root, "out", "secret.txt"), "out", "inlink/b.go", "was/c.go", "was/secret.txt"}
	if _, err := w.FilesChanged(ctx, paths); err != nil {
		t.Fatal(err)
	}
	got := w.Snapshot().Files()
	for _, bad := range []string{"out/secret.txt", "was/c.go", "was/secret.txt"} {
		if slices.Contains(got, bad) {
			t.Errorf("%s indexed after filesChanged: %q", bad, got)
		}
	}
	if !slices.Contains(got, "inlink/b.go") || !slices.Contains(got, "a.go") {
		t.Errorf("in-root files lost: %q", got)
	}
}
