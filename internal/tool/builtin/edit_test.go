package builtin

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

func TestWriteFile(t *testing.T) {
	env := workspace(t, map[string]string{"a.txt": "one\ntwo\n"})
	res := runOK(t, env, "write_file", map[string]any{"path": "new/deep/b.txt", "content": "x\ny\n"})
	if readDisk(t, env, "new/deep/b.txt") != "x\ny\n" {
		t.Fatal("not written")
	}
	if len(res.Changes) != 1 || res.Changes[0] != (tool.FileChange{Path: "new/deep/b.txt", Kind: "created", Added: 2}) {
		t.Fatalf("changes %+v", res.Changes)
	}
	d := res.Data.(editData)
	if !strings.Contains(d.Diff, "+++ b/new/deep/b.txt") || !strings.Contains(d.Diff, "+x\n") {
		t.Fatalf("diff %q", d.Diff)
	}

	os.Chmod(filepath.Join(env.Root, "a.txt"), 0o755)
	res = runOK(t, env, "write_file", map[string]any{"path": "a.txt", "content": "one\nTWO\nthree\n"})
	if c := res.Changes[0]; c.Kind != "modified" || c.Added != 2 || c.Removed != 1 {
		t.Fatalf("modified: %+v", c)
	}
	if fi, _ := os.Stat(filepath.Join(env.Root, "a.txt")); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode not kept: %v", fi.Mode())
	}
	// Its own write is recorded: a second write without reading is fine.
	runOK(t, env, "write_file", map[string]any{"path": "a.txt", "content": "again\n"})
	// Empty content is a valid write.
	runOK(t, env, "write_file", map[string]any{"path": "empty.txt", "content": ""})

	_, err := run(t, env, "write_file", map[string]any{"path": "a.txt"})
	wantKind(t, err, tool.ErrInvalidInput)
	_, err = run(t, env, "write_file", map[string]any{"path": "new", "content": "x"})
	wantKind(t, err, tool.ErrInvalidInput, "directory")
	_, err = run(t, env, "write_file", map[string]any{"path": ".git/config", "content": "x"})
	wantKind(t, err, tool.ErrDenied, ".git")
	_, err = run(t, env, "write_file", map[string]any{"path": ".", "content": "x"})
	wantKind(t, err, tool.ErrInvalidInput)
	_, err = run(t, env, "write_file", map[string]any{"path": "a.txt/x", "content": "x"})
	wantKind(t, err, tool.ErrNotFound)
	if m, _ := filepath.Glob(filepath.Join(env.Root, ".*.tmp-*")); len(m) != 0 {
		t.Fatalf("temp files left: %v", m)
	}
}

func TestWriteExcludedAllowed(t *testing.T) {
	env := workspace(t, map[string]string{"dist/x.js": "old\n"}, "dist/")
	runOK(t, env, "write_file", map[string]any{"path": "dist/x.js", "content": "new\n"})
	if readDisk(t, env, "dist/x.js") != "new\n" {
		t.Fatal("excluded write")
	}
}

func TestStaleEdit(t *testing.T) {
	env := workspace(t, map[string]string{"a.txt": "one\ntwo\n"})
	runOK(t, env, "read_file", map[string]any{"path": "a.txt"})
	writeDisk(t, env, "a.txt", "one\ntwo\nuser line\n")
	_, err := run(t, env, "replace_text", map[string]any{"path": "a.txt", "oldText": "two", "newText": "2"})
	wantKind(t, err, tool.ErrStale, "read it again")
	_, err = run(t, env, "write_file", map[string]any{"path": "a.txt", "content": "x"})
	wantKind(t, err, tool.ErrStale, "read_file")
	if readDisk(t, env, "a.txt") != "one\ntwo\nuser line\n" {
		t.Fatal("stale edit changed the file")
	}
	runOK(t, env, "read_file", map[string]any{"path": "a.txt"})
	runOK(t, env, "replace_text", map[string]any{"path": "a.txt", "oldText": "two", "newText": "2"})
	// The edit recorded the new content: a second edit is not stale.
	runOK(t, env, "replace_text", map[string]any{"path": "a.txt", "oldText": "one", "newText": "1"})
	if got := readDisk(t, env, "a.txt"); got != "1\n2\nuser line\n" {
		t.Fatalf("got %q", got)
	}
}

func replaceOK(t *testing.T, env *tool.Env, rel, oldText, newText string, all bool) tool.Result {
	t.Helper()
	return runOK(t, env, "replace_text", map[string]any{"path": rel, "oldText": oldText, "newText": newText, "replaceAll": all})
}

func TestReplaceText(t *testing.T) {
	env := workspace(t, map[string]string{
		"a.go":     "package a\n\nfunc A() int {\n\treturn 1\n}\n",
		"crlf.txt": "alpha\r\nbeta\r\ngamma\r\n",
		"bom.txt":  "\ufeffhello\nworld\n",
		"utf.txt":  "naïve café — 日本語\nsecond \xff raw\n",
		"dup.txt":  "x = 1\ny = 2\nx = 1\n",
		"ovl.txt":  "aaa\n",
		"bin.dat":  "a\x00b",
	})
	res := replaceOK(t, env, "a.go", "\treturn 1\n", "\treturn 2\n", false)
	if readDisk(t, env, "a.go") != "package a\n\nfunc A() int {\n\treturn 2\n}\n" {
		t.Fatalf("got %q", readDisk(t, env, "a.go"))
	}
	if c := res.Changes[0]; c != (tool.FileChange{Path: "a.go", Kind: "modified", Added: 1, Removed: 1}) {
		t.Fatalf("change %+v", c)
	}
	if d := res.Data.(editData); d.Replacements != 1 || !strings.Contains(d.Diff, "-\treturn 1") || !strings.Contains(res.Content, "line 4") {
		t.Fatalf("data %+v content %q", d, res.Content)
	}

	// CRLF: LF oldText and newText match, the result keeps CRLF.
	replaceOK(t, env, "crlf.txt", "alpha\nbeta\n", "alpha\nBETA\nbeta2\n", false)
	if got := readDisk(t, env, "crlf.txt"); got != "alpha\r\nBETA\r\nbeta2\r\ngamma\r\n" {
		t.Fatalf("crlf: %q", got)
	}
	// BOM kept.
	replaceOK(t, env, "bom.txt", "hello", "hi", false)
	if got := readDisk(t, env, "bom.txt"); got != "\ufeffhi\nworld\n" {
		t.Fatalf("bom: %q", got)
	}
	// Non-ASCII and even invalid UTF-8 bytes kept byte for byte.
	replaceOK(t, env, "utf.txt", "café", "bistro", false)
	if got := readDisk(t, env, "utf.txt"); got != "naïve bistro — 日本語\nsecond \xff raw\n" {
		t.Fatalf("utf: %q", got)
	}

	// Ambiguous, then replaceAll.
	_, err := run(t, env, "replace_text", map[string]any{"path": "dup.txt", "oldText": "x = 1", "newText": "x = 3"})
	wantKind(t, err, tool.ErrAmbiguous, "2 times", "lines 1, 3", "replaceAll")
	res = replaceOK(t, env, "dup.txt", "x = 1", "x = 3", true)
	if got := readDisk(t, env, "dup.txt"); got != "x = 3\ny = 2\nx = 3\n" || res.Data.(editData).Replacements != 2 {
		t.Fatalf("replaceAll: %q", got)
	}
	// Overlapping matches are ambiguous even with replaceAll.
	for _, all := range []bool{false, true} {
		_, err = run(t, env, "replace_text", map[string]any{"path": "ovl.txt", "oldText": "aa", "newText": "b", "replaceAll": all})
		wantKind(t, err, tool.ErrAmbiguous, "overlap")
	}
	if readDisk(t, env, "ovl.txt") != "aaa\n" {
		t.Fatal("overlap changed the file")
	}

	_, err = run(t, env, "replace_text", map[string]any{"path": "a.go", "oldText": "", "newText": "x"})
	wantKind(t, err, tool.ErrInvalidInput, "empty")
	_, err = run(t, env, "replace_text", map[string]any{"path": "a.go", "oldText": "A", "newText": "A"})
	wantKind(t, err, tool.ErrInvalidInput, "same")
	_, err = run(t, env, "replace_text", map[string]any{"path": "a.go", "oldText": "A"})
	wantKind(t, err, tool.ErrInvalidInput)
	_, err = run(t, env, "replace_text", map[string]any{"path": "missing.go", "oldText": "A", "newText": "B"})
	wantKind(t, err, tool.ErrNotFound)
	_, err = run(t, env, "replace_text", map[string]any{"path": "bin.dat", "oldText": "a", "newText": "c"})
	wantKind(t, err, tool.ErrInvalidInput, "binary")
	_, err = run(t, env, "replace_text", map[string]any{"path": ".git/HEAD", "oldText": "a", "newText": "c"})
	wantKind(t, err, tool.ErrDenied)
}

func TestReplaceTextNoMatch(t *testing.T) {
	src := "package a\n\nfunc A() int {\n\tif x {\n\t\treturn 1\n\t}\n\treturn 0\n}\n\nfunc B() {}\n"
	env := workspace(t, map[string]string{"a.go": src, "c.go": "one\ntwo\n"})
	// Tabs in the file, spaces in oldText.
	_, err := run(t, env, "replace_text", map[string]any{"path": "a.go",
		"oldText": "    if x {\n        return 1\n    }", "newText": "if y {}"})
	wantKind(t, err, tool.ErrNoMatch, "lines 4-6", "only in whitespace", "tabs", "\t\treturn 1")
	// A near miss in content.
	_, err = run(t, env, "replace_text", map[string]any{"path": "a.go", "oldText": "func A() string {", "newText": "x"})
	wantKind(t, err, tool.ErrNoMatch, "line 3", "func A() int {")
	// Nothing similar.
	_, err = run(t, env, "replace_text", map[string]any{"path": "c.go", "oldText": "zzzzqqqq", "newText": "x"})
	wantKind(t, err, tool.ErrNoMatch, "No similar passage")
	if readDisk(t, env, "a.go") != src {
		t.Fatal("failed edit changed the file")
	}
}

// TestFailedWriteKeepsFile injects a failing atomic write: the file stays
// whole and the read record is not advanced.
func TestFailedWriteKeepsFile(t *testing.T) {
	env := workspace(t, map[string]string{"a.txt": "precious\ncontent\n"})
	fail := func(root *os.Root, name string, data []byte, perm fs.FileMode) error {
		return errors.New("injected: no space left on device")
	}
	for _, tl := range []tool.Tool{&writeFile{write: fail}, &replaceText{write: fail}} {
		in := `{"path":"a.txt","content":"x"}`
		if tl.Spec().Name == "replace_text" {
			in = `{"path":"a.txt","oldText":"precious","newText":"cheap"}`
		}
		_, err := tl.Run(t.Context(), env, []byte(in))
		wantKind(t, err, tool.ErrIO, "no space")
		if readDisk(t, env, "a.txt") != "precious\ncontent\n" {
			t.Fatalf("%s: file damaged", tl.Spec().Name)
		}
	}
	// The real writer still works afterwards and sees no stale record.
	runOK(t, env, "replace_text", map[string]any{"path": "a.txt", "oldText": "precious", "newText": "cheap"})
}

func TestReplaceTextSecretNoCandidate(t *testing.T) {
	env := workspace(t, map[string]string{".env": "API_TOKEN=abc123\n"})
	_, err := run(t, env, "replace_text", map[string]any{"path": ".env", "oldText": "API_TOKEN=abc124", "newText": "x"})
	wantKind(t, err, tool.ErrNoMatch)
	if strings.Contains(err.Error(), "abc123") {
		t.Fatalf("secret content in the error: %q", err)
	}
}
