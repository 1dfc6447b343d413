package builtin

import (
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// Every writing tool refuses a path with a .git component at any depth
// (a nested repository or a submodule), case-insensitively, and writes
// nothing.
func TestNestedGitDirRefused(t *testing.T) {
	env := workspace(t, map[string]string{
		"a.txt":               "a\n",
		"sub/.git/HEAD":       "ref\n",
		"sub/.git/hooks/x":    "old\n",
		"mod/.git":            "gitdir: ../.git/modules/mod\n",
		"sub/.GIT/config":     "c\n",
		"sub/.github/ok.yml":  "ok\n",
		"sub/x.git/keep.txt":  "k\n",
		"deep/a/.Git/info/ex": "e\n",
	})
	l := withLog(t, env)
	for _, rel := range []string{"sub/.git/HEAD", "sub/.git/hooks/x", "mod/.git", "sub/.GIT/config", "deep/a/.Git/info/ex"} {
		runOK(t, env, "read_file", map[string]any{"path": rel}) // reading stays allowed
		_, err := run(t, env, "write_file", map[string]any{"path": rel, "content": "x"})
		wantKind(t, err, tool.ErrDenied, ".git")
		_, err = run(t, env, "replace_text", map[string]any{"path": rel, "oldText": "e", "newText": "x"})
		wantKind(t, err, tool.ErrDenied)
		_, err = run(t, env, "delete_path", map[string]any{"path": rel})
		wantKind(t, err, tool.ErrDenied)
		_, err = run(t, env, "move_path", map[string]any{"from": rel, "to": "moved.txt"})
		wantKind(t, err, tool.ErrDenied)
	}
	_, err := run(t, env, "write_file", map[string]any{"path": "sub/.git/hooks/pre-commit", "content": "#!/bin/sh\n"})
	wantKind(t, err, tool.ErrDenied)
	_, err = run(t, env, "move_path", map[string]any{"from": "a.txt", "to": "sub/.git/hooks/post-checkout"})
	wantKind(t, err, tool.ErrDenied)
	_, err = run(t, env, "apply_patch", map[string]any{"patch": "--- /dev/null\n+++ b/sub/.git/hooks/pre-push\n@@ -0,0 +1 @@\n+x\n"})
	wantKind(t, err, tool.ErrDenied)
	_, err = run(t, env, "apply_patch", map[string]any{"patch": "--- a/sub/.git/hooks/x\n+++ b/sub/.git/hooks/x\n@@ -1 +1 @@\n-old\n+new\n"})
	wantKind(t, err, tool.ErrDenied)
	if exists(t, env, "sub/.git/hooks/pre-commit") || exists(t, env, "sub/.git/hooks/pre-push") ||
		exists(t, env, "sub/.git/hooks/post-checkout") || readDisk(t, env, "sub/.git/hooks/x") != "old\n" || !exists(t, env, "a.txt") {
		t.Fatal("a refused write changed the disk")
	}
	if n := len(l.List()); n != 0 {
		t.Fatalf("refused writes logged %d operations", n)
	}
	// Names that merely contain "git" are ordinary paths.
	runOK(t, env, "write_file", map[string]any{"path": "sub/.github/ok.yml", "content": "new\n"})
	runOK(t, env, "write_file", map[string]any{"path": "sub/x.git/keep.txt", "content": "new\n"})
	runOK(t, env, "write_file", map[string]any{"path": ".gitignore", "content": "dist/\n"})
}

func TestInGitDir(t *testing.T) {
	for rel, want := range map[string]bool{
		".git": true, ".git/config": true, "a/.git": true, "a/b/.GIT/hooks/x": true, `a\.git\x`: true,
		"a.txt": false, ".gitignore": false, "a/.github/x": false, "x.git/y": false, "a/git/b": false,
	} {
		if got := inGitDir(rel); got != want {
			t.Errorf("inGitDir(%q) = %v, want %v", rel, got, want)
		}
	}
}
