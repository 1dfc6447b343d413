package project

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/retrieve"
)

// TestDataDirInsideRootIsNotIndexed (QA D7): a data folder inside the
// root holds the saved index (binary) and the checkpoint (JSON) after the
// first open; the next open, a refresh and the tools must not see them,
// and the summary's excludes stay the user's.
func TestDataDirInsideRootIsNotIndexed(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"inside", ".taskx-data"},
		{"nested", "var/state/task-x"},
		{"root itself", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyTree(t, "../graph/testdata/go")
			data := filepath.Join(root, filepath.FromSlash(tc.data))
			if tc.data == "" {
				data = root
			}
			want := open(t, root, "").p.Summary()
			first := open(t, root, data)
			// A change through the edit log writes the checkpoint.
			if _, err := first.p.Edits().Apply(context.Background(), editlog.OpSpec{Tool: "test",
				Files: []editlog.FileSpec{{Path: "notes.txt", After: []byte("checkpoint marker text\n"), Mode: 0o644}}}); err != nil {
				t.Fatal(err)
			}
			saveAndClose(t, first)
			if _, err := os.Stat(IndexPath(data, root)); err != nil {
				t.Fatalf("no saved index: %v", err)
			}
			second := open(t, root, data)
			sum := second.p.Summary()
			for _, rel := range second.p.Snapshot().Files() {
				if tc.data != "" && strings.HasPrefix(rel, tc.data+"/") || strings.HasPrefix(rel, "index/") || strings.HasPrefix(rel, "checkpoints/") {
					t.Errorf("data folder file indexed: %s", rel)
				}
			}
			if sum.Stats.Skipped.Binary != want.Stats.Skipped.Binary {
				t.Errorf("binary files %d, want %d (index.bin counted)", sum.Stats.Skipped.Binary, want.Stats.Skipped.Binary)
			}
			if sum.Stats.IndexedFiles != want.Stats.IndexedFiles+1 { // notes.txt
				t.Errorf("indexed %d files, want %d", sum.Stats.IndexedFiles, want.Stats.IndexedFiles+1)
			}
			if !reflect.DeepEqual(sum.Excludes, want.Excludes) {
				t.Errorf("excludes = %v, want the user's %v", sum.Excludes, want.Excludes)
			}
			rel := tc.data
			if rel == "" {
				rel = "checkpoints"
			}
			if !second.p.Snapshot().Excluded(rel, true) {
				t.Errorf("%s not excluded for the tools", rel)
			}
			res, err := second.p.Retrieve(context.Background(), retrieve.Query{Text: "checkpoint marker", BudgetTokens: 4000})
			if err != nil {
				t.Fatal(err)
			}
			for _, sn := range res.Snippets {
				if sn.Path != "notes.txt" {
					t.Errorf("retrieval returned %s", sn.Path)
				}
			}
			if _, err := second.p.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := second.p.Summary().Stats.IndexedFiles; got != sum.Stats.IndexedFiles {
				t.Errorf("refresh indexed %d files, open %d", got, sum.Stats.IndexedFiles)
			}
		})
	}
}

// chmodTree sets every folder under dir to dirMode and every file to
// fileMode.
func chmodTree(t *testing.T, dir string, dirMode, fileMode os.FileMode) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, dirMode)
		}
		return os.Chmod(p, fileMode)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyDataDir (QA D4): with a valid saved index in a data folder
// that cannot be written to, open succeeds from the saved index with one
// warning; edits work in memory (undo within the session) and nothing is
// written to the data folder.
func TestReadOnlyDataDir(t *testing.T) {
	root := copyTree(t, "../graph/testdata/go")
	data := t.TempDir()
	saveAndClose(t, open(t, root, data))
	chmodTree(t, data, 0o555, 0o444)
	t.Cleanup(func() { chmodTree(t, data, 0o755, 0o644) })
	writable := func() bool {
		f, err := os.CreateTemp(filepath.Join(data, "checkpoints"), "probe-*")
		if err != nil {
			return false
		}
		f.Close()
		os.Remove(f.Name())
		return true
	}
	if writable() && (!bindReadOnly(t, data) || writable()) {
		t.Skip("chmod does not stop writes here (running as root) and no read-only bind mount")
	}
	listing := func() string {
		var b strings.Builder
		filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
			if fi, err := d.Info(); err == nil {
				fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
			}
			return nil
		})
		return b.String()
	}
	before := listing()
	o := open(t, root, data)
	if ph := o.phases(); len(ph) == 0 || ph[0] != "loading" {
		t.Errorf("phases = %v, want the saved index loaded", ph)
	}
	if n := strings.Count(o.log.String(), "level=WARN"); n != 1 || !strings.Contains(o.log.String(), "data folder is not writable") {
		t.Errorf("%d warnings, want one about the data folder:\n%s", n, o.log)
	}
	if got, want := answers(t, o.p), cold(t, root); got != want {
		t.Fatalf("read-only reopen differs from cold: %s", diff(got, want))
	}
	op, err := o.p.Edits().Apply(context.Background(), editlog.OpSpec{Tool: "test",
		Files: []editlog.FileSpec{{Path: "new.txt", After: []byte("in memory\n"), Mode: 0o644}}})
	if err != nil {
		t.Fatalf("edit with a read-only data folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.p.Edits().Undo(op.ID); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("undo left new.txt: %v", err)
	}
	o.p.Changed(context.Background(), []string{"new.txt"})
	if err := o.p.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if after := listing(); after != before {
		t.Errorf("data folder changed:\n%s\nwas\n%s", after, before)
	}
}
