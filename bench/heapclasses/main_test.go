package main

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

type probe struct {
	next *probe
	pad  [5]uint64 // 48 bytes with the pointer: its own size class
}

// TestReadCountsLiveObjects: a dump written by this process holds the
// 50 000 48-byte objects it keeps alive, in at least as many pages as
// they need, and read stops cleanly at the goroutines that follow.
func TestReadCountsLiveObjects(t *testing.T) {
	var head *probe
	for range 50_000 {
		head = &probe{next: head}
	}
	path := filepath.Join(t.TempDir(), "dump")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	debug.WriteHeapDump(f.Fd())
	f.Close()
	runtime.KeepAlive(head)
	classes, err := read(path, true)
	if err != nil {
		t.Fatal(err)
	}
	c := classes[48]
	if c == nil || c.objects < 50_000 || c.bytes != 48*c.objects {
		t.Fatalf("48-byte class: %+v, want at least 50 000 objects", c)
	}
	if min := 50_000 * 48 / pageBytes; len(c.pages) < min {
		t.Errorf("%d pages for the 48-byte objects, want at least %d", len(c.pages), min)
	}
	if len(c.samples) == 0 {
		t.Error("no samples kept")
	}
}

func TestReadRejectsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"empty": "", "text": "hello world, not a dump\n", "truncated": "go1.7 heap dump\n\x06"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := read(p, false); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
