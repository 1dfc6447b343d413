package project

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSavedIndexNotAFile: a FIFO, or a folder, in the index file's place
// is no index: the open does not block on the FIFO (nothing would ever
// write to it), logs why it ignored it and answers as a cold open; a save
// replaces the folder, so the next open loads the index again.
func TestSavedIndexNotAFile(t *testing.T) {
	root := copyTree(t, "../retrieve/testdata/repo")
	want := cold(t, root)
	for _, kind := range []string{"fifo", "folder"} {
		t.Run(kind, func(t *testing.T) {
			data := t.TempDir()
			path := IndexPath(data, open(t, root, "").p.Root())
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			var err error
			if kind == "fifo" {
				err = syscall.Mkfifo(path, 0o600)
			} else {
				err = os.MkdirAll(filepath.Join(path, "inside"), 0o700)
			}
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan *opened, 1)
			go func() { done <- open(t, root, data) }()
			var o *opened
			select {
			case o = <-done:
			case <-time.After(time.Minute): // a failure's bound, not a measurement
				t.Fatal("workspace open blocked on the index path")
			}
			if !strings.Contains(o.log.String(), "saved index ignored") || !strings.Contains(o.log.String(), "not a regular file") {
				t.Errorf("log: %s", o.log)
			}
			if got := answers(t, o.p); got != want {
				t.Fatal(diff(got, want))
			}
			if kind == "fifo" {
				return // a FIFO is replaced by the rename like any file
			}
			saveAndClose(t, o)
			again := open(t, root, data)
			if ph := again.phases(); len(ph) == 0 || ph[0] != "loading" {
				t.Errorf("phases %v after the folder was replaced: want the saved index loaded; log: %s", ph, again.log)
			}
			if got := answers(t, again.p); got != want {
				t.Fatal(diff(got, want))
			}
		})
	}
}
