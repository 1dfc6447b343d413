package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// rewriteKeepingStamp writes data over the file at abs in place (same
// inode; data must be the same size) and puts its modification time back,
// as cp -p or rsync -t do, then waits (by writing the time again) until
// its inode change time differs from was: the kernel's ctime clock ticks
// coarsely, and the point is a stamp whose only difference is the ctime.
func rewriteKeepingStamp(t *testing.T, abs string, data []byte, was int64) {
	t.Helper()
	fi, err := os.Lstat(abs)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len(data)) {
		t.Fatalf("rewrite of %d bytes to %d", fi.Size(), len(data))
	}
	if err := os.WriteFile(abs, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		if err := os.Chtimes(abs, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		now, err := os.Lstat(abs)
		if err != nil {
			t.Fatal(err)
		}
		if !now.ModTime().Equal(fi.ModTime()) || now.Size() != fi.Size() || inodeOf(now) != inodeOf(fi) {
			t.Fatal("stamp not restored")
		}
		if ctimeOf(now) != was {
			return
		}
	}
}

// TestRefreshSeesRewriteWithRestoredMtime (QA D3): a file rewritten in
// place with the same size and its modification time put back is read
// again by Refresh: its inode change time moved.
func TestRefreshSeesRewriteWithRestoredMtime(t *testing.T) {
	root := t.TempDir()
	abs := filepath.Join(root, "a.go")
	old := time.Now().Add(-time.Hour) // not an ambiguous stamp: no content hash
	write(t, root, map[string]string{"a.go": "package a\n\nfunc Before() {}\n"})
	if err := os.Chtimes(abs, old, old); err != nil {
		t.Fatal(err)
	}
	parse := func(_ context.Context, abs string, _ *File) (ParseResult, error) {
		b, err := os.ReadFile(abs)
		return ParseResult{Data: string(b)}, err
	}
	w, err := Open(context.Background(), root, &Options{Home: "-", Parse: parse})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := w.Snapshot().File("a.go")
	if f.Hashed || f.CTime == 0 {
		t.Fatalf("hashed %v, ctime %d: want an unhashed entry with a ctime", f.Hashed, f.CTime)
	}
	rewriteKeepingStamp(t, abs, []byte("package a\n\nfunc Bafore() {}\n"), f.CTime)
	if _, err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	g, _ := w.Snapshot().File("a.go")
	if g.Parsed != "package a\n\nfunc Bafore() {}\n" {
		t.Fatalf("refresh kept the old entry: %q", g.Parsed)
	}
	// And an untouched file is still reused.
	if _, err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h, _ := w.Snapshot().File("a.go"); h != g {
		t.Error("an unchanged file was read again")
	}
}
