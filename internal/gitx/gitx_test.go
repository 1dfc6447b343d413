package gitx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// plantedRepo is a repository where a sandboxed command planted every
// repository-controlled program git could run during status: an fsmonitor,
// a clean filter and a textconv selected by .gitattributes and
// .git/info/attributes, hooks, a pager, an include of a file with more of
// the same, and a worktree config. Each writes a file under marks when run.
func plantedRepo(t *testing.T) (root, marks string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root = t.TempDir()
	marks = t.TempDir()
	git(t, root, "init", "-q", ".")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
	git(t, root, "add", "a.txt")
	git(t, root, "commit", "-qm", "init")
	prog := func(name string) string {
		p := filepath.Join(marks, "run-"+name+".sh")
		os.WriteFile(p, []byte("#!/bin/sh\ntouch "+filepath.Join(marks, "PWNED-"+name)+"\ncat\n"), 0o755)
		return p
	}
	os.WriteFile(filepath.Join(root, ".gitattributes"), []byte("* filter=evil diff=evil\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".git", "info", "attributes"), []byte("* filter=evil2\n"), 0o644)
	inc := filepath.Join(marks, "inc.cfg")
	os.WriteFile(inc, []byte("[filter \"evil2\"]\n\tclean = "+prog("include")+"\n"), 0o644)
	f, err := os.OpenFile(filepath.Join(root, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[core]\n\tfsmonitor = " + prog("fsmonitor") + "\n\tpager = " + prog("pager") +
		"\n\tsshCommand = " + prog("ssh") + "\n[filter \"evil\"]\n\tclean = " + prog("clean") +
		"\n\tprocess = " + prog("process") + "\n[diff \"evil\"]\n\ttextconv = " + prog("textconv") +
		"\n[include]\n\tpath = " + inc + "\n[extensions]\n\tworktreeConfig = true\n")
	f.Close()
	os.WriteFile(filepath.Join(root, ".git", "config.worktree"), []byte("[core]\n\tfsmonitor = "+prog("worktree")+"\n"), 0o644)
	for _, h := range []string{"pre-commit", "post-checkout", "post-index-change", "reference-transaction"} {
		os.WriteFile(filepath.Join(root, ".git", "hooks", h), []byte("#!/bin/sh\ntouch "+filepath.Join(marks, "PWNED-hook-"+h)+"\n"), 0o755)
	}
	// A stat change with the same size makes status read the content
	// (through the clean filter) to tell whether it changed.
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("two\n"), 0o644)
	return root, marks
}

func pwned(t *testing.T, marks string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(marks, "PWNED-*"))
	return m
}

// The attack works on a plain git: the test's planted programs are real.
func TestPlantedProgramsRunInPlainGit(t *testing.T) {
	root, marks := plantedRepo(t)
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = root
	cmd.Run()
	if len(pwned(t, marks)) == 0 {
		t.Fatal("plain git status ran none of the planted programs: the attack test proves nothing")
	}
}

func TestRepoRunsNothingPlanted(t *testing.T) {
	root, marks := plantedRepo(t)
	r, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	out, err := r.Command(ctx, "status", "--porcelain", "--untracked-files=normal").Output()
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	if !strings.Contains(string(out), " M a.txt") || !strings.Contains(string(out), "?? .gitattributes") {
		t.Errorf("status = %q, want a.txt modified and .gitattributes untracked", out)
	}
	for _, args := range [][]string{{"rev-parse", "--short", "HEAD"}, {"symbolic-ref", "--short", "-q", "HEAD"},
		{"diff", "HEAD"}, {"log", "-p", "-1"}, {"add", "a.txt"}, {"commit", "-qm", "x", "--author", "t <t@t>"}} {
		cmd := r.Command(ctx, args...)
		cmd.Env = append(cmd.Env, "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	if m := pwned(t, marks); len(m) > 0 {
		t.Fatalf("the runtime's git ran planted programs: %v", m)
	}
}

// The config is read once, into the snapshot: a config planted after Open
// is never read by the commands of that Repo.
func TestRepoIgnoresConfigWrittenAfterOpen(t *testing.T) {
	root, marks := plantedRepo(t)
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\trepositoryformatversion = 0\n"), 0o644)
	r, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\tfsmonitor = "+filepath.Join(marks, "run-fsmonitor.sh")+"\n"), 0o644)
	if err := r.Command(context.Background(), "status", "--porcelain").Run(); err != nil {
		t.Fatal(err)
	}
	if m := pwned(t, marks); len(m) > 0 {
		t.Fatalf("ran %v", m)
	}
}

func TestEnvHoldsNoKey(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-test-secret")
	t.Setenv("GIT_DIR", "/elsewhere")
	t.Setenv("GIT_EXTERNAL_DIFF", "/bin/evil")
	for _, kv := range Env() {
		if strings.Contains(kv, "sk-test-secret") || strings.HasPrefix(kv, "GIT_DIR=") || strings.HasPrefix(kv, "GIT_EXTERNAL_DIFF=") {
			t.Errorf("Env holds %q", kv)
		}
	}
}

func TestSafeConfig(t *testing.T) {
	in := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tfsmonitor = /x\n\tworktree = /elsewhere\n" +
		"[core \"x\"]\n\tfilemode = true\n[filter \"a\"]\n\tclean = /x\n[include]\n\tpath = /x\n" +
		"[includeIf \"gitdir:/\"]\n\tpath = /x\n[extensions]\n\tworktreeConfig = true\n\tobjectFormat = sha1\n" +
		"[core]\n\tautocrlf = \"true\" # c\n\teol = lf\\\n[remote \"o\"]\n\turl = ext::sh\n"
	got := string(SafeConfig([]byte(in)))
	want := "[core]\n\trepositoryformatversion = 0\n[core]\n\tfilemode = true\n[extensions]\n\tobjectformat = sha1\n"
	if got != want {
		t.Errorf("SafeConfig =\n%s\nwant\n%s", got, want)
	}
}

func TestOpenNoRepo(t *testing.T) {
	if _, err := Open(t.TempDir()); err != ErrNoRepo {
		t.Errorf("Open = %v, want ErrNoRepo", err)
	}
}

func TestLinkedWorktree(t *testing.T) {
	root, marks := plantedRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, root, "worktree", "add", "-q", wt)
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("six\n"), 0o644)
	for _, m := range pwned(t, marks) { // the set-up's own git ran them
		os.Remove(m)
	}
	r, err := Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, err := r.Command(context.Background(), "status", "--porcelain").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), " M a.txt") {
		t.Errorf("status = %q", out)
	}
	if m := pwned(t, marks); len(m) > 0 {
		t.Fatalf("ran %v", m)
	}
}

// TestStagePathsIsAddAllWithoutNestedRepos: StagePaths stages what
// `git add -A` would (a change, a deletion, a new file, a file in a new
// folder, a folder that became a file), leaves ignored files out, and
// never goes into a nested repository: a gitlink whose work tree changed
// and an untracked repository stay as they were, and the nested
// repository's clean filter does not run (git add -A runs it).
func TestStagePathsIsAddAllWithoutNestedRepos(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, marks := t.TempDir(), t.TempDir()
	w := func(rel, content string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755)
		os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644)
	}
	git(t, root, "init", "-q", ".")
	w("a.txt", "a\n")
	w("gone.txt", "g\n")
	w("d/x.txt", "x\n")
	w(".gitignore", "*.log\n")
	git(t, root, "add", "-A")
	nest := filepath.Join(root, "nest")
	os.MkdirAll(nest, 0o755)
	git(t, nest, "init", "-q", ".")
	w("nest/.gitattributes", "* filter=evil\n")
	w("nest/f.txt", "hello\n")
	git(t, nest, "add", "-A")
	git(t, nest, "commit", "-qm", "n")
	git(t, root, "add", "nest")
	git(t, root, "commit", "-qm", "init")
	git(t, nest, "config", "filter.evil.clean", "touch "+filepath.Join(marks, "PWNED-clean")+"; cat")
	other := filepath.Join(root, "other")
	os.MkdirAll(other, 0o755)
	git(t, other, "init", "-q", ".")
	git(t, other, "commit", "-q", "--allow-empty", "-m", "o")

	w("a.txt", "A\n")
	os.Remove(filepath.Join(root, "gone.txt"))
	w("new.txt", "n\n")
	w("sub/deep.txt", "s\n")
	w("debug.log", "l\n")
	os.RemoveAll(filepath.Join(root, "d"))
	w("d", "now a file\n")
	w("nest/f.txt", "jello\n")
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(nest, "f.txt"), later, later)

	r, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	if _, err := r.StagePaths(ctx); err != nil {
		t.Fatal(err)
	}
	if m := pwned(t, marks); len(m) > 0 {
		t.Fatalf("StagePaths ran the nested repository's filter: %v", m)
	}
	out, err := r.Run(ctx, "diff", "--cached", "--name-status", "--no-renames")
	if err != nil {
		t.Fatal(err)
	}
	want := "M\ta.txt\nA\td\nD\td/x.txt\nD\tgone.txt\nA\tnew.txt\nA\tsub/deep.txt\n"
	if out != want {
		t.Errorf("staged:\n%s\nwant:\n%s", out, want)
	}
	// Control: git add -A runs the planted filter.
	cmd := exec.Command("git", "add", "-A")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	cmd.Run()
	if len(pwned(t, marks)) == 0 {
		t.Error("git add -A did not run the nested repository's filter: the test proves nothing")
	}
}
