package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSavedEntryReusedOnlyWithSameLink: File.Link says whether a path is a
// symbolic link as of the scan that checked it, so a saved entry (and a
// refresh's old entry) is reused only when the path is a link now exactly
// when the entry says so, even with the stamp (the target's) equal.
func TestSavedEntryReusedOnlyWithSameLink(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.txt": "alpha\n", "target.txt": "target\n"})
	old := time.Now().Add(-time.Hour) // not an ambiguous stamp: no content hash
	for _, n := range []string{"a.txt", "target.txt"} {
		if err := os.Chtimes(filepath.Join(root, n), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("target.txt", filepath.Join(root, "l.txt")); err != nil {
		t.Fatal(err)
	}
	w, err := Open(context.Background(), root, &Options{Home: "-"})
	if err != nil {
		t.Fatal(err)
	}
	snap := w.Snapshot()
	a, _ := snap.File("a.txt")
	l, _ := snap.File("l.txt")
	if a == nil || l == nil || a.Link || !l.Link || a.Hashed || l.Hashed {
		t.Fatalf("a.txt %+v, l.txt %+v: want a.txt not a link, l.txt a link, no hashes", a, l)
	}
	reopen := func(saved map[string]*File) *Snapshot {
		t.Helper()
		w, err := Open(context.Background(), root, &Options{Home: "-", Saved: &Saved{Files: saved}})
		if err != nil {
			t.Fatal(err)
		}
		return w.Snapshot()
	}
	// The same entries: both reused.
	sa, sl := *a, *l
	s := reopen(map[string]*File{"a.txt": &sa, "l.txt": &sl})
	if f, _ := s.File("a.txt"); f != &sa {
		t.Error("a.txt: an equal saved entry was not reused")
	}
	if f, _ := s.File("l.txt"); f != &sl {
		t.Error("l.txt: an equal saved entry was not reused")
	}
	// Link flipped, stamps equal: neither reused, both checked again.
	sa.Link, sl.Link = true, false
	s = reopen(map[string]*File{"a.txt": &sa, "l.txt": &sl})
	if f, _ := s.File("a.txt"); f == &sa || f.Link {
		t.Errorf("a.txt: reused a saved entry that calls it a link (%+v)", f)
	}
	if f, _ := s.File("l.txt"); f == &sl || !f.Link {
		t.Errorf("l.txt: reused a saved entry that calls it no link (%+v)", f)
	}
	// A refresh compares it too.
	cur, _ := w.Snapshot().File("l.txt")
	cur.Link = false // as if an older scan had seen no link
	if _, err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f, _ := w.Snapshot().File("l.txt"); !f.Link {
		t.Error("refresh reused an entry that calls a link no link")
	}
}
