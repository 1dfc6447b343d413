package gitx_test

// The escape matrix of issue 32: every place the runtime runs git (a call
// site) against every way a sandboxed command could make that git run its
// code or lie (a plant), each plant put in every repository a sandboxed
// command can write: the workspace's .git, a nested repository committed as
// a gitlink, a submodule (.gitmodules, its git folder in .git/modules), the
// git folder of a linked worktree (a user's, opened as a project, and the
// task's), and the .gitattributes / info/attributes that name drivers. A
// plant's program writes a marker file outside every repository when it
// runs; a pair passes when no marker appeared, nothing outside was touched
// and the call site's answer (git state, worktree files, patch, applied
// content) is the one of the same tree without the plant.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/workspace"
	"github.com/task-x/task-x-runtime/internal/worktree"
)

// fixture is a workspace repository W with a nested repository committed as
// a gitlink (nest), a submodule (mod, its git folder in .git/modules/mod)
// and a user's linked worktree U, plus a folder of markers (out), of
// scripts (bin) and a victim folder outside every repository.
type fixture struct {
	w, u, sub, alt, evil string
	out, bin, victim     string
	// tasks are the task worktrees the call site made (planted too).
	tasks []string
	m     *worktree.Manager
	head  string // W's HEAD commit
	// plant is the plant's name; refreshWS the workspace a refresh call
	// site opened before the plant.
	plant     string
	refreshWS *workspace.Workspace
}

const (
	baseA = "one\ntwo\nthree\nfour\nfive\n"
	baseB = "bee\n"
)

var drivers = "* filter=evil diff=evil merge=evil\n"

// tgit is the test's own git: isolated from the machine's config, hooks
// off, and never run after a plant (the plants would run).
func tgit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.hooksPath=/dev/null",
		"-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main", "-c", "core.fsmonitor=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_NO_REPLACE_OBJECTS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t testing.TB, p, content string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}

// newFixture copies the template fixture (made once per test run: a
// fixture takes some 30 git commands) into a folder of its own.
func newFixture(t *testing.T, tmpl *fixture) *fixture {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	old := filepath.Dir(tmpl.w)
	copyTree(t, old, base)
	fx := fixtureAt(base)
	fx.head = tmpl.head
	// The linked worktree's two absolute links.
	for _, p := range []string{filepath.Join(fx.u, ".git"), filepath.Join(fx.w, ".git", "worktrees", "u", "gitdir")} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, strings.ReplaceAll(string(b), old, base))
	}
	return fx
}

func fixtureAt(base string) *fixture {
	return &fixture{w: filepath.Join(base, "w"), u: filepath.Join(base, "u"), sub: filepath.Join(base, "sub"),
		alt: filepath.Join(base, "alt"), evil: filepath.Join(base, "evil"), out: filepath.Join(base, "out"),
		bin: filepath.Join(base, "bin"), victim: filepath.Join(base, "victim")}
}

func makeTemplate(t *testing.T) *fixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	fx := fixtureAt(base)
	for _, d := range []string{fx.w, fx.sub, fx.alt, fx.evil, fx.out, fx.bin, fx.victim} {
		os.MkdirAll(d, 0o755)
	}
	writeFile(t, filepath.Join(fx.victim, "keep.txt"), "mine\n")
	writeFile(t, filepath.Join(fx.victim, "dir", "keep.txt"), "mine\n")
	// The submodule's origin, the alternate's and the evil repository.
	for _, d := range []string{fx.sub, fx.alt, fx.evil} {
		tgit(t, d, "init", "-q", ".")
		writeFile(t, filepath.Join(d, "g.txt"), "hello\n")
		writeFile(t, filepath.Join(d, ".gitattributes"), drivers)
		tgit(t, d, "add", "-A")
		tgit(t, d, "commit", "-qm", "init")
	}
	w := fx.w
	tgit(t, w, "init", "-q", ".")
	writeFile(t, filepath.Join(w, "a.txt"), baseA)
	writeFile(t, filepath.Join(w, "b.txt"), baseB)
	writeFile(t, filepath.Join(w, ".gitattributes"), drivers)
	// The nested repository, committed as a gitlink (no .gitmodules).
	nest := filepath.Join(w, "nest")
	os.MkdirAll(nest, 0o755)
	tgit(t, nest, "init", "-q", ".")
	writeFile(t, filepath.Join(nest, "f.txt"), "hello\n")
	writeFile(t, filepath.Join(nest, ".gitattributes"), drivers)
	tgit(t, nest, "add", "-A")
	tgit(t, nest, "commit", "-qm", "nest")
	tgit(t, w, "add", "a.txt", "b.txt", ".gitattributes", "nest")
	tgit(t, w, "submodule", "add", "-q", "./../sub", "mod")
	tgit(t, w, "commit", "-qm", "init")
	fx.head = tgit(t, w, "rev-parse", "HEAD")
	// A user's linked worktree (opened as a project by one call site).
	tgit(t, w, "worktree", "add", "-q", "-b", "ubranch", fx.u)
	// The workspace's own changes: one modified file, one untracked.
	writeFile(t, filepath.Join(w, "a.txt"), "ONE\ntwo\nthree\nfour\nfive\n")
	writeFile(t, filepath.Join(w, "new.txt"), "new\n")
	return fx
}

func (fx *fixture) manager(t *testing.T) *worktree.Manager {
	t.Helper()
	if fx.m == nil {
		m, err := worktree.Open(fx.w, &worktree.Options{DataDir: filepath.Join(filepath.Dir(fx.w), "data"), StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		fx.m = m
	}
	return fx.m
}

// loc is one repository a plant goes into: its git folder and, when it
// has one, its work tree.
type loc struct {
	name     string
	gitDir   string
	workTree string
	// config is the file the plant's settings go to (gitDir/config, or a
	// linked worktree's config.worktree).
	config string
	// common is false for a linked worktree's own folder (no objects,
	// hooks or refs of its own).
	common bool
}

// script returns the program of location l: it writes a marker into out
// and copies its input to its output (a filter still works).
func (fx *fixture) script(t testing.TB, l loc) string {
	p := filepath.Join(fx.bin, l.name+".sh")
	if _, err := os.Stat(p); err != nil {
		writeFile(t, p, fmt.Sprintf("#!/bin/sh\necho \"$0 $*\" > %q/%s-$$-$(date +%%N)\ncat\n", fx.out, l.name))
		os.Chmod(p, 0o755)
	}
	return p
}

// locations are the repositories a sandboxed command can write, as they
// stand now (the task worktrees made so far included). Planting also does
// what the attacker does around it: fills the gitlink and the submodule of
// every linked worktree with a repository (a checkout leaves them empty)
// and changes a file in each nested work tree without changing its size.
func (fx *fixture) locations(t *testing.T) []loc {
	t.Helper()
	w := fx.w
	ls := []loc{{name: "workspace", gitDir: filepath.Join(w, ".git"), workTree: w, config: filepath.Join(w, ".git", "config"), common: true}}
	nests := []string{filepath.Join(w, "nest")}
	mods := []string{filepath.Join(w, "mod")}
	for _, wt := range append([]string{fx.u}, fx.tasks...) {
		n := filepath.Join(wt, "nest")
		if _, err := os.Stat(filepath.Join(n, ".git")); err != nil {
			copyTree(t, filepath.Join(w, "nest"), n)
		}
		nests = append(nests, n)
		md := filepath.Join(wt, "mod")
		if _, err := os.Stat(filepath.Join(md, ".git")); err != nil {
			writeFile(t, filepath.Join(md, ".git"), "gitdir: "+filepath.Join(w, ".git", "modules", "mod")+"\n")
			writeFile(t, filepath.Join(md, "g.txt"), "hello\n")
			writeFile(t, filepath.Join(md, ".gitattributes"), drivers)
		}
		mods = append(mods, md)
	}
	for i, n := range nests {
		ls = append(ls, loc{name: fmt.Sprintf("gitlink%d", i), gitDir: filepath.Join(n, ".git"), workTree: n, config: filepath.Join(n, ".git", "config"), common: true})
	}
	ls = append(ls, loc{name: "submodule", gitDir: filepath.Join(w, ".git", "modules", "mod"), workTree: filepath.Join(w, "mod"),
		config: filepath.Join(w, ".git", "modules", "mod", "config"), common: true})
	// Every linked worktree's git folder, with worktree config turned on.
	ents, _ := os.ReadDir(filepath.Join(w, ".git", "worktrees"))
	for _, e := range ents {
		d := filepath.Join(w, ".git", "worktrees", e.Name())
		l := loc{name: "wtgitdir-" + e.Name(), gitDir: d, config: filepath.Join(d, "config.worktree")}
		if b, err := os.ReadFile(filepath.Join(d, "gitdir")); err == nil {
			if wt := filepath.Dir(strings.TrimSpace(string(b))); slices.Contains(fx.tasks, wt) {
				l.workTree = wt
			}
		}
		ls = append(ls, l)
	}
	if len(ents) > 0 {
		appendFile(t, filepath.Join(w, ".git", "config"), "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n")
	}
	// A task worktree's .git file pointed at another repository.
	for _, wt := range fx.tasks {
		writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(fx.evil, ".git")+"\n")
	}
	if len(fx.tasks) > 0 {
		ls = append(ls, loc{name: "evilgitdir", gitDir: filepath.Join(fx.evil, ".git"), workTree: fx.evil, config: filepath.Join(fx.evil, ".git", "config"), common: true})
	}
	// info/attributes naming the drivers, in every git folder.
	for _, l := range ls {
		if l.common {
			writeFile(t, filepath.Join(l.gitDir, "info", "attributes"), drivers)
		}
	}
	return ls
}

// touchNested changes a file of each nested work tree, keeping its size,
// so that a git that looks into them must read them (clean filter).
func (fx *fixture) touchNested(t *testing.T) {
	later := time.Now().Add(5 * time.Second)
	for _, wt := range append([]string{fx.w, fx.u}, fx.tasks...) {
		for _, f := range []string{"nest/f.txt", "mod/g.txt"} {
			p := filepath.Join(wt, f)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			writeFile(t, p, "jello\n")
			os.Chtimes(p, later, later)
		}
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		return os.WriteFile(target, b, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// plant is one thing a sandboxed command can put in a repository to make
// the runtime's git run its program (or answer wrong).
type plant struct {
	name    string
	install func(t *testing.T, fx *fixture, l loc)
}

var hookNames = []string{"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push",
	"pre-receive", "update", "proc-receive", "post-receive", "post-update", "reference-transaction",
	"push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman",
	"p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change"}

func config(t *testing.T, l loc, text string) { appendFile(t, l.config, text) }

var plants = []plant{
	{"filter-clean", func(t *testing.T, fx *fixture, l loc) {
		config(t, l, fmt.Sprintf("[filter \"evil\"]\n\tclean = %s clean\n", fx.script(t, l)))
	}},
	{"filter-smudge", func(t *testing.T, fx *fixture, l loc) {
		config(t, l, fmt.Sprintf("[filter \"evil\"]\n\tsmudge = %s smudge\n", fx.script(t, l)))
	}},
	{"filter-process", func(t *testing.T, fx *fixture, l loc) {
		config(t, l, fmt.Sprintf("[filter \"evil\"]\n\tprocess = %s process\n", fx.script(t, l)))
	}},
	{"textconv", func(t *testing.T, fx *fixture, l loc) {
		config(t, l, fmt.Sprintf("[diff \"evil\"]\n\ttextconv = %s textconv\n\tcommand = %s command\n", fx.script(t, l), fx.script(t, l)))
	}},
	{"diff-external", func(t *testing.T, fx *fixture, l loc) {
		config(t, l, fmt.Sprintf("[diff]\n\texternal = %s external\n", fx.script(t, l)))
	}},
	{"fsmonitor", func(t *testing.T, fx *fixture, l loc) {
		config(t, l, fmt.Sprintf("[core]\n\tfsmonitor = %s fsmonitor\n", fx.script(t, l)))
	}},
	{"hooks", func(t *testing.T, fx *fixture, l loc) {
		dir := filepath.Join(fx.bin, "hooks-"+l.name)
		for _, h := range hookNames {
			writeFile(t, filepath.Join(dir, h), "#!/bin/sh\nexec "+fx.script(t, l)+" hook-"+h+" \"$@\"\n")
			os.Chmod(filepath.Join(dir, h), 0o755)
			if l.common {
				writeFile(t, filepath.Join(l.gitDir, "hooks", h), "#!/bin/sh\nexec "+fx.script(t, l)+" hook-"+h+" \"$@\"\n")
				os.Chmod(filepath.Join(l.gitDir, "hooks", h), 0o755)
			}
		}
		config(t, l, fmt.Sprintf("[core]\n\thooksPath = %s\n", dir))
	}},
	{"sshCommand", func(t *testing.T, fx *fixture, l loc) {
		config(t, l, fmt.Sprintf("[core]\n\tsshCommand = %s ssh\n[remote \"origin\"]\n\turl = ssh://example.invalid/x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"+
			"[submodule]\n\trecurse = true\n[fetch]\n\trecurseSubmodules = true\n", fx.script(t, l)))
	}},
	{"includeIf", func(t *testing.T, fx *fixture, l loc) {
		inc := filepath.Join(fx.bin, "inc-"+l.name+".cfg")
		s := fx.script(t, l)
		writeFile(t, inc, fmt.Sprintf("[filter \"evil\"]\n\tclean = %[1]s clean\n\tsmudge = %[1]s smudge\n[diff \"evil\"]\n\ttextconv = %[1]s textconv\n"+
			"[core]\n\tfsmonitor = %[1]s fsmonitor\n\tpager = %[1]s pager\n[diff]\n\texternal = %[1]s external\n[merge \"evil\"]\n\tdriver = %[1]s merge %%O %%A %%B\n", s))
		config(t, l, fmt.Sprintf("[includeIf \"gitdir:/\"]\n\tpath = %[1]s\n[include]\n\tpath = %[1]s\n", inc))
	}},
	{"pager-editor", func(t *testing.T, fx *fixture, l loc) {
		s := fx.script(t, l)
		config(t, l, fmt.Sprintf("[core]\n\tpager = %[1]s pager\n\teditor = %[1]s editor\n\taskPass = %[1]s askpass\n[sequence]\n\teditor = %[1]s seq\n"+
			"[pager]\n\tstatus = %[1]s pager\n\tdiff = %[1]s pager\n[gpg]\n\tprogram = %[1]s\n[commit]\n\tgpgSign = true\n[credential]\n\thelper = %[1]s\n", s))
	}},
	{"alternates", func(t *testing.T, fx *fixture, l loc) {
		if !l.common {
			return
		}
		// Objects of another repository become visible; it holds a planted
		// config too (git must not read it through the alternate).
		config(t, loc{config: filepath.Join(fx.alt, ".git", "config")}, fmt.Sprintf("[core]\n\tfsmonitor = %s alt\n", fx.script(t, l)))
		appendFile(t, filepath.Join(l.gitDir, "objects", "info", "alternates"), filepath.Join(fx.alt, ".git", "objects")+"\n")
	}},
	{"replace-refs", func(t *testing.T, fx *fixture, l loc) {
		if !l.common || l.workTree == "" {
			return
		}
		replaceHead(t, l)
	}},
	{"merge-driver", func(t *testing.T, fx *fixture, l loc) {
		config(t, l, fmt.Sprintf("[merge \"evil\"]\n\tdriver = %s merge %%O %%A %%B\n\trecursive = evil\n[merge]\n\ttool = evil\n[mergetool \"evil\"]\n\tcmd = %s mergetool\n",
			fx.script(t, l), fx.script(t, l)))
	}},
	{"worktrees-link", func(t *testing.T, fx *fixture, l loc) {
		// An entry of .git/worktrees that is a link to a folder of the
		// user's: `git worktree prune` (and gc) would empty it.
		if l.name != "workspace" {
			return
		}
		os.MkdirAll(filepath.Join(l.gitDir, "worktrees"), 0o755)
		if err := os.Symlink(fx.victim, filepath.Join(l.gitDir, "worktrees", "evil")); err != nil {
			t.Fatal(err)
		}
	}},
	{"attributes", func(t *testing.T, fx *fixture, l loc) {
		// Attributes that change what a patch shows: every file binary,
		// no diff, CRLF line ends.
		attrs := "* binary -diff eol=crlf\n"
		if l.common {
			writeFile(t, filepath.Join(l.gitDir, "info", "attributes"), attrs)
		}
		if strings.HasPrefix(l.name, "wtgitdir-") && l.workTree != "" {
			appendFile(t, filepath.Join(l.workTree, ".gitattributes"), attrs)
		}
	}},
}

// replaceHead makes HEAD's commit of the repository at l read as another
// commit (refs/replace) whose tree differs: every file reads "evil".
func replaceHead(t *testing.T, l loc) {
	t.Helper()
	env := []string{"GIT_DIR=" + l.gitDir, "GIT_WORK_TREE=" + l.workTree, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index"), "PATH=" + os.Getenv("PATH")}
	run := func(in string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}, args...)...)
		cmd.Env = env
		cmd.Dir = l.workTree
		cmd.Stdin = strings.NewReader(in)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	blob := run("evil\n", "hash-object", "-w", "--stdin")
	run("", "read-tree", "HEAD")
	for _, line := range strings.Split(run("", "ls-files", "-s"), "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] != "160000" {
			run("", "update-index", "--cacheinfo", f[0]+","+blob+","+f[3])
		}
	}
	tree := run("", "write-tree")
	head := run("", "rev-parse", "HEAD")
	fake := run("", "commit-tree", tree, "-m", "evil")
	run("", "update-ref", "refs/replace/"+head, fake)
}

// callSite runs one place where the runtime runs git. prepare does what
// must happen before the plant (a worktree the call works on); call runs
// the runtime and checks its answer.
type callSite struct {
	name    string
	prepare func(t *testing.T, fx *fixture)
	// call returns the call's answer, the same for the same tree, and
	// an error when it is not the right one.
	call func(t *testing.T, fx *fixture) (string, error)
}

func gitState(s workspace.Summary) workspace.GitInfo {
	if s.Project.Git == nil {
		return workspace.GitInfo{Branch: "<none>"}
	}
	return *s.Project.Git
}

func wantGit(fx *fixture, got workspace.GitInfo, branch string, dirty int) error {
	want := workspace.GitInfo{Branch: branch, Head: fx.head[:len(got.Head)], Dirty: dirty}
	if len(got.Head) < 7 || got != want {
		return fmt.Errorf("git state %+v, want %+v", got, want)
	}
	return nil
}

// taskChange makes task worktree t1 with a.txt's last line changed (and
// b.txt unless keepB), not committed yet.
func (fx *fixture) task(t *testing.T, name string) string {
	t.Helper()
	w, err := fx.manager(t).Create(context.Background(), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	fx.tasks = append(fx.tasks, w.Dir)
	return w.Dir
}

// wantChange checks a worktree change: a.txt's last line, and the paths
// the plant added (a committed .gitattributes).
func wantChange(c worktree.Change, extra ...string) error {
	var paths []string
	for _, f := range c.Files {
		paths = append(paths, f.Path)
		if f.Path == "a.txt" && (f.Added != 1 || f.Removed != 1 || f.Binary) {
			return fmt.Errorf("a.txt counted %+v, want 1 added 1 removed", f)
		}
	}
	want := append([]string{"a.txt"}, extra...)
	slices.Sort(want)
	slices.Sort(paths)
	if !slices.Equal(paths, want) {
		return fmt.Errorf("change of %v, want %v", paths, want)
	}
	if p := filePatch(c.Patch, "a.txt"); !strings.Contains(p, "-five\n+FIVE\n") || strings.Contains(p, "evil") || strings.Contains(p, "Binary") {
		return fmt.Errorf("patch is not a.txt's change:\n%s", c.Patch)
	}
	return nil
}

// filePatch is the part of a patch about path.
func filePatch(patch, path string) string {
	head := "diff --git a/" + path + " b/" + path + "\n"
	i := strings.Index(patch, head)
	if i < 0 {
		return ""
	}
	rest := patch[i+len(head):]
	if j := strings.Index(rest, "\ndiff --git "); j >= 0 {
		rest = rest[:j+1]
	}
	return head + rest
}

// blobAt reads path at commit in W's repository (no filter, no replace).
func blobAt(t *testing.T, fx *fixture, commit, path string) string {
	cmd := exec.Command("git", "cat-file", "blob", commit+":"+path)
	cmd.Env = []string{"GIT_DIR=" + filepath.Join(fx.w, ".git"), "GIT_NO_REPLACE_OBJECTS=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(out)
}

func readFile(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func gitAnswer(fx *fixture, s workspace.Summary, branch string, dirty int) (string, error) {
	g := gitState(s)
	return fmt.Sprintf("%+v", g), wantGit(fx, g, branch, dirty)
}

// changeAnswer is a change's answer about a.txt (the paths a plant adds
// are checked by wantChange, not compared).
func changeAnswer(c worktree.Change, extra ...string) (string, error) {
	var files []worktree.Stat
	for _, f := range c.Files {
		if !slices.Contains(extra, f.Path) {
			files = append(files, f)
		}
	}
	return fmt.Sprintf("%+v\n%s", files, filePatch(c.Patch, "a.txt")), wantChange(c, extra...)
}

func openWS(t *testing.T, root string, probe bool) (*workspace.Workspace, error) {
	ctx := context.Background()
	o := &workspace.Options{GitTimeout: 20 * time.Second}
	if probe {
		// As project.Open does: git's commands started before the scan.
		o.Git = workspace.StartGit(ctx, root, nil)
	}
	return workspace.Open(ctx, root, o)
}

var callSites = []callSite{
	{"workspace/open", nil, func(t *testing.T, fx *fixture) (string, error) {
		ws, err := openWS(t, fx.w, true)
		if err != nil {
			return "", err
		}
		return gitAnswer(fx, ws.Summary(), "main", 2)
	}},
	{"workspace/open without probe", nil, func(t *testing.T, fx *fixture) (string, error) {
		ws, err := openWS(t, fx.w, false)
		if err != nil {
			return "", err
		}
		return gitAnswer(fx, ws.Summary(), "main", 2)
	}},
	{"workspace/open of a linked worktree", nil, func(t *testing.T, fx *fixture) (string, error) {
		ws, err := openWS(t, fx.u, true)
		if err != nil {
			return "", err
		}
		return gitAnswer(fx, ws.Summary(), "ubranch", 0)
	}},
	{"workspace/refresh", func(t *testing.T, fx *fixture) {
		ws, err := openWS(t, fx.w, false)
		if err != nil {
			t.Fatal(err)
		}
		fx.refreshWS = ws
	}, func(t *testing.T, fx *fixture) (string, error) {
		writeFile(t, filepath.Join(fx.w, "b.txt"), "BEE\n")
		s, err := fx.refreshWS.Refresh(context.Background())
		if err != nil {
			return "", err
		}
		return gitAnswer(fx, s, "main", 3)
	}},
	{"workspace/filesChanged", func(t *testing.T, fx *fixture) {
		ws, err := openWS(t, fx.w, false)
		if err != nil {
			t.Fatal(err)
		}
		fx.refreshWS = ws
	}, func(t *testing.T, fx *fixture) (string, error) {
		writeFile(t, filepath.Join(fx.w, "b.txt"), "BEE\n")
		s, err := fx.refreshWS.FilesChanged(context.Background(), []string{"b.txt", "nest/f.txt", "mod/g.txt"})
		if err != nil {
			return "", err
		}
		return gitAnswer(fx, s, "main", 3)
	}},
	{"worktree head", nil, func(t *testing.T, fx *fixture) (string, error) {
		h, err := fx.manager(t).Head(context.Background())
		if err != nil {
			return "", err
		}
		if h != fx.head {
			return h, fmt.Errorf("head %s, want %s", h, fx.head)
		}
		return h, nil
	}},
	{"worktree create", nil, func(t *testing.T, fx *fixture) (string, error) {
		w, err := fx.manager(t).Create(context.Background(), "t1", nil)
		if err != nil {
			return "", err
		}
		a, b := readFile(filepath.Join(w.Dir, "a.txt")), readFile(filepath.Join(w.Dir, "b.txt"))
		ans := fmt.Sprintf("base %s a.txt %q b.txt %q", w.Base, a, b)
		if w.Base != fx.head || a != baseA || b != baseB {
			return ans, fmt.Errorf("worktree holds %s, want %s's files", ans, fx.head)
		}
		return ans, nil
	}},
	{"worktree commit", func(t *testing.T, fx *fixture) {
		fx.task(t, "t1")
	}, func(t *testing.T, fx *fixture) (string, error) {
		writeFile(t, filepath.Join(fx.tasks[0], "a.txt"), "one\ntwo\nthree\nfour\nFIVE\n")
		c, err := fx.manager(t).Commit(context.Background(), "t1", "work")
		if err != nil {
			return "", err
		}
		ans, err := changeAnswer(c, fx.attackerPaths()...)
		got := blobAt(t, fx, c.Head, "a.txt")
		ans += "\ncommitted a.txt " + got
		if err == nil && got != "one\ntwo\nthree\nfour\nFIVE\n" {
			err = fmt.Errorf("committed a.txt %q", got)
		}
		return ans, err
	}},
	{"worktree change", func(t *testing.T, fx *fixture) {
		dir := fx.task(t, "t1")
		writeFile(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\nfour\nFIVE\n")
		if _, err := fx.manager(t).Commit(context.Background(), "t1", "work"); err != nil {
			t.Fatal(err)
		}
	}, func(t *testing.T, fx *fixture) (string, error) {
		c, err := fx.manager(t).Change(context.Background(), "t1")
		if err != nil {
			return "", err
		}
		return changeAnswer(c)
	}},
	{"worktree seed", func(t *testing.T, fx *fixture) {
		dir := fx.task(t, "t1")
		writeFile(t, filepath.Join(dir, "b.txt"), "BEE\n")
		if _, err := fx.manager(t).Commit(context.Background(), "t1", "work"); err != nil {
			t.Fatal(err)
		}
		fx.task(t, "t2")
	}, func(t *testing.T, fx *fixture) (string, error) {
		m := fx.manager(t)
		if err := m.Seed(context.Background(), "t2", []string{"t1"}); err != nil {
			return "", err
		}
		w, err := m.Get("t2")
		if err != nil {
			return "", err
		}
		b, cb, ca := readFile(filepath.Join(w.Dir, "b.txt")), blobAt(t, fx, w.Start, "b.txt"), blobAt(t, fx, w.Start, "a.txt")
		ans := fmt.Sprintf("b.txt %q, seed commit's b.txt %q a.txt %q, moved %v", b, cb, ca, w.Start != w.Base)
		if b != "BEE\n" || cb != "BEE\n" || ca != baseA || w.Start == w.Base {
			return ans, fmt.Errorf("seeded %s", ans)
		}
		return ans, nil
	}},
	{"worktree apply", func(t *testing.T, fx *fixture) {
		dir := fx.task(t, "t1")
		writeFile(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\nfour\nFIVE\n")
		if _, err := fx.manager(t).Commit(context.Background(), "t1", "work"); err != nil {
			t.Fatal(err)
		}
	}, func(t *testing.T, fx *fixture) (string, error) {
		log, err := editlog.Open(fx.w, "", nil)
		if err != nil {
			return "", err
		}
		res, err := fx.manager(t).Apply(context.Background(), "t1", log, "task")
		if err != nil {
			return "", err
		}
		a := readFile(filepath.Join(fx.w, "a.txt"))
		ans := fmt.Sprintf("applied %v changed %v conflicts %v a.txt %q", res.Applied, res.Changed, res.Conflicts, a)
		if !res.Applied || len(res.Conflicts) > 0 || a != "ONE\ntwo\nthree\nfour\nFIVE\n" {
			return ans, fmt.Errorf("%s", ans)
		}
		return ans, nil
	}},
	{"worktree discard", func(t *testing.T, fx *fixture) {
		fx.task(t, "t1")
	}, func(t *testing.T, fx *fixture) (string, error) {
		m := fx.manager(t)
		if err := m.Discard(context.Background(), "t1"); err != nil {
			return "", err
		}
		_, dirErr := os.Lstat(fx.tasks[0])
		_, regErr := m.Get("t1")
		_, refErr := os.Stat(filepath.Join(fx.w, ".git", "refs", "heads", "task-x", "t1"))
		_, adminErr := os.Lstat(filepath.Join(fx.w, ".git", "worktrees", "t1"))
		ans := fmt.Sprintf("folder gone %v, unregistered %v, branch gone %v, git folder gone %v", dirErr != nil, regErr != nil, refErr != nil, adminErr != nil)
		if dirErr == nil || regErr == nil || refErr == nil || adminErr == nil {
			return ans, fmt.Errorf("%s", ans)
		}
		return ans, nil
	}},
}

// attackerPaths are the paths the plant adds to a task worktree's change:
// the attributes plant's .gitattributes, which would make the runtime's
// patch show the change as binary.
func (fx *fixture) attackerPaths() []string {
	if fx.plant == "attributes" {
		return []string{".gitattributes"}
	}
	return nil
}

// TestRuntimeGitRunsNoPlant is the matrix: len(callSites) x len(plants)
// pairs, each in a fresh fixture with the plant in every location. A pair
// fails when a planted program ran, a folder outside every repository
// changed, or the call's answer differs from its answer on the same
// fixture without a plant (the baseline, which must be right itself).
func TestRuntimeGitRunsNoPlant(t *testing.T) {
	if testing.Short() {
		t.Skip("the matrix makes a repository per pair")
	}
	tmpl := makeTemplate(t)
	run := func(t *testing.T, cs callSite, pl *plant) (fx *fixture, ans string, err error) {
		fx = newFixture(t, tmpl)
		if pl != nil {
			fx.plant = pl.name
		}
		if cs.prepare != nil {
			cs.prepare(t, fx)
		}
		for _, l := range fx.locations(t) {
			if pl != nil {
				pl.install(t, fx, l)
			}
		}
		fx.touchNested(t)
		clearDir(t, fx.out)
		ans, err = cs.call(t, fx)
		return fx, ans, err
	}
	pairs := 0
	var mu sync.Mutex
	kinds := map[string][]string{}
	fail := func(kind, name string) {
		mu.Lock()
		kinds[kind] = append(kinds[kind], name)
		mu.Unlock()
	}
	bases := make([]string, len(callSites))
	baseErrs := make([]error, len(callSites))
	for i, cs := range callSites {
		t.Run(cs.name+"/baseline", func(t *testing.T) {
			if _, bases[i], baseErrs[i] = run(t, cs, nil); baseErrs[i] != nil {
				t.Errorf("without a plant: %v", baseErrs[i])
			}
		})
	}
	// The pairs run in parallel (GOMAXPROCS at once): each has folders
	// of its own.
	t.Run("pairs", func(t *testing.T) {
		for i, cs := range callSites {
			for _, pl := range plants {
				pairs++
				name := cs.name + "/" + pl.name
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					fx, ans, err := run(t, cs, &pl)
					if ran := listDir(fx.out); len(ran) > 0 {
						fail("ran", name)
						t.Errorf("the runtime's git ran planted programs: %v", ran)
					}
					if got := listDir(fx.victim); !slices.Equal(got, []string{"dir", "keep.txt"}) {
						fail("outside", name)
						t.Errorf("a folder outside every repository changed: %v", got)
					}
					if ans != bases[i] || (err != nil) != (baseErrs[i] != nil) {
						fail("answer", name)
						t.Errorf("answer %q (%v), want %q as without the plant", ans, err, bases[i])
					}
				})
			}
		}
	})
	failed := map[string]bool{}
	for _, ns := range kinds {
		for _, n := range ns {
			failed[n] = true
		}
	}
	t.Logf("%d call sites x %d plants = %d pairs; %d failed: %d ran a planted program, %d changed a folder outside, %d answered otherwise",
		len(callSites), len(plants), pairs, len(failed), len(kinds["ran"]), len(kinds["outside"]), len(kinds["answer"]))
	for k, ns := range kinds {
		t.Logf("%s: %v", k, ns)
	}
}

func clearDir(t *testing.T, d string) {
	ents, _ := os.ReadDir(d)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(d, e.Name()))
	}
}

func listDir(d string) []string {
	ents, _ := os.ReadDir(d)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
