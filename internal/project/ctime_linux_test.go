package project

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReopenSeesRewriteWithRestoredMtime (QA D3): a file rewritten while
// the runtime was down, in place, with the same size and its modification
// time put back (cp -p, rsync -t, os.Chtimes) is parsed again at the next
// open from the saved index: its inode change time is in the saved stamp.
func TestReopenSeesRewriteWithRestoredMtime(t *testing.T) {
	root := t.TempDir()
	abs := filepath.Join(root, "a.go")
	old := time.Now().Add(-time.Hour) // not an ambiguous stamp: no content hash
	if err := os.WriteFile(abs, []byte("package a\n\nfunc Before() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(abs, old, old); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	first := open(t, root, data)
	f, _ := first.p.Snapshot().File("a.go")
	if f.Hashed || f.CTime == 0 {
		t.Fatalf("hashed %v, ctime %d: want an unhashed entry with a ctime", f.Hashed, f.CTime)
	}
	saveAndClose(t, first)
	// Same size, same mtime, same inode; only the ctime moves (written
	// again until the kernel's coarse ctime clock has ticked).
	var before syscall.Stat_t
	if err := syscall.Lstat(abs, &before); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs, []byte("package a\n\nfunc Bafore() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		if err := os.Chtimes(abs, old, old); err != nil {
			t.Fatal(err)
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(abs, &st); err != nil {
			t.Fatal(err)
		}
		if st.Size != before.Size || st.Ino != before.Ino || st.Mtim != before.Mtim {
			t.Fatal("stamp not restored")
		}
		if st.Ctim.Nano() != f.CTime {
			break
		}
	}
	second := open(t, root, data)
	if ph := second.phases(); len(ph) == 0 || ph[0] != "loading" {
		t.Fatalf("phases %v: the saved index was not used", ph)
	}
	g, _ := second.p.Snapshot().File("a.go")
	if !strings.Contains(fmt.Sprint(g.Parsed), "Bafore") {
		t.Fatalf("stale saved entry reused: %v", g.Parsed)
	}
	if got, want := answers(t, second.p), cold(t, root); got != want {
		t.Fatal(diff(got, want))
	}
	// An unchanged reopen still reuses every record.
	saveAndClose(t, second)
	third := open(t, root, data)
	if ph := third.phases(); strings.Contains(strings.Join(ph, " "), "indexing") {
		t.Errorf("unchanged reopen parsed files: phases %v", ph)
	}
}
