package editlog

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func newRoot(t *testing.T) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, root, rel string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

func mustContent(t *testing.T, root, rel, want string) {
	t.Helper()
	got, ok := read(t, root, rel)
	if !ok || got != want {
		t.Fatalf("%s = %q (exists %v), want %q", rel, got, ok, want)
	}
}

func mustAbsent(t *testing.T, root, rel string) {
	t.Helper()
	if _, ok := read(t, root, rel); ok {
		t.Fatalf("%s exists", rel)
	}
}

func modify(rel, before, after string) FileSpec {
	return FileSpec{Path: rel, Existed: true, Before: []byte(before), After: []byte(after)}
}

func create(rel, after string) FileSpec { return FileSpec{Path: rel, After: []byte(after)} }

func del(rel, before string) FileSpec {
	return FileSpec{Path: rel, Existed: true, Before: []byte(before), Delete: true}
}

func apply(t *testing.T, l *Log, files ...FileSpec) Operation {
	t.Helper()
	op, err := l.Apply(context.Background(), OpSpec{TaskID: "task-1", Tool: "test", Files: files})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func TestApplyPendingKeep(t *testing.T) {
	root := newRoot(t)
	write(t, root, "a.txt", "one\ntwo\n")
	write(t, root, "gone.txt", "bye\n")
	l, err := Open(root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	op1 := apply(t, l, modify("a.txt", "one\ntwo\n", "one\n2\n"), create("new/b.txt", "b\n"))
	op2 := apply(t, l, modify("a.txt", "one\n2\n", "one\n2\nthree\n"), del("gone.txt", "bye\n"))
	mustContent(t, root, "a.txt", "one\n2\nthree\n")
	mustContent(t, root, "new/b.txt", "b\n")
	mustAbsent(t, root, "gone.txt")
	if op1.Files[0].Kind() != "modified" || op1.Files[1].Kind() != "created" || op2.Files[1].Kind() != "deleted" {
		t.Fatalf("kinds: %+v %+v", op1.Files, op2.Files)
	}
	if !strings.Contains(op1.Diff, "--- /dev/null\n+++ b/new/b.txt") || !strings.Contains(op1.Diff, "+2") {
		t.Fatalf("diff:\n%s", op1.Diff)
	}

	p := mustPending(t, l)
	if len(p) != 3 {
		t.Fatalf("pending = %+v", p)
	}
	a := p[0]
	if a.Path != "a.txt" || *a.Original != "one\ntwo\n" || *a.Current != "one\n2\nthree\n" || a.Added != 2 || a.Removed != 1 ||
		!slices.Equal(a.Operations, []string{op1.ID, op2.ID}) {
		t.Fatalf("a.txt pending = %+v", a)
	}
	if p[1].Path != "new/b.txt" || p[1].Original != nil || *p[1].Current != "b\n" {
		t.Fatalf("created pending = %+v", p[1])
	}
	if p[2].Path != "gone.txt" || p[2].Current != nil || *p[2].Original != "bye\n" {
		t.Fatalf("deleted pending = %+v", p[2])
	}

	kept, err := l.Keep([]string{"a.txt"})
	if err != nil || !slices.Equal(kept, []string{"a.txt"}) {
		t.Fatalf("keep = %v, %v", kept, err)
	}
	if p := mustPending(t, l); len(p) != 2 {
		t.Fatalf("after keep: %+v", p)
	}
	kept, _ = l.Keep(nil)
	if !slices.Equal(kept, []string{"gone.txt", "new/b.txt"}) || len(mustPending(t, l)) != 0 {
		t.Fatalf("keep all = %v, pending %v", kept, mustPending(t, l))
	}
	mustContent(t, root, "a.txt", "one\n2\nthree\n") // keep never touches files
	if ids := l.TaskOperations("task-1"); !slices.Equal(ids, []string{op1.ID, op2.ID}) {
		t.Fatalf("task ops = %v", ids)
	}
	if ls := l.List(); len(ls) != 2 || ls[0].Diff == "" || !ls[0].Settled() {
		t.Fatalf("list = %+v", ls)
	}
}

func TestApplyRefusesChangedFile(t *testing.T) {
	root := newRoot(t)
	write(t, root, "a.txt", "user edit\n")
	l, _ := Open(root, "", nil)
	var ce *ChangedError
	if _, err := l.Apply(context.Background(), OpSpec{Files: []FileSpec{modify("a.txt", "old\n", "new\n")}}); !errors.As(err, &ce) || ce.Path != "a.txt" {
		t.Fatalf("err = %v", err)
	}
	// Creating over an existing file is a change too.
	if _, err := l.Apply(context.Background(), OpSpec{Files: []FileSpec{create("a.txt", "x")}}); !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	mustContent(t, root, "a.txt", "user edit\n")
	if len(l.List()) != 0 {
		t.Fatal("a refused edit was logged")
	}
	for _, bad := range []OpSpec{
		{},
		{Files: []FileSpec{create("../x", "x")}},
		{Files: []FileSpec{create("/abs", "x")}},
		{Files: []FileSpec{create("a", "x"), create("a", "y")}},
		{Files: []FileSpec{{Path: "nope", Delete: true}}},
	} {
		if _, err := l.Apply(context.Background(), bad); err == nil {
			t.Errorf("Apply(%+v) succeeded", bad)
		}
	}
}

func TestApplyAllOrNothing(t *testing.T) {
	root := newRoot(t)
	write(t, root, "a.txt", "a\n")
	write(t, root, "blocker", "a file, not a folder\n")
	l, _ := Open(root, filepath.Join(t.TempDir(), "cp.json"), nil)
	_, err := l.Apply(context.Background(), OpSpec{Files: []FileSpec{
		modify("a.txt", "a\n", "A\n"),
		create("new.txt", "n\n"),
		create("blocker/child.txt", "x"), // parent is a file: the write fails
	}})
	if err == nil {
		t.Fatal("want error")
	}
	mustContent(t, root, "a.txt", "a\n")
	mustAbsent(t, root, "new.txt")
	if len(l.List()) != 0 {
		t.Fatal("failed operation logged")
	}
}

func TestRevertAndConflicts(t *testing.T) {
	root := newRoot(t)
	write(t, root, "a.txt", "a\n")
	write(t, root, "b.txt", "b\n")
	write(t, root, "d.txt", "d\n")
	write(t, root, "untouched.txt", "mine\n")
	l, _ := Open(root, "", nil)
	apply(t, l, modify("a.txt", "a\n", "A\n"), modify("b.txt", "b\n", "B\n"), create("c/c.txt", "c\n"), del("d.txt", "d\n"))
	write(t, root, "b.txt", "user changed B\n") // the user edits after the agent

	reverted, conflicts, err := l.Revert(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(reverted, []string{"a.txt", "c/c.txt", "d.txt"}) || !slices.Equal(conflicts, []string{"b.txt"}) {
		t.Fatalf("reverted %v conflicts %v", reverted, conflicts)
	}
	mustContent(t, root, "a.txt", "a\n")
	mustContent(t, root, "b.txt", "user changed B\n")
	mustAbsent(t, root, "c/c.txt")
	mustContent(t, root, "d.txt", "d\n")
	mustContent(t, root, "untouched.txt", "mine\n")
	if p := mustPending(t, l); len(p) != 1 || p[0].Path != "b.txt" {
		t.Fatalf("pending after revert: %+v", p)
	}
	// A user deleting the file is a conflict too.
	os.Remove(filepath.Join(root, "b.txt"))
	if _, c, _ := l.Revert([]string{"b.txt"}); !slices.Equal(c, []string{"b.txt"}) {
		t.Fatalf("conflicts %v", c)
	}
	mustAbsent(t, root, "b.txt")
}

func TestUndo(t *testing.T) {
	root := newRoot(t)
	write(t, root, "a.txt", "a\n")
	write(t, root, "m.txt", "m\n")
	l, _ := Open(root, "", nil)
	op1 := apply(t, l, modify("a.txt", "a\n", "a1\n"))
	op2 := apply(t, l, modify("a.txt", "a1\n", "a2\n"), del("m.txt", "m\n"), create("moved.txt", "m\n"))

	// op1's file changed since (op2): conflict, untouched.
	r, c, err := l.Undo(op1.ID)
	if err != nil || len(r) != 0 || !slices.Equal(c, []string{"a.txt"}) {
		t.Fatalf("undo op1 = %v %v %v", r, c, err)
	}
	mustContent(t, root, "a.txt", "a2\n")

	r, c, err = l.Undo(op2.ID)
	if err != nil || !slices.Equal(r, []string{"a.txt", "m.txt", "moved.txt"}) || len(c) != 0 {
		t.Fatalf("undo op2 = %v %v %v", r, c, err)
	}
	mustContent(t, root, "a.txt", "a1\n")
	mustContent(t, root, "m.txt", "m\n")
	mustAbsent(t, root, "moved.txt")
	if p := mustPending(t, l); len(p) != 1 || *p[0].Current != "a1\n" {
		t.Fatalf("pending %+v", p)
	}
	if _, _, err := l.Undo(op2.ID); !errors.Is(err, ErrAlreadyUndone) {
		t.Fatalf("second undo: %v", err)
	}
	if _, _, err := l.Undo("op-99"); !errors.Is(err, ErrUnknownOperation) {
		t.Fatalf("unknown: %v", err)
	}
	// Now op1 applies: disk holds its after content again.
	write(t, root, "a.txt", "user\n")
	if _, c, _ := l.Undo(op1.ID); !slices.Equal(c, []string{"a.txt"}) {
		t.Fatalf("user change not a conflict: %v", c)
	}
	mustContent(t, root, "a.txt", "user\n")
}

func TestCheckpointReloadAndPrune(t *testing.T) {
	root := newRoot(t)
	cp := CheckpointPath(t.TempDir(), root)
	write(t, root, "f.txt", "0")
	l, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := apply(t, l, modify("f.txt", "0", "1"))
	l.Keep(nil)
	prev := "1"
	var last Operation
	for i := 2; i <= MaxOperations+2; i++ {
		next := strings.Repeat("x", i%7) + string(rune('a'+i%26))
		last = apply(t, l, modify("f.txt", prev, next))
		prev = next
	}
	// Reload: the log is the same and undo still works.
	l2, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(l2.List()) != MaxOperations+2 {
		t.Fatalf("reloaded %d operations", len(l2.List()))
	}
	if _, _, err := l2.Undo(first.ID); !errors.Is(err, ErrTooOld) || !strings.Contains(err.Error(), "too old to undo") {
		t.Fatalf("undo of a pruned op: %v", err)
	}
	if r, c, err := l2.Undo(last.ID); err != nil || len(r) != 1 || len(c) != 0 {
		t.Fatalf("undo last after reload: %v %v %v", r, c, err)
	}
	if p := mustPending(t, l2); len(p) != 1 || p[0].Original == nil || *p[0].Original != "1" {
		t.Fatalf("pending after reload: %+v", p)
	}
	// Every file of the checkpoint is private: 0600 files in 0700 folders.
	filepath.Walk(filepath.Dir(cp), func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if want := os.FileMode(0o600); fi.IsDir() && fi.Mode().Perm() != 0o700 || !fi.IsDir() && !strings.HasSuffix(p, ".lock") && fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v", p, fi.Mode())
		}
		return nil
	})
}

func TestCorruptCheckpointMovedAside(t *testing.T) {
	root := newRoot(t)
	dir := t.TempDir()
	cp := filepath.Join(dir, "cp.json")
	os.WriteFile(cp, []byte(`{"version":1,"operations":[{"id":`), 0o600)
	l, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.List()) != 0 {
		t.Fatal("corrupt log loaded")
	}
	m, _ := filepath.Glob(cp + ".corrupt-*")
	if len(m) != 1 {
		t.Fatalf("moved aside: %v", m)
	}
	for _, bad := range []string{`{"version":7}`, `{"version":1,"operations":[{"id":"op-1","files":[{"path":"../x"}]}]}`, `[]`} {
		os.WriteFile(cp, []byte(bad), 0o600)
		if _, err := Open(root, cp, nil); err != nil {
			t.Fatalf("%s: %v", bad, err)
		}
		if _, err := os.Stat(cp); err == nil {
			t.Fatalf("%s: not moved aside", bad)
		}
	}
}

// TestRecoverUnfinished writes a version 1 checkpoint (contents inline) as a
// crash between the write-ahead save and the writes would have left it: it
// loads, is settled against the disk and converted to version 2.
func TestRecoverUnfinished(t *testing.T) {
	root := newRoot(t)
	cp := filepath.Join(t.TempDir(), "cp.json")
	write(t, root, "done.txt", "new")    // the write happened
	write(t, root, "notyet.txt", "old")  // the write did not happen
	write(t, root, "user.txt", "theirs") // neither: changed by someone else
	oldNew := func(p string) map[string]any {
		return map[string]any{"path": p, "before": []byte("old"), "after": []byte("new"),
			"beforeHash": hashOf([]byte("old")), "afterHash": hashOf([]byte("new")), "mode": 0o644, "added": 1, "removed": 1}
	}
	v1 := map[string]any{"version": 1, "root": root, "operations": []any{
		map[string]any{"id": "op-1", "tool": "apply_patch", "time": "2025-01-01T00:00:00Z", "diff": "-old\n+new\n", "committed": false,
			"files": []any{oldNew("done.txt"), oldNew("notyet.txt"), oldNew("user.txt")}},
		map[string]any{"id": "op-2", "tool": "write_file", "time": "2025-01-01T00:00:01Z", "diff": "+x\n", "committed": false,
			"files": []any{map[string]any{"path": "never.txt", "before": nil, "after": []byte("x"), "beforeHash": "", "afterHash": hashOf([]byte("x")), "mode": 0o644}}},
	}}
	data, _ := json.Marshal(v1)
	os.WriteFile(cp, data, 0o600)

	l, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := l.LoadConflicts(); !slices.Equal(c, []string{"user.txt"}) {
		t.Fatalf("conflicts %v", c)
	}
	ls := l.List()
	if len(ls) != 1 || len(ls[0].Files) != 2 || !ls[0].Committed {
		t.Fatalf("recovered %+v", ls)
	}
	mustContent(t, root, "user.txt", "theirs") // never overwritten
	if b, _ := os.ReadFile(cp); !strings.Contains(string(b), `"version":2`) || strings.Contains(string(b), `"before"`) {
		t.Fatalf("the version 1 checkpoint was not converted: %s", b)
	}
	// Revert restores done.txt (its old content came from the version 1
	// file) and refuses user.txt.
	r, c, err := l.Revert(nil)
	if err != nil || !slices.Equal(r, []string{"done.txt"}) || !slices.Equal(c, []string{"user.txt"}) {
		t.Fatalf("revert %v %v %v", r, c, err)
	}
	mustContent(t, root, "done.txt", "old")
	mustContent(t, root, "user.txt", "theirs")
	// The recovery was saved: a third open sees a committed log.
	l3, _ := Open(root, cp, nil)
	if len(l3.LoadConflicts()) != 0 || len(l3.List()) != 1 {
		t.Fatalf("reopen: %v %+v", l3.LoadConflicts(), l3.List())
	}
	// The next id does not collide with the old "op-<n>" ids and has the
	// "op-<prefix>-<n>" form.
	if op := apply(t, l3, create("z.txt", "z")); !idPattern.MatchString(op.ID) || op.ID == "op-1" || len(l3.List()) != 2 {
		t.Fatalf("id %s", op.ID)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open("relative", "", nil); err == nil {
		t.Fatal("relative root accepted")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Open(f, "", nil); err == nil {
		t.Fatal("file root accepted")
	}
	if WorkspaceID("/a") == WorkspaceID("/b") || len(WorkspaceID("/a")) != 32 {
		t.Fatal("workspace ids")
	}
}

func TestModeKept(t *testing.T) {
	root := newRoot(t)
	write(t, root, "run.sh", "#!/bin/sh\n")
	os.Chmod(filepath.Join(root, "run.sh"), 0o755)
	l, _ := Open(root, "", nil)
	apply(t, l, del("run.sh", "#!/bin/sh\n"), FileSpec{Path: "bin/run.sh", After: []byte("#!/bin/sh\n"), Mode: 0o755})
	if fi, err := os.Stat(filepath.Join(root, "bin/run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("moved mode %v %v", fi, err)
	}
	if _, _, err := l.Revert(nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("restored mode %v %v", fi, err)
	}
}

// mustPending is l.Pending that fails the test on an error.
func mustPending(t *testing.T, l *Log) []Pending {
	t.Helper()
	p, err := l.Pending()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// idPattern is the form of an operation id made by this package.
var idPattern = regexp.MustCompile(`^op-[0-9a-f]{6}-[1-9][0-9]*$`)
