package builtin

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/tool"
)

func exists(t *testing.T, env *tool.Env, rel string) bool {
	t.Helper()
	_, err := os.Lstat(filepath.Join(env.Root, filepath.FromSlash(rel)))
	return err == nil
}

// withLog puts an in-memory edit log in env and returns it.
func withLog(t *testing.T, env *tool.Env) *editlog.Log {
	t.Helper()
	l, err := editlog.Open(env.Root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	env.Edits = LogEdits(l)
	return l
}

const multiPatch = `diff --git a/src/a.go b/src/a.go
--- a/src/a.go
+++ b/src/a.go
@@ -1,4 +1,4 @@
 package a
 
-func A() int { return 1 }
+func A() int { return 2 }
 
@@ -8,3 +8,4 @@
 func C() {}
 
 // end
+// more
--- /dev/null
+++ b/docs/new.md
@@ -0,0 +1,2 @@
+# New
+text
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-old
-content
`

func TestApplyPatchMultiFile(t *testing.T) {
	env := workspace(t, map[string]string{
		"src/a.go": "package a\n\nfunc A() int { return 1 }\n\nfunc B() {}\n\n\nfunc C() {}\n\n// end\n",
		"old.txt":  "old\ncontent\n",
	})
	l := withLog(t, env)
	res := runOK(t, env, "apply_patch", map[string]any{"patch": multiPatch})
	if got := readDisk(t, env, "src/a.go"); got != "package a\n\nfunc A() int { return 2 }\n\nfunc B() {}\n\n\nfunc C() {}\n\n// end\n// more\n" {
		t.Fatalf("a.go:\n%s", got)
	}
	if got := readDisk(t, env, "docs/new.md"); got != "# New\ntext\n" {
		t.Fatalf("new.md %q", got)
	}
	if exists(t, env, "old.txt") {
		t.Fatal("old.txt not deleted")
	}
	want := []tool.FileChange{
		{Path: "src/a.go", Kind: "modified", Added: 2, Removed: 1},
		{Path: "docs/new.md", Kind: "created", Added: 2},
		{Path: "old.txt", Kind: "deleted", Removed: 2},
	}
	if !slices.Equal(res.Changes, want) {
		t.Fatalf("changes %+v", res.Changes)
	}
	ops := l.List()
	if len(ops) != 1 || res.Operation != ops[0].ID || len(ops[0].Files) != 3 || ops[0].Tool != "apply_patch" || ops[0].TaskID != "task-1" {
		t.Fatalf("ops %+v, result op %q", ops, res.Operation)
	}
	// One undo restores all three files.
	if r, c, err := l.Undo(res.Operation); err != nil || len(r) != 3 || len(c) != 0 {
		t.Fatalf("undo %v %v %v", r, c, err)
	}
	if readDisk(t, env, "old.txt") != "old\ncontent\n" || exists(t, env, "docs/new.md") {
		t.Fatal("undo did not restore")
	}
}

func TestApplyPatchFuzzCRLFAndEOF(t *testing.T) {
	env := workspace(t, map[string]string{
		"w.txt":  "\ufeffone\r\ntwo\r\nthree\r\nfour\r\n",
		"n.txt":  "a\nb",
		"ws.txt": "x  \ny\n",
	})
	// Line numbers off by 2 and LF lines against a CRLF file with a BOM.
	runOK(t, env, "apply_patch", map[string]any{"patch": "--- a/w.txt\n+++ b/w.txt\n@@ -4,2 +4,2 @@\n two\n-three\n+THREE\n"})
	if got := readDisk(t, env, "w.txt"); got != "\ufeffone\r\ntwo\r\nTHREE\r\nfour\r\n" {
		t.Fatalf("crlf %q", got)
	}
	// No newline at end of file, on both sides.
	runOK(t, env, "apply_patch", map[string]any{"patch": "--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+B\n"})
	if got := readDisk(t, env, "n.txt"); got != "a\nB\n" {
		t.Fatalf("eof %q", got)
	}
	// Trailing white space differences are tolerated.
	runOK(t, env, "apply_patch", map[string]any{"patch": "--- a/ws.txt\n+++ b/ws.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"})
	if got := readDisk(t, env, "ws.txt"); got != "x  \nz\n" {
		t.Fatalf("ws %q", got)
	}
}

func TestApplyPatchFailuresWriteNothing(t *testing.T) {
	files := map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\n7\n8\n", "b.txt": "b\n"}
	cases := []struct {
		name, patch, kind string
		frags             []string
	}{
		{"hunk does not apply", "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n 1\n-two\n+TWO\n@@ -5,2 +5,2 @@\n 5\n-nope\n+x\n",
			tool.ErrInvalidInput, []string{"hunk 1 of a.txt", "@@ -1,2 +1,2 @@", "does not apply", "Nothing was written"}},
		{"second hunk", "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n 1\n-2\n+TWO\n@@ -5,2 +5,2 @@\n 5\n-nope\n+x\n",
			tool.ErrInvalidInput, []string{"hunk 2 of a.txt", "@@ -5,2 +5,2 @@"}},
		{"overlapping hunks", "--- a/a.txt\n+++ b/a.txt\n@@ -2,3 +2,3 @@\n 2\n-3\n+T\n 4\n@@ -3,2 +3,2 @@\n 3\n-4\n+F\n",
			tool.ErrInvalidInput, []string{"hunk 2 of a.txt", "overlaps hunk 1"}},
		{"create existing", "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+x\n", tool.ErrInvalidInput, []string{"already exists"}},
		{"change missing", "--- a/zz.txt\n+++ b/zz.txt\n@@ -1 +1 @@\n-a\n+b\n", tool.ErrNotFound, []string{"zz.txt", "does not exist"}},
		{"partial delete", "--- a/a.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-1\n-2\n", tool.ErrInvalidInput, []string{"whole file"}},
		{"outside root", "--- a/../x.txt\n+++ b/../x.txt\n@@ -1 +1 @@\n-a\n+b\n", tool.ErrOutsideWorkspace, nil},
		{"git dir", "--- /dev/null\n+++ b/.git/config\n@@ -0,0 +1 @@\n+x\n", tool.ErrDenied, nil},
		{"not a diff", "please change line 2", tool.ErrInvalidInput, []string{"no file headers"}},
		{"rename", "--- a/a.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-1\n+one\n", tool.ErrInvalidInput, []string{"move_path"}},
		{"bad header", "--- a/a.txt\n+++ b/a.txt\n@@ bogus @@\n-1\n", tool.ErrInvalidInput, []string{"malformed hunk header"}},
		{"no change", "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n b\n", tool.ErrInvalidInput, []string{"changes nothing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := workspace(t, files)
			l := withLog(t, env)
			_, err := run(t, env, "apply_patch", map[string]any{"patch": c.patch})
			wantKind(t, err, c.kind, c.frags...)
			for p, want := range files {
				if readDisk(t, env, p) != want {
					t.Fatalf("%s changed", p)
				}
			}
			if exists(t, env, "c.txt") || len(l.List()) != 0 {
				t.Fatal("something was written or logged")
			}
		})
	}
}

func TestApplyPatchStale(t *testing.T) {
	env := workspace(t, map[string]string{"a.txt": "a\n"})
	runOK(t, env, "read_file", map[string]any{"path": "a.txt"})
	writeDisk(t, env, "a.txt", "user\n")
	_, err := run(t, env, "apply_patch", map[string]any{"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-user\n+x\n"})
	wantKind(t, err, tool.ErrStale, "read it again")
	if readDisk(t, env, "a.txt") != "user\n" {
		t.Fatal("stale file written")
	}
}

func TestMovePath(t *testing.T) {
	env := workspace(t, map[string]string{"a.sh": "#!/bin/sh\necho a\n", "b.txt": "b\n"})
	os.Chmod(filepath.Join(env.Root, "a.sh"), 0o755)
	l := withLog(t, env)
	res := runOK(t, env, "move_path", map[string]any{"from": "a.sh", "to": "bin/run.sh"})
	if exists(t, env, "a.sh") || readDisk(t, env, "bin/run.sh") != "#!/bin/sh\necho a\n" {
		t.Fatal("not moved")
	}
	if fi, _ := os.Stat(filepath.Join(env.Root, "bin/run.sh")); fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("mode lost: %v", fi.Mode())
	}
	want := []tool.FileChange{{Path: "a.sh", Kind: "deleted", Removed: 2}, {Path: "bin/run.sh", Kind: "created", Added: 2}}
	if !slices.Equal(res.Changes, want) || res.Operation == "" {
		t.Fatalf("result %+v", res)
	}
	// Onto an existing file: refused, nothing changes.
	_, err := run(t, env, "move_path", map[string]any{"from": "bin/run.sh", "to": "b.txt"})
	wantKind(t, err, tool.ErrInvalidInput, "already exists", "never overwrites")
	if readDisk(t, env, "b.txt") != "b\n" || !exists(t, env, "bin/run.sh") {
		t.Fatal("overwrote")
	}
	_, err = run(t, env, "move_path", map[string]any{"from": "b.txt", "to": "../escape.txt"})
	wantKind(t, err, tool.ErrOutsideWorkspace)
	_, err = run(t, env, "move_path", map[string]any{"from": "missing", "to": "x"})
	wantKind(t, err, tool.ErrNotFound)
	_, err = run(t, env, "move_path", map[string]any{"from": "bin", "to": "bin2"})
	wantKind(t, err, tool.ErrInvalidInput, "folder")
	_, err = run(t, env, "move_path", map[string]any{"from": "b.txt", "to": "./b.txt"})
	wantKind(t, err, tool.ErrInvalidInput, "same path")
	// Stale source.
	runOK(t, env, "read_file", map[string]any{"path": "b.txt"})
	writeDisk(t, env, "b.txt", "changed\n")
	_, err = run(t, env, "move_path", map[string]any{"from": "b.txt", "to": "c.txt"})
	wantKind(t, err, tool.ErrStale)
	// Undo moves it back.
	if r, c, err := l.Undo(res.Operation); err != nil || len(r) != 2 || len(c) != 0 {
		t.Fatalf("undo %v %v %v", r, c, err)
	}
	if !exists(t, env, "a.sh") || exists(t, env, "bin/run.sh") {
		t.Fatal("undo of move")
	}
}

func TestDeletePath(t *testing.T) {
	env := workspace(t, map[string]string{"a.txt": "a\n", "full/x.txt": "x", ".git/HEAD": "ref"})
	os.Mkdir(filepath.Join(env.Root, "empty"), 0o755)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("k"), 0o644)
	os.Symlink(filepath.Join(outside, "keep.txt"), filepath.Join(env.Root, "link"))
	l := withLog(t, env)

	res := runOK(t, env, "delete_path", map[string]any{"path": "a.txt"})
	if exists(t, env, "a.txt") || res.Changes[0] != (tool.FileChange{Path: "a.txt", Kind: "deleted", Removed: 1}) || res.Operation == "" {
		t.Fatalf("delete: %+v", res)
	}
	if p, _ := l.Pending(); len(p) != 1 || p[0].Current != nil || *p[0].Original != "a\n" {
		t.Fatalf("pending %+v", p)
	}
	runOK(t, env, "delete_path", map[string]any{"path": "empty"})
	if exists(t, env, "empty") {
		t.Fatal("empty folder kept")
	}
	_, err := run(t, env, "delete_path", map[string]any{"path": "full"})
	wantKind(t, err, tool.ErrInvalidInput, "not empty")
	_, err = run(t, env, "delete_path", map[string]any{"path": filepath.Join(outside, "keep.txt")})
	wantKind(t, err, tool.ErrOutsideWorkspace)
	_, err = run(t, env, "delete_path", map[string]any{"path": "link"})
	wantKind(t, err, tool.ErrOutsideWorkspace)
	_, err = run(t, env, "delete_path", map[string]any{"path": ".git/HEAD"})
	wantKind(t, err, tool.ErrDenied)
	_, err = run(t, env, "delete_path", map[string]any{"path": "."})
	wantKind(t, err, tool.ErrInvalidInput)
	_, err = run(t, env, "delete_path", map[string]any{"path": "nope"})
	wantKind(t, err, tool.ErrNotFound)
	if _, err := os.Stat(filepath.Join(outside, "keep.txt")); err != nil {
		t.Fatal("outside file deleted")
	}
}

func TestEditToolsRecordOperations(t *testing.T) {
	env := workspace(t, map[string]string{"a.txt": "hello\r\nworld\r\n"})
	l := withLog(t, env)
	ctx := tool.WithCallID(context.Background(), "call-7")
	r1 := runCtxOK(t, ctx, env, "replace_text", map[string]any{"path": "a.txt", "oldText": "hello\n", "newText": "hi\n"})
	r2 := runCtxOK(t, ctx, env, "write_file", map[string]any{"path": "n/new.txt", "content": "new\n"})
	ops := l.List()
	if len(ops) != 2 || ops[0].ID != r1.Operation || ops[1].ID != r2.Operation || ops[0].CallID != "call-7" || ops[0].Tool != "replace_text" {
		t.Fatalf("ops %+v", ops)
	}
	if d := r1.Data.(editData); d.Operation != r1.Operation {
		t.Fatalf("data %+v", d)
	}
	if readDisk(t, env, "a.txt") != "hi\r\nworld\r\n" {
		t.Fatal("crlf lost through the log")
	}
	// A change between the tool's read and the log's write is caught by the
	// log and reported as a stale edit.
	env.Edits = racingLog{inner: env.Edits, root: env.Root}
	_, err := run(t, env, "replace_text", map[string]any{"path": "a.txt", "oldText": "world", "newText": "earth"})
	wantKind(t, err, tool.ErrStale, "a.txt")
	if readDisk(t, env, "a.txt") != "raced\n" {
		t.Fatal("raced file overwritten")
	}
}

// racingLog changes the file on disk just before the real log applies.
type racingLog struct {
	inner tool.EditLog
	root  string
}

func (r racingLog) Apply(ctx context.Context, taskID, callID, name string, files []tool.FileEdit) (string, error) {
	os.WriteFile(filepath.Join(r.root, files[0].Path), []byte("raced\n"), 0o644)
	return r.inner.Apply(ctx, taskID, callID, name, files)
}

func TestParsePatchLenient(t *testing.T) {
	// Miscounted header, an empty context line without its space, git
	// extended headers and prose around the diff.
	files, err := parsePatch("Here is the patch:\ndiff --git a/x b/x\nindex 1..2 100644\n--- a/x\t2024-01-01\n+++ b/x\n@@ -1,9 +1,9 @@\n a\n\n-b\n+c\nThanks\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].path() != "x" || len(files[0].hunks[0].lines) != 4 {
		t.Fatalf("%+v", files[0])
	}
	out, err := applyHunks("x", "a\n\nb\n", files[0].hunks)
	if err != nil || out != "a\n\nc\n" {
		t.Fatalf("%q %v", out, err)
	}
	if _, err := parsePatch("@@ -1 +1 @@\n-a\n+b\n"); err == nil || !strings.Contains(err.Error(), "without a file header") {
		t.Fatalf("headerless hunk: %v", err)
	}
}
