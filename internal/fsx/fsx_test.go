package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolve(t *testing.T) {
	root := mustEval(t, t.TempDir())
	outside := mustEval(t, t.TempDir())
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(root, "a", "f.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "filelink")))
	must(os.Symlink(outside, filepath.Join(root, "dirlink")))
	must(os.Symlink(filepath.Join(outside, "new"), filepath.Join(root, "dangling")))
	must(os.Symlink("a", filepath.Join(root, "inlink")))

	ok := []struct{ in, rel string }{
		{".", "."},
		{"a/f.txt", "a/f.txt"},
		{"a/b/../f.txt", "a/f.txt"},
		{"a/../a/new/file.go", "a/new/file.go"},
		{filepath.Join(root, "a", "f.txt"), "a/f.txt"},
		{"inlink/f.txt", "a/f.txt"},
		{"inlink/new.txt", "a/new.txt"},
	}
	for _, c := range ok {
		r, err := Resolve(root, c.in)
		if err != nil {
			t.Errorf("Resolve(%q): %v", c.in, err)
			continue
		}
		if r.Rel != c.rel || r.Abs != filepath.Join(root, filepath.FromSlash(c.rel)) {
			t.Errorf("Resolve(%q) = %+v, want rel %q", c.in, r, c.rel)
		}
	}

	bad := []string{
		"../x",
		"a/../../x",
		filepath.Join(outside, "secret"),
		"/etc/passwd",
		"filelink",
		"dirlink/secret",
		"dirlink/newfile",
		"dirlink/new/dir/file",
		"dangling",
	}
	for _, in := range bad {
		if r, err := Resolve(root, in); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("Resolve(%q) = %+v, %v; want ErrOutsideRoot", in, r, err)
		}
	}
	if _, err := Resolve(root, ""); err == nil {
		t.Error("empty path accepted")
	}
	if _, err := Resolve(root, "a\x00b"); err == nil {
		t.Error("NUL accepted")
	}
	if _, err := Resolve("rel", "a"); err == nil {
		t.Error("relative root accepted")
	}
	// A component that is a regular file is an error, not a path inside.
	if _, err := Resolve(root, "a/f.txt/x"); err == nil || errors.Is(err, ErrOutsideRoot) {
		t.Errorf("file as folder: %v", err)
	}
}

func TestResolveSymlinkedRoot(t *testing.T) {
	real := mustEval(t, t.TempDir())
	link := filepath.Join(mustEval(t, t.TempDir()), "root")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(real, "f"), nil, 0o644)
	for _, in := range []string{"f", filepath.Join(link, "f"), filepath.Join(real, "f")} {
		r, err := Resolve(link, in)
		if err != nil || r.Rel != "f" || r.Abs != filepath.Join(real, "f") {
			t.Errorf("Resolve(%q) = %+v, %v", in, r, err)
		}
	}
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	return m
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f.sh")
	if err := WriteFileAtomic(name, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, 0o751); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(name, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(name)
	fi, _ := os.Stat(name)
	if string(b) != "two" || fi.Mode().Perm() != 0o751 {
		t.Fatalf("got %q mode %v", b, fi.Mode())
	}
	if m := tempFiles(t, dir); len(m) != 0 {
		t.Fatalf("temp files left: %v", m)
	}
}

func TestWriteFileAtomicFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	os.WriteFile(name, []byte("original content"), 0o644)

	testHookWrite = func(f *os.File, data []byte) (int, error) {
		n, _ := f.Write(data[:len(data)/2])
		return n, errors.New("disk full")
	}
	defer func() { testHookWrite = nil }()
	err := WriteFileAtomic(name, []byte("replacement content"), 0o644)
	if err == nil {
		t.Fatal("want error")
	}
	b, _ := os.ReadFile(name)
	if string(b) != "original content" {
		t.Fatalf("old file damaged: %q", b)
	}
	if m := tempFiles(t, dir); len(m) != 0 {
		t.Fatalf("temp files left: %v", m)
	}
}

func TestWriteFileAtomicErrors(t *testing.T) {
	dir := t.TempDir()
	// A folder as target.
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	if err := WriteFileAtomic(filepath.Join(dir, "d"), []byte("x"), 0o644); err == nil {
		t.Fatal("wrote over a folder")
	}
	// Missing parent.
	if err := WriteFileAtomic(filepath.Join(dir, "no", "f"), []byte("x"), 0o644); err == nil {
		t.Fatal("wrote into a missing folder")
	}
	// Rename fails after the temp file was written: a non-empty folder
	// appears at the target between the stat and the rename.
	target := filepath.Join(dir, "t")
	testHookWrite = func(f *os.File, data []byte) (int, error) {
		os.MkdirAll(filepath.Join(target, "child"), 0o755)
		return f.Write(data)
	}
	defer func() { testHookWrite = nil }()
	if err := WriteFileAtomic(target, []byte("x"), 0o644); err == nil {
		t.Fatal("rename over a folder succeeded")
	}
	if m := tempFiles(t, dir); len(m) != 0 {
		t.Fatalf("temp files left: %v", m)
	}
}

func TestWriteFileAtomicIn(t *testing.T) {
	dir := mustEval(t, t.TempDir())
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(dir, "out"))
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := WriteFileAtomicIn(r, "f.txt", []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "hi" {
		t.Fatalf("got %q", b)
	}
	if err := WriteFileAtomicIn(r, "out/f.txt", []byte("x"), 0o600); err == nil {
		t.Fatal("os.Root let a write escape through a symlink")
	}
	if _, err := os.Stat(filepath.Join(outside, "f.txt")); err == nil {
		t.Fatal("file written outside")
	}
}

func TestTempNames(t *testing.T) {
	for name, want := range map[string]bool{
		".a.txt.tmp-0123456789abcdef":  true,
		".a.tmp-0123456789abcdef":      true,
		"a.txt.tmp-0123456789abcdef":   false, // not hidden
		".a.txt.tmp-0123456789abcdeF":  false,
		".a.txt.tmp-0123456789abcde":   false,
		".a.txt.tmp-0123456789abcdef0": false,
		"..tmp-0123456789abcdef":       false,
	} {
		if got := IsTempName(name); got != want {
			t.Errorf("IsTempName(%q) = %v", name, got)
		}
	}
	if !IsTempOf(".a.txt.tmp-0123456789abcdef", "a.txt") || IsTempOf(".a.txt.tmp-0123456789abcdef", "a") {
		t.Error("IsTempOf")
	}
}

// WriteFileAtomicVia keeps the temp file in tmpDir while it writes, so the
// tree never holds one; it falls back to a temp file next to the target in a
// setgid folder and without tmpDir.
func TestWriteFileAtomicVia(t *testing.T) {
	dir := mustEval(t, t.TempDir())
	tmpDir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "f.sh"), []byte("old"), 0o751)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var inTree, inTmp int
	testHookWrite = func(f *os.File, data []byte) (int, error) {
		inTree = len(tempFiles(t, filepath.Join(dir, "sub")))
		inTmp = len(tempFiles(t, tmpDir))
		return f.Write(data)
	}
	defer func() { testHookWrite = nil }()
	if err := WriteFileAtomicVia(r, filepath.Join("sub", "f.sh"), []byte("new"), 0o644, tmpDir); err != nil {
		t.Fatal(err)
	}
	if inTree != 0 || inTmp != 1 {
		t.Fatalf("during the write: %d temp files in the tree, %d in tmpDir", inTree, inTmp)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "sub", "f.sh"))
	fi, _ := os.Stat(filepath.Join(dir, "sub", "f.sh"))
	if string(b) != "new" || fi.Mode().Perm() != 0o751 {
		t.Fatalf("got %q mode %v", b, fi.Mode())
	}
	if n := len(tempFiles(t, tmpDir)); n != 0 {
		t.Fatalf("%d temp files left in tmpDir", n)
	}
	// A new file, through a symlinked folder inside the root.
	os.Symlink("sub", filepath.Join(dir, "link"))
	if err := WriteFileAtomicVia(r, filepath.Join("link", "new.txt"), []byte("n"), 0o600, tmpDir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", "new.txt")); string(b) != "n" || inTree != 0 {
		t.Fatalf("new file %q, temp in tree %d", b, inTree)
	}
	// A symlink out of the root is refused as by WriteFileAtomicIn.
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(dir, "out"))
	if err := WriteFileAtomicVia(r, filepath.Join("out", "x"), []byte("x"), 0o600, tmpDir); err == nil {
		t.Fatal("wrote through a symlink leaving the root")
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Fatal("file written outside")
	}
	// Setgid folder: the temp file is made next to the target.
	os.Mkdir(filepath.Join(dir, "g"), 0o755)
	if err := os.Chmod(filepath.Join(dir, "g"), 0o755|os.ModeSetgid); err != nil {
		t.Skip(err)
	}
	testHookWrite = func(f *os.File, data []byte) (int, error) {
		inTree = len(tempFiles(t, filepath.Join(dir, "g")))
		return f.Write(data)
	}
	if err := WriteFileAtomicVia(r, filepath.Join("g", "f"), []byte("x"), 0o644, tmpDir); err != nil || inTree != 1 {
		t.Fatalf("setgid folder: %v, %d temp files in it during the write", err, inTree)
	}
	if err := WriteFileAtomicVia(r, "plain", []byte("x"), 0o644, ""); err != nil {
		t.Fatal(err)
	}
	if m := tempFiles(t, dir); len(m) != 0 {
		t.Fatalf("temp files left: %v", m)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := mustEval(t, t.TempDir())
	for _, n := range []string{".a.tmp-0123456789abcdef", ".b.tmp-0123456789abcdef", "keep.txt", ".a.tmp-short"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	r, _ := os.OpenRoot(dir)
	defer r.Close()
	if n, err := RemoveTempsOf(r, ".", "a"); n != 1 || err != nil {
		t.Fatalf("RemoveTempsOf: %d %v", n, err)
	}
	if n, err := RemoveTemps(dir, time.Now().Add(-time.Hour)); n != 0 || err != nil {
		t.Fatalf("young temp files removed: %d %v", n, err)
	}
	if n, err := RemoveTemps(dir, time.Time{}); n != 1 || err != nil {
		t.Fatalf("RemoveTemps: %d %v", n, err)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 2 {
		t.Fatalf("left %v", left)
	}
	if n, err := RemoveTemps(filepath.Join(dir, "missing"), time.Time{}); n != 0 || err != nil {
		t.Fatalf("missing folder: %d %v", n, err)
	}
}
