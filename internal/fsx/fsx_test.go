package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
