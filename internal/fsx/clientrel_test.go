package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestClientRel(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(root, "in"), 0o755)
	os.WriteFile(filepath.Join(outside, "s"), []byte("x"), 0o644)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink(filepath.Join(root, "in"), filepath.Join(root, "inlink"))
	os.Symlink(filepath.Join(outside, "s"), filepath.Join(root, "filelink"))
	alias := filepath.Join(t.TempDir(), "alias")
	os.Symlink(root, alias)
	for _, c := range []struct {
		p, rel  string
		outside bool
	}{
		{"a.go", "a.go", false},
		{"in/../a.go", "a.go", false},
		{filepath.Join(root, "in", "x"), "in/x", false},
		{filepath.Join(alias, "in", "x"), "in/x", false},
		{"inlink/x", "inlink/x", false},
		{".", ".", false},
		{"../x", "", true},
		{"/etc/passwd", "", true},
		{"out/s", "out/s", true},
		{"out/new/file", "out/new/file", true},
		{filepath.Join(root, "out", "s"), "out/s", true},
		{"filelink", "filelink", true},
	} {
		rel, err := ClientRel(root, c.p)
		if rel != c.rel || errors.Is(err, ErrOutsideRoot) != c.outside || (err != nil) != c.outside {
			t.Errorf("ClientRel(%q) = %q, %v; want %q, outside %v", c.p, rel, err, c.rel, c.outside)
		}
	}
	if _, err := ClientRel(root, ""); err == nil {
		t.Error("empty path accepted")
	}
}
