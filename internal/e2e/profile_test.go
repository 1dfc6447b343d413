package e2e

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestProfileFlags: --cpuprofile and --memprofile write pprof profiles
// (gzip-compressed protocol buffers with a sample type) of a run that
// opened a workspace, once the runtime exits; a profile file that cannot
// be created is exit code 2 before anything is served.
func TestProfileFlags(t *testing.T) {
	repo := copyRepo(t)
	dir := t.TempDir()
	cpu, heap := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "heap.pprof")
	p := startArgs(t, []string{"-cpuprofile", cpu, "-memprofile", heap})
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": repo})
	p.mustCall("shutdown", nil)
	p.notify("exit", nil)
	if code := p.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	for _, f := range []string{cpu, heap} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: not gzip: %v", f, err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// The sample type names are in the profile's string table.
		want := "samples"
		if f == heap {
			want = "inuse_space"
		}
		if !bytes.Contains(raw, []byte(want)) {
			t.Fatalf("%s: no %q in the profile (%d bytes)", f, want, len(raw))
		}
	}

	bad := startArgs(t, []string{"-cpuprofile", filepath.Join(dir, "missing", "cpu.pprof")})
	if code := bad.wait(20 * time.Second); code != 2 {
		t.Fatalf("unwritable profile: exit code %d, want 2", code)
	}
}
