package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/editlog"
)

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// repo makes a repository with one commit of files.
func repo(t *testing.T, files map[string]string) string { return repoB(t, files) }

func repoB(t testing.TB, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	git(t, root, "init", "-q", ".")
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(c), 0o644)
	}
	git(t, root, "add", "-A")
	git(t, root, "commit", "-qm", "init")
	return root
}

func open(t *testing.T, root, dataDir string) *Manager {
	t.Helper()
	m, err := Open(root, &Options{DataDir: dataDir, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func write(t *testing.T, dir, rel, content string) { writeB(t, dir, rel, content) }

func writeB(t testing.TB, dir, rel, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755)
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCreateCommitApplyUndoDiscard(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "one\ntwo\nthree\nfour\nfive\n", "b.txt": "bee\n"})
	data := t.TempDir()
	m := open(t, root, data)
	if !strings.HasPrefix(m.Dir(), filepath.Join(data, "worktrees")) {
		t.Fatalf("worktrees under %s, want under the dataDir", m.Dir())
	}
	w, err := m.Create(ctx, "impl-1", &CreateOptions{TaskID: "task-1", Role: "implementation"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Dir != filepath.Join(m.Dir(), "impl-1") || read(t, w.Dir, "a.txt") != "one\ntwo\nthree\nfour\nfive\n" {
		t.Fatalf("worktree %+v", w)
	}
	write(t, w.Dir, "a.txt", "one\ntwo\nthree\nfour\n5\n")
	write(t, w.Dir, "new/c.txt", "c1\nc2\n")
	os.Remove(filepath.Join(w.Dir, "b.txt"))
	c, err := m.Commit(ctx, "impl-1", "task-x: impl")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 3 || c.Added != 3 || c.Removed != 2 {
		t.Fatalf("change %+v", c)
	}
	if !strings.Contains(c.Patch, "+5\n") || !strings.Contains(c.Patch, "+++ b/new/c.txt") {
		t.Fatalf("patch:\n%s", c.Patch)
	}
	// The user edits another line of a.txt in the main tree meanwhile.
	write(t, root, "a.txt", "ONE\ntwo\nthree\nfour\nfive\n")

	log, err := editlog.Open(root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Apply(ctx, "impl-1", log, "task-1")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Applied || res.Files != 3 || len(res.Changed) != 3 || res.Operation == nil {
		t.Fatalf("apply %+v", res)
	}
	if got := read(t, root, "a.txt"); got != "ONE\ntwo\nthree\nfour\n5\n" {
		t.Fatalf("merged a.txt %q", got)
	}
	if read(t, root, "new/c.txt") != "c1\nc2\n" {
		t.Fatal("new file not written")
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("b.txt not deleted")
	}
	pend, err := log.Pending()
	if err != nil || len(pend) != 3 {
		t.Fatalf("pending %v %v", pend, err)
	}
	restored, conflicts, err := log.Undo(*res.Operation)
	if err != nil || len(conflicts) != 0 || len(restored) != 3 {
		t.Fatalf("undo %v %v %v", restored, conflicts, err)
	}
	if read(t, root, "a.txt") != "ONE\ntwo\nthree\nfour\nfive\n" || read(t, root, "b.txt") != "bee\n" {
		t.Fatal("undo did not restore")
	}

	if err := m.Discard(ctx, "impl-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("worktree folder left")
	}
	if out := git(t, root, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Fatalf("git worktree list:\n%s", out)
	}
	if out := git(t, root, "branch", "--list", "task-x/*"); strings.TrimSpace(out) != "" {
		t.Fatalf("branch left: %s", out)
	}
	if l, _ := m.List(); len(l) != 0 {
		t.Fatalf("registry %+v", l)
	}
	if err := m.Discard(ctx, "impl-1"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("second discard: %v", err)
	}
}

func TestApplyConflictKeepsWorktree(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "b.txt": "bee\n"})
	m := open(t, root, t.TempDir())
	w, err := m.Create(ctx, "w", nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, w.Dir, "a.txt", "one\nworktree\nthree\n")
	write(t, w.Dir, "b.txt", "bee2\n")
	if _, err := m.Commit(ctx, "w", "x"); err != nil {
		t.Fatal(err)
	}
	write(t, root, "a.txt", "one\nmain\nthree\n")
	log, _ := editlog.Open(root, "", nil)
	res, err := m.Apply(ctx, "w", log, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied || res.Operation != nil || len(res.Conflicts) != 1 || res.Conflicts[0] != "a.txt" || res.Error == nil {
		t.Fatalf("apply %+v", res)
	}
	// Nothing written, not even the file that would merge.
	if read(t, root, "b.txt") != "bee\n" || read(t, root, "a.txt") != "one\nmain\nthree\n" {
		t.Fatal("a conflicting apply wrote files")
	}
	if ops := log.List(); len(ops) != 0 {
		t.Fatalf("operations %+v", ops)
	}
	if _, err := os.Stat(w.Dir); err != nil {
		t.Fatal("worktree gone after a conflict")
	}
	if l, _ := m.List(); len(l) != 1 {
		t.Fatal("worktree unregistered after a conflict")
	}
	// A worktree with no change of its own applies as nothing to write.
	if _, err := m.Create(ctx, "empty", nil); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Apply(ctx, "empty", log, ""); err != nil || !res.Applied || res.Operation != nil || res.Files != 0 {
		t.Fatalf("apply of no change: %+v %v", res, err)
	}
	// The user resolves it: the main tree takes the worktree's a.txt.
	write(t, root, "a.txt", "one\ntwo\nthree\n")
	res, err = m.Apply(ctx, "w", log, "")
	if err != nil || !res.Applied {
		t.Fatalf("apply after resolving: %+v %v", res, err)
	}
}

func TestRegistryAfterRestartAndCrashLeftovers(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "a\n"})
	data := t.TempDir()
	state := t.TempDir()
	m, err := Open(root, &Options{DataDir: data, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	w1, err := m.Create(ctx, "left-1", &CreateOptions{Role: "testing"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, w1.Dir, "a.txt", "changed\n")
	if _, err := m.Commit(ctx, "left-1", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, "left-2", nil); err != nil {
		t.Fatal(err)
	}
	// A crash between the registry entry and git: an entry with no folder.
	if err := m.update(func(reg map[string]*Worktree) error {
		reg["half"] = &Worktree{Name: "half", Dir: filepath.Join(m.Dir(), "half"), Branch: BranchPrefix + "half"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// An entry someone edited to point git or a removal elsewhere is
	// ignored.
	if err := m.update(func(reg map[string]*Worktree) error {
		reg["evil"] = &Worktree{Name: "evil", Dir: filepath.Join(m.Dir(), "evil"), Branch: BranchPrefix + "evil", AdminDir: t.TempDir()}
		reg["evil2"] = &Worktree{Name: "evil2", Dir: root, Branch: BranchPrefix + "evil2"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// A new runtime on the same dataDir.
	m2, err := Open(root, &Options{DataDir: data, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	l, err := m2.List()
	if err != nil || len(l) != 3 {
		t.Fatalf("list after restart %+v %v", l, err)
	}
	c, err := m2.Change(ctx, "left-1")
	if err != nil || len(c.Files) != 1 || c.Files[0].Path != "a.txt" {
		t.Fatalf("change after restart %+v %v", c, err)
	}
	for _, n := range []string{"left-1", "left-2", "half"} {
		if err := m2.Discard(ctx, n); err != nil {
			t.Fatalf("discard %s: %v", n, err)
		}
	}
	if out := git(t, root, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Fatalf("git worktree list:\n%s", out)
	}
	if out := git(t, root, "branch", "--list", "task-x/*"); strings.TrimSpace(out) != "" {
		t.Fatalf("branches left: %s", out)
	}
}

func TestSeedMakesOwnPatchOnlyOwnChange(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	m := open(t, root, t.TempDir())
	for _, n := range []string{"s1", "s2", "s3"} {
		if _, err := m.Create(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	w1, _ := m.Get("s1")
	w2, _ := m.Get("s2")
	write(t, w1.Dir, "a.txt", "a from s1\n")
	write(t, w2.Dir, "b.txt", "b from s2\n")
	m.Commit(ctx, "s1", "s1")
	m.Commit(ctx, "s2", "s2")
	if err := m.Seed(ctx, "s3", []string{"s1", "s2"}); err != nil {
		t.Fatal(err)
	}
	w3, _ := m.Get("s3")
	if read(t, w3.Dir, "a.txt") != "a from s1\n" || read(t, w3.Dir, "b.txt") != "b from s2\n" {
		t.Fatal("seeded changes missing")
	}
	write(t, w3.Dir, "c.txt", "c from s3\n")
	c, err := m.Commit(ctx, "s3", "s3")
	if err != nil || len(c.Files) != 1 || c.Files[0].Path != "c.txt" {
		t.Fatalf("own change %+v %v", c, err)
	}
	// Merged in order, each applies on the last.
	log, _ := editlog.Open(root, "", nil)
	for _, n := range []string{"s1", "s2", "s3"} {
		res, err := m.Apply(ctx, n, log, "")
		if err != nil || !res.Applied {
			t.Fatalf("apply %s: %+v %v", n, res, err)
		}
	}
	if read(t, root, "c.txt") != "c from s3\n" || read(t, root, "a.txt") != "a from s1\n" {
		t.Fatal("merge result")
	}
}

// A repository where a sandboxed command planted programs git could run
// (hooks on checkout, commit and ref updates, an fsmonitor, filters, a
// pager, config in the worktree's .git file) runs none of them.
func TestPlantedRepositoryRunsNothing(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "a\n"})
	marks := t.TempDir()
	prog := func(name string) string {
		p := filepath.Join(marks, "run-"+name+".sh")
		os.WriteFile(p, []byte("#!/bin/sh\ntouch "+filepath.Join(marks, "PWNED-"+name)+"\ncat\n"), 0o755)
		return p
	}
	write(t, root, ".gitattributes", "* filter=evil diff=evil merge=evil\n")
	git(t, root, "add", ".gitattributes")
	git(t, root, "commit", "-qm", "attrs")
	f, _ := os.OpenFile(filepath.Join(root, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("[core]\n\tfsmonitor = " + prog("fsmonitor") + "\n\tpager = " + prog("pager") +
		"\n[filter \"evil\"]\n\tclean = " + prog("clean") + "\n\tsmudge = " + prog("smudge") + "\n\tprocess = " + prog("process") +
		"\n[diff \"evil\"]\n\ttextconv = " + prog("textconv") + "\n\tcommand = " + prog("diffcmd") +
		"\n[merge \"evil\"]\n\tdriver = " + prog("merge") + "\n[extensions]\n\tworktreeConfig = true\n")
	f.Close()
	os.WriteFile(filepath.Join(root, ".git", "config.worktree"), []byte("[core]\n\tfsmonitor = "+prog("cfgworktree")+"\n"), 0o644)
	for _, h := range []string{"post-checkout", "pre-commit", "commit-msg", "post-commit", "reference-transaction", "post-index-change", "prepare-commit-msg"} {
		os.WriteFile(filepath.Join(root, ".git", "hooks", h), []byte("#!/bin/sh\ntouch "+filepath.Join(marks, "PWNED-hook-"+h)+"\n"), 0o755)
	}
	m := open(t, root, t.TempDir())
	w, err := m.Create(ctx, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The sandboxed agent in the worktree rewrites its .git file to a
	// git folder of its own with a hook-laden config.
	evil := filepath.Join(t.TempDir(), "evil")
	os.MkdirAll(filepath.Join(evil, "hooks"), 0o755)
	os.WriteFile(filepath.Join(evil, "config"), []byte("[core]\n\tfsmonitor = "+prog("evilgitdir")+"\n"), 0o644)
	os.WriteFile(filepath.Join(evil, "HEAD"), []byte("ref: refs/heads/master\n"), 0o644)
	os.WriteFile(filepath.Join(w.Dir, ".git"), []byte("gitdir: "+evil+"\n"), 0o644)
	write(t, w.Dir, "a.txt", "a\nb\n")
	c, err := m.Commit(ctx, "p", "x")
	if err != nil || len(c.Files) != 1 {
		t.Fatalf("commit %+v %v", c, err)
	}
	write(t, root, "a.txt", "z\na\n")
	log, _ := editlog.Open(root, "", nil)
	if _, err := m.Apply(ctx, "p", log, ""); err != nil {
		t.Fatal(err)
	}
	if err := m.Discard(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(marks)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "PWNED") {
			t.Errorf("git ran a planted program: %s", e.Name())
		}
	}
}

func TestWorktreesNeverInsideTheWorkspace(t *testing.T) {
	root := repo(t, map[string]string{"a.txt": "a\n"})
	state := t.TempDir()
	m, err := Open(root, &Options{DataDir: filepath.Join(root, "data"), StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Dir(), state) {
		t.Fatalf("worktrees in %s with a dataDir inside the workspace", m.Dir())
	}
	if _, err := Open(root, &Options{StateDir: filepath.Join(root, "state")}); err == nil {
		t.Fatal("a state folder inside the workspace was accepted")
	}
	if _, err := Open(t.TempDir(), nil); !errors.Is(err, ErrNoRepo) {
		t.Fatalf("no repo: %v", err)
	}
}

// TestApplyUnderOutsideLinkIsConflict: a candidate that writes under a
// path the working tree cannot hold as a file inside the root (an
// untracked symbolic link to a folder outside the tree, a file where the
// change needs a folder, a folder where it needs a file) does not apply:
// a conflict naming the path (applied false), nothing written (outside the
// tree least of all), the worktree kept; not an internal error.
func TestApplyUnderOutsideLinkIsConflict(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "a\n", "c.txt": "c\n"})
	outside := t.TempDir()
	m := open(t, root, t.TempDir())
	w, err := m.Create(ctx, "w", nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, w.Dir, "out/new.txt", "new\n")
	write(t, w.Dir, "d/x.txt", "x\n")
	write(t, w.Dir, "c.txt", "c2\n")
	if _, err := m.Commit(ctx, "w", "x"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "d", "a file where the change has a folder\n")
	os.Remove(filepath.Join(root, "c.txt"))
	write(t, root, "c.txt/inner", "a folder where the change has a file\n")
	log, _ := editlog.Open(root, "", nil)
	res, err := m.Apply(ctx, "w", log, "")
	if err != nil {
		t.Fatalf("apply: %v, want a conflict", err)
	}
	want := "c.txt,d/x.txt,out/new.txt"
	if res.Applied || res.Operation != nil || strings.Join(res.Conflicts, ",") != want || res.Error == nil || !strings.Contains(*res.Error, "out/new.txt") {
		t.Fatalf("apply %+v (error %v), want conflicts %s", res, res.Error, want)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("written outside the tree: %v", ents)
	}
	if ops := log.List(); len(ops) != 0 {
		t.Fatalf("operations %+v", ops)
	}
	if _, err := os.Stat(w.Dir); err != nil {
		t.Fatal("worktree gone after a conflict")
	}
}

// TestCreateWritesNothingThroughALinkedWorktreesFolder: a sandboxed
// command made .git/worktrees a link to a folder of the user's. git
// worktree add, run on the repository's own folder, would write the new
// worktree's git folder (HEAD, index, gitdir...) there, outside the
// workspace; Create refuses instead, and the folder stays as it was. With
// the link gone, Create works again.
func TestCreateWritesNothingThroughALinkedWorktreesFolder(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "a\n"})
	victim := t.TempDir()
	write(t, victim, "keep.txt", "mine\n")
	os.RemoveAll(filepath.Join(root, ".git", "worktrees"))
	if err := os.Symlink(victim, filepath.Join(root, ".git", "worktrees")); err != nil {
		t.Fatal(err)
	}
	m := open(t, root, t.TempDir())
	if _, err := m.Create(ctx, "w1", nil); err == nil {
		t.Error("Create through a linked .git/worktrees succeeded")
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 1 || ents[0].Name() != "keep.txt" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("the linked folder changed: %v", names)
	}
	if ws, _ := m.List(); len(ws) != 0 {
		t.Errorf("a failed Create left %d worktrees registered", len(ws))
	}
	os.Remove(filepath.Join(root, ".git", "worktrees"))
	w, err := m.Create(ctx, "w2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.AdminDir != filepath.Join(root, ".git", "worktrees", "w2") || read(t, w.Dir, "a.txt") != "a\n" {
		t.Errorf("worktree %+v", w)
	}
	if got := strings.TrimSpace(git(t, w.Dir, "rev-parse", "--git-dir")); got != w.AdminDir {
		t.Errorf("the worktree's own git sees %s, want %s", got, w.AdminDir)
	}
	if err := m.Discard(ctx, "w2"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(w.AdminDir); err == nil {
		t.Error("Discard left the git folder")
	}
}

// TestCommitLeavesAGitTheAgentCanUse: the runtime's git writes into a
// private store and the runtime moves the result in (gitx write.go); the
// worktree must then look to git (the agent's own, in the sandbox) as a
// plain commit would leave it: HEAD on the task branch at the commit, a
// clean status, the objects in the repository, and no reflog written.
func TestCommitLeavesAGitTheAgentCanUse(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"})
	m := open(t, root, t.TempDir())
	w, err := m.Create(ctx, "impl", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(git(t, w.Dir, "symbolic-ref", "HEAD")); got != "refs/heads/task-x/impl" {
		t.Fatalf("new worktree's HEAD %q", got)
	}
	if out := git(t, w.Dir, "status", "--porcelain"); out != "" {
		t.Fatalf("new worktree not clean:\n%s", out)
	}
	write(t, w.Dir, "a.txt", "ONE\n")
	write(t, w.Dir, "c.txt", "see\n")
	c, err := m.Commit(ctx, "impl", "work")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(git(t, w.Dir, "rev-parse", "HEAD")); got != c.Head || c.Head == c.Start {
		t.Fatalf("worktree HEAD %s, change %+v", got, c)
	}
	if out := git(t, w.Dir, "status", "--porcelain"); out != "" {
		t.Fatalf("worktree not clean after the commit (index not moved in):\n%s", out)
	}
	if got := git(t, root, "show", "task-x/impl:c.txt"); got != "see\n" {
		t.Fatalf("the main repository reads c.txt at the branch as %q", got)
	}
	git(t, root, "fsck", "--no-dangling")
	for _, p := range []string{"logs/refs/heads/task-x", "worktrees/impl/logs"} {
		if _, err := os.Lstat(filepath.Join(root, ".git", p)); err == nil {
			t.Errorf(".git/%s written: the runtime writes no reflog", p)
		}
	}
	// The agent commits in the worktree itself; the runtime's next
	// commit goes on top.
	write(t, w.Dir, "b.txt", "BEE\n")
	git(t, w.Dir, "commit", "-qam", "agent")
	write(t, w.Dir, "d.txt", "dee\n")
	c, err = m.Commit(ctx, "impl", "more")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 4 || git(t, root, "show", "task-x/impl:b.txt") != "BEE\n" {
		t.Fatalf("change after the agent's commit %+v", c.Files)
	}
	if err := m.Discard(ctx, "impl"); err != nil {
		t.Fatal(err)
	}
	if out := git(t, root, "branch", "--list", "task-x/*"); strings.TrimSpace(out) != "" {
		t.Fatalf("branch left: %s", out)
	}
}

// TestDiscardPackedBranch: a branch git packed (gc in the sandbox) is
// deleted from packed-refs, the other refs kept.
func TestDiscardPackedBranch(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "one\n"})
	m := open(t, root, t.TempDir())
	for _, n := range []string{"p1", "p2"} {
		if _, err := m.Create(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	git(t, root, "pack-refs", "--all")
	if err := m.Discard(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	out := git(t, root, "for-each-ref", "--format=%(refname)")
	if strings.Contains(out, "task-x/p1") || !strings.Contains(out, "task-x/p2") {
		t.Fatalf("refs after discarding p1:\n%s", out)
	}
	git(t, root, "fsck", "--no-dangling")
}

// TestOpenOfALinkedWorktreeProject: a workspace that is a user's linked
// worktree (its .git a file naming a git folder outside the workspace
// that names it back) opens, and its task worktrees go to the main
// repository; a .git file naming another repository is refused.
func TestOpenOfALinkedWorktreeProject(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "one\n"})
	u := filepath.Join(t.TempDir(), "u")
	git(t, root, "worktree", "add", "-q", "-b", "ubranch", u)
	m := open(t, u, t.TempDir())
	w, err := m.Create(ctx, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(git(t, root, "rev-parse", "task-x/x")); got != w.Base {
		t.Fatalf("branch %s, base %s", got, w.Base)
	}
	other := repo(t, map[string]string{"o.txt": "o\n"})
	ws := t.TempDir()
	write(t, ws, ".git", "gitdir: "+filepath.Join(other, ".git")+"\n")
	if _, err := Open(ws, &Options{DataDir: t.TempDir(), StateDir: t.TempDir()}); err == nil {
		t.Fatal("a .git file naming another repository was accepted")
	}
	// Nor the git folder of another worktree of the same repository.
	v := filepath.Join(t.TempDir(), "v")
	git(t, root, "worktree", "add", "-q", "-b", "vbranch", v)
	write(t, ws, ".git", "gitdir: "+filepath.Join(root, ".git", "worktrees", "v")+"\n")
	if _, err := Open(ws, &Options{DataDir: t.TempDir(), StateDir: t.TempDir()}); err == nil {
		t.Fatal("a .git file naming another worktree's git folder was accepted")
	}
}

// TestCommitAfterTheAgentSplitTheIndex: an agent may run `git
// update-index --split-index` in its worktree; the runtime's commit reads
// that index through its private copy (the shared index file with it).
func TestCommitAfterTheAgentSplitTheIndex(t *testing.T) {
	ctx := context.Background()
	root := repo(t, map[string]string{"a.txt": "one\n"})
	m := open(t, root, t.TempDir())
	w, err := m.Create(ctx, "split", nil)
	if err != nil {
		t.Fatal(err)
	}
	git(t, w.Dir, "update-index", "--split-index")
	write(t, w.Dir, "b.txt", "bee\n")
	c, err := m.Commit(ctx, "split", "work")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 1 || c.Files[0].Path != "b.txt" {
		t.Fatalf("change %+v", c.Files)
	}
	if out := git(t, w.Dir, "status", "--porcelain"); out != "" {
		t.Fatalf("worktree not clean after the commit:\n%s", out)
	}
}
