package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestGitIndexDigest: the index digest stays when git only refreshes its
// cached stat data (a touched file, then git status rewrites the index)
// and changes with what git status reports from the index: a staged
// change, skip-worktree, intent-to-add. Index format 4 is read; a split
// index is not (the caller stamps the file by its stat).
func TestGitIndexDigest(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write(t, root, map[string]string{"a.go": "package a", "dir/b.go": "package b", "dir/sub/c.go": "package c"})
	git("init", "-q", "-b", "trunk")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	index := filepath.Join(root, ".git", "index")
	digest := func(what string) string {
		t.Helper()
		d, ok := gitIndexDigest(index, false)
		if !ok {
			t.Fatalf("%s: no digest", what)
		}
		return d
	}
	d0 := digest("committed")
	before, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "a.go"), later, later); err != nil {
		t.Fatal(err)
	}
	git("status", "--porcelain")
	after, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) && after.ModTime().Equal(before.ModTime()) {
		t.Fatal("git status did not rewrite the index; the case is not tested")
	}
	if d := digest("stat refreshed"); d != d0 {
		t.Errorf("digest changed when git refreshed only stat data")
	}
	write(t, root, map[string]string{"a.go": "package a // x"})
	git("add", "a.go")
	d1 := digest("staged")
	if d1 == d0 {
		t.Error("digest unchanged by a staged change")
	}
	git("update-index", "--skip-worktree", "dir/b.go")
	d2 := digest("skip-worktree")
	if d2 == d1 {
		t.Error("digest unchanged by skip-worktree")
	}
	write(t, root, map[string]string{"dir/new.go": "package b"})
	git("add", "-N", "dir/new.go")
	d3 := digest("intent to add")
	if d3 == d2 {
		t.Error("digest unchanged by intent-to-add")
	}
	git("update-index", "--index-version", "4")
	d4 := digest("format 4")
	git("update-index", "--index-version", "3")
	if d := digest("format 3 again"); d == d4 {
		t.Error("format 3 and 4 digests equal (the version is part of it)")
	}
	git("update-index", "--index-version", "4")
	if d := digest("format 4 again"); d != d4 {
		t.Error("format 4 digest not stable")
	}
	// Extensions: an optional one (upper case) is read past, a mandatory
	// one git may not know is not digested.
	raw, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	withExt := func(sig string) string {
		p := filepath.Join(t.TempDir(), "index")
		b := append(append([]byte{}, raw[:len(raw)-20]...), sig...)
		b = append(b, 0, 0, 0, 2, 'x', 'y')
		if err := os.WriteFile(p, append(b, raw[len(raw)-20:]...), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if d, ok := gitIndexDigest(withExt("ZZZZ"), false); !ok || d != d4 {
		t.Errorf("an optional extension: digest %q %v, want the same as without", d, ok)
	}
	if _, ok := gitIndexDigest(withExt("zzzz"), false); ok {
		t.Error("an unknown mandatory extension was digested")
	}
	git("update-index", "--split-index")
	if _, ok := gitIndexDigest(index, false); ok {
		t.Error("a split index was digested")
	}
	if _, ok := gitIndexDigest(index, true); ok {
		t.Error("SHA-256 names were digested")
	}
	for _, bad := range []string{"", "DIRC", "DIRC\x00\x00\x00\x02\x00\x00\x00\x05" + string(make([]byte, 40))} {
		p := filepath.Join(t.TempDir(), "index")
		if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := gitIndexDigest(p, false); ok {
			t.Errorf("%q digested", bad)
		}
	}
}

// FuzzGitIndexDigest: any bytes at .git/index end in a digest or a refusal,
// never a panic.
func FuzzGitIndexDigest(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x01" + string(make([]byte, 62)) + "\x05a.go\x00" + string(make([]byte, 20))))
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01" + string(make([]byte, 60)) + "\x00\x04a.go\x00\x00\x00\x00" + string(make([]byte, 20))))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "index")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		gitIndexDigest(p, false)
	})
}
