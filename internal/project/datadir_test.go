package project

import (
	"context"
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
