// Package gitx owns every git the runtime itself runs (project detection,
// and the worktree code to come): a command that cannot execute anything the
// repository controls, with a minimal environment.
//
// A sandboxed command may write the workspace's .git folder (commits need
// it), so everything in it is untrusted: .git/config (core.fsmonitor,
// filter drivers, diff drivers and textconv, core.sshCommand, pagers,
// includes), .git/config.worktree, .git/hooks and .git/info/attributes. The
// runtime's git runs outside the sandbox with the runtime's rights, so it
// must never read them. Repo runs git against a private snapshot of the
// repository's common folder: a copy of the config holding only an
// allowlist of inert keys, symlinks to objects, refs, packed-refs,
// info/exclude, shallow and worktrees, and no hooks or info/attributes.
// Git reads that snapshot (GIT_COMMON_DIR), so a config written after the
// snapshot was taken is never read: there is no window between checking and
// running. On top, every command gets -c overrides that neutralise
// repository-controlled execution (fsmonitor, hooksPath=/dev/null,
// sshCommand, pager, editor, credential helpers, gpg, askpass), no system
// or global config, and an environment of PATH, HOME, LC_ALL and the git
// variables set here (no API key, no GIT_* of the runtime's environment).
//
// The rule (issue 32): no git the runtime runs reads configuration,
// attributes or hooks from a repository a sandboxed command could write,
// nor goes into one. A nested repository (a gitlink, a submodule) has a
// config of its own that no snapshot covers, and git reads it as soon as
// it goes in (status of a submodule, add -A): callers pass
// --ignore-submodules=all to status, stage with StagePaths, and read
// commits, trees and blobs with ObjectsCommand (no work tree, so no
// .gitattributes). The matrix in escape_test.go holds every call site of
// the runtime against every plant.
//
// The write side (write.go): no git the runtime runs writes into the
// repository (git follows links planted in refs/, logs/, objects/, a
// worktree's git folder, and its lock files follow a linked index or
// packed-refs). PrivateWrites gives git a private git folder, index and
// object folder; Publish, SetRef and DeleteRef move the result in
// through an os.Root of the common folder, refusing links. Owned refuses
// a .git file that names a repository other than the workspace's own.
//
// Design note: ../../docs/sandbox.md "The runtime's own git", "What the
// runtime's own git may read, and why" and "What the runtime's own git
// may write, and how".
package gitx

import (
	"github.com/task-x/task-x-runtime/internal/fsx"

	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Overrides are the -c settings of every git the runtime runs: each one a
// program or a hook the repository could otherwise choose, a way into
// another repository (submodules), or work git would start on its own
// (automatic gc, which prunes .git/worktrees). They reach the git
// commands git itself starts (GIT_CONFIG_PARAMETERS), and a -c setting
// wins over every config file.
var Overrides = []string{
	"core.fsmonitor=false",
	"core.hooksPath=/dev/null",
	"core.attributesFile=/dev/null",
	"submodule.recurse=false",
	"status.submoduleSummary=false",
	"diff.submodule=short",
	"fetch.recurseSubmodules=false",
	"protocol.allow=never",
	"gc.auto=0",
	// No reflog is created (a reflog through a planted link would be
	// appended to a file outside); the runtime writes its refs itself
	// (write.go).
	"core.logAllRefUpdates=false",
	// The runtime's git writes an index whole: a split index's shared
	// file would have to be moved into the repository too (write.go).
	"core.splitIndex=false",
	"maintenance.auto=false",
	"safe.bareRepository=explicit",
	"core.sshCommand=false",
	"core.pager=cat",
	"core.editor=false",
	"core.askPass=false",
	"core.alternateRefsCommand=",
	"sequence.editor=false",
	"credential.helper=",
	"gpg.program=false",
	"protocol.ext.allow=never",
	"safe.directory=*",
	"uploadpack.packObjectsHook=",
}

// Env returns the minimal environment of the runtime's git: PATH and HOME
// of the runtime (git needs PATH to find its own programs), LC_ALL=C, no
// optional locks (status must not take index.lock under the user's feet),
// no terminal prompt, no system or global config, pagers and askpass off.
// Nothing else of the runtime's environment passes: no key, no GIT_*.
func Env() []string {
	env := []string{
		"LC_ALL=C",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_ASKPASS=false",
		"SSH_ASKPASS=false",
		"GIT_ATTR_NOSYSTEM=1",
		// refs/replace would make git read another object than the one
		// a commit names: a worktree would check out, and a patch show,
		// what no commit holds.
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_NO_LAZY_FETCH=1",
	}
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Command returns git args run in dir with Overrides and Env, for git that
// works on no repository (git merge-file of three files, git --version):
// git looks for a repository in dir itself and no higher
// (GIT_CEILING_DIRECTORIES), so a .git in a folder above dir is never
// read. For a command inside a repository use Open and Repo.Command.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := command(ctx, dir, args...)
	if parent := filepath.Dir(filepath.Clean(dir)); parent != filepath.Clean(dir) {
		cmd.Env = append(cmd.Env, "GIT_CEILING_DIRECTORIES="+parent)
	}
	return cmd
}

func command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", withOverrides(args)...)
	cmd.Dir = dir
	cmd.Env = Env()
	ownGroup(cmd)
	// After the context ends, Wait gives up on output a surviving
	// descendant still holds open (the 3 s bound on a scan's git held 20 s
	// when a git wrapper's child kept stdout).
	cmd.WaitDelay = time.Second
	return cmd
}

func withOverrides(args []string) []string {
	out := make([]string, 0, 2*len(Overrides)+1+len(args))
	out = append(out, "--no-pager")
	for _, o := range Overrides {
		out = append(out, "-c", o)
	}
	return append(out, args...)
}

// ErrNoRepo is returned by Open when the folder holds no .git.
var ErrNoRepo = errors.New("gitx: not a git work tree")

// Repo is a repository seen through a private snapshot of its common
// folder (see the package doc). Close removes the snapshot.
type Repo struct {
	// WorkTree is the work tree's root; GitDir its git folder (for a linked
	// worktree, .git/worktrees/NAME of the main repository); CommonDir the
	// real common folder.
	WorkTree, GitDir, CommonDir string
	snap                        string
	priv                        *private
}

// Open prepares the snapshot of the repository whose work tree is root
// (root/.git a folder, or a file "gitdir: PATH" of a linked worktree).
// Errors: ErrNoRepo, and failures to read .git or write the snapshot.
func Open(root string) (*Repo, error) {
	root = filepath.Clean(root)
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return nil, ErrNoRepo
	}
	r := &Repo{WorkTree: root}
	switch {
	case fi.IsDir():
		r.GitDir = dotgit
		r.CommonDir = dotgit
	case fi.Mode().IsRegular():
		b, err := readSmall(dotgit)
		if err != nil {
			return nil, err
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return nil, ErrNoRepo
		}
		r.GitDir = abs(root, strings.TrimSpace(p))
		r.CommonDir = r.GitDir
		if b, err := readSmall(filepath.Join(r.GitDir, "commondir")); err == nil {
			r.CommonDir = abs(r.GitDir, strings.TrimSpace(string(b)))
		}
	default:
		return nil, ErrNoRepo
	}
	if err := r.snapshot(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Owned checks that the repository Open found belongs to the work tree:
// root/.git is the git folder itself, or root/.git is a file naming a git
// folder that lies inside root (with its common folder), or a linked
// worktree's git folder (commonDir/worktrees/NAME) whose own "gitdir"
// file names root/.git back (a folder outside the workspace, which a
// sandboxed command cannot write). A .git file a sandboxed command wrote
// to name another repository (or a commondir naming one) is refused, so
// the runtime never writes into that repository.
func (r *Repo) Owned() error {
	dotgit := filepath.Join(r.WorkTree, ".git")
	if r.GitDir == dotgit && r.CommonDir == dotgit {
		return nil
	}
	if inside(r.WorkTree, r.GitDir) && inside(r.WorkTree, r.CommonDir) {
		return nil
	}
	if rel, err := filepath.Rel(r.CommonDir, r.GitDir); err == nil && filepath.Dir(rel) == "worktrees" {
		if b, err := readSmall(filepath.Join(r.GitDir, "gitdir")); err == nil && sameFile(strings.TrimSpace(string(b)), dotgit) {
			return nil
		}
	}
	return fmt.Errorf("gitx: %s names a git folder outside the workspace (%s) that is not its worktree's", dotgit, r.GitDir)
}

// inside reports whether p is root or under it, links resolved.
func inside(root, p string) bool {
	rr, err1 := filepath.EvalSymlinks(root)
	pp, err2 := filepath.EvalSymlinks(p)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(rr, pp)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// OpenLinked prepares the snapshot of a linked worktree whose folders the
// caller knows: workTree its root, gitDir its admin folder
// (commonDir/worktrees/NAME) and commonDir the main repository's git
// folder. Unlike Open it never reads workTree/.git, which a sandboxed
// command working in that worktree may have rewritten to point anywhere
// (internal/worktree keeps these paths in its registry).
func OpenLinked(workTree, gitDir, commonDir string) (*Repo, error) {
	r := &Repo{WorkTree: filepath.Clean(workTree), GitDir: filepath.Clean(gitDir), CommonDir: filepath.Clean(commonDir)}
	if fi, err := os.Stat(r.CommonDir); err != nil || !fi.IsDir() {
		return nil, ErrNoRepo
	}
	if err := r.snapshot(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Run runs git args in the repository (Command) and returns its standard
// output; a failure's error holds the start of git's standard error.
func (r *Repo) Run(ctx context.Context, args ...string) (string, error) {
	return r.RunInput(ctx, nil, args...)
}

// RunInput is Run with stdin read from in (nil: no input).
func (r *Repo) RunInput(ctx context.Context, in io.Reader, args ...string) (string, error) {
	return run(r.Command(ctx, args...), in, args)
}

// RunObjects runs git args on the repository's objects and refs alone
// (ObjectsCommand): a diff of two commits, cat-file.
func (r *Repo) RunObjects(ctx context.Context, args ...string) (string, error) {
	return run(r.ObjectsCommand(ctx, args...), nil, args)
}

func run(cmd *exec.Cmd, in io.Reader, args []string) (string, error) {
	cmd.Stdin = in
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		name := "git"
		if len(args) > 0 {
			name += " " + args[0]
		}
		if msg == "" {
			return stdout.String(), fmt.Errorf("%s: %w", name, err)
		}
		return stdout.String(), fmt.Errorf("%s: %w: %s", name, err, msg)
	}
	return stdout.String(), nil
}

// Snapshot is the private common folder git reads (GIT_COMMON_DIR): paths
// git reports under it (a new worktree's gitdir) must be mapped back to
// CommonDir by the caller.
func (r *Repo) Snapshot() string { return r.snap }

func abs(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// readSmall reads a small file of a git folder: only a regular file (a FIFO
// planted there would block the runtime, a device never end) of at most 1 MiB.
func readSmall(p string) ([]byte, error) { return fsx.ReadRegular(p, 1<<20) }

// shared are the entries of the common folder the snapshot links to: data
// git reads, never a program or a setting. Not "worktrees": the snapshot
// has an empty folder of its own there, so no git the runtime runs lists
// (or prunes, or writes into) the repository's linked worktrees through
// links a sandboxed command could have put there; `git worktree add`
// makes the new worktree's git folder in the snapshot, and the caller
// moves it into the repository (internal/worktree).
var shared = []string{"objects", "refs", "packed-refs", "shallow", "logs"}

func (r *Repo) snapshot() error {
	snap, err := os.MkdirTemp("", "task-x-git-")
	if err != nil {
		return fmt.Errorf("gitx: snapshot: %w", err)
	}
	r.snap = snap
	for _, name := range shared {
		src := filepath.Join(r.CommonDir, name)
		if _, err := os.Lstat(src); err != nil {
			continue
		}
		if err := os.Symlink(src, filepath.Join(snap, name)); err != nil {
			return fmt.Errorf("gitx: snapshot: %w", err)
		}
	}
	if err := os.Mkdir(filepath.Join(snap, "worktrees"), 0o700); err != nil {
		return fmt.Errorf("gitx: snapshot: %w", err)
	}
	if _, err := os.Stat(filepath.Join(r.CommonDir, "info", "exclude")); err == nil {
		if err := os.Mkdir(filepath.Join(snap, "info"), 0o700); err != nil {
			return fmt.Errorf("gitx: snapshot: %w", err)
		}
		if err := os.Symlink(filepath.Join(r.CommonDir, "info", "exclude"), filepath.Join(snap, "info", "exclude")); err != nil {
			return fmt.Errorf("gitx: snapshot: %w", err)
		}
	}
	cfg, err := readSmall(filepath.Join(r.CommonDir, "config"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("gitx: read config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(snap, "config"), SafeConfig(cfg), 0o600); err != nil {
		return fmt.Errorf("gitx: snapshot: %w", err)
	}
	return nil
}

// Command returns git args for the repository: run in the work tree, with
// Overrides and Env, git reading the snapshot's config (GIT_COMMON_DIR)
// and the real git folder's HEAD and index (GIT_DIR).
//
// A command that compares the work tree with the index (status, diff
// without --cached) must not look into a nested repository: a submodule,
// or any folder with its own .git committed as a gitlink, is a repository
// a sandboxed command wrote, and git runs `git status` there with that
// repository's own config (filters, fsmonitor, includes). Pass
// --ignore-submodules=all to status; do not use `git add -A`, `commit -a`
// or `diff` against the work tree, which recurse whatever the config says
// (see StagePaths for staging).
func (r *Repo) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := command(ctx, r.WorkTree, args...)
	cmd.Env = append(cmd.Env, "GIT_DIR="+r.GitDir, "GIT_COMMON_DIR="+r.snap, "GIT_WORK_TREE="+r.WorkTree)
	cmd.Env = append(cmd.Env, r.privateEnv()...) // the last of a name wins
	return cmd
}

// ObjectsCommand returns git args for the repository without its work
// tree: git runs in the snapshot with core.bare, so it reads no
// .gitattributes (a work tree's, which a sandboxed command writes, could
// make a patch show a file as binary, or hide its change, while the
// change is applied) and no work tree file at all: attributes come from
// the snapshot alone, which has none. For commands that read commits,
// trees and blobs: diff of two commits, cat-file, rev-parse.
func (r *Repo) ObjectsCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := command(ctx, r.snap, append([]string{"-c", "core.bare=true"}, args...)...)
	cmd.Env = append(cmd.Env, "GIT_DIR="+r.GitDir, "GIT_COMMON_DIR="+r.snap)
	cmd.Env = append(cmd.Env, r.privateEnv()...)
	return cmd
}

// StagePaths brings the index of the repository to the work tree's
// content for everything `git status` reports (changed, deleted, new and
// not ignored files), as `git add -A` would, without looking into a
// nested repository: git add runs `git status` inside every gitlink whose
// commit did not move, with that repository's config. A nested repository
// stays as the index has it (a gitlink is never added, moved or removed
// here). It returns the paths staged.
func (r *Repo) StagePaths(ctx context.Context) ([]string, error) {
	out, err := r.Run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all", "--no-renames")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range strings.Split(out, "\x00") {
		if len(rec) < 4 || rec[2] != ' ' {
			continue
		}
		p := rec[3:]
		if strings.HasSuffix(p, "/") {
			continue // an untracked nested repository
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return nil, nil
	}
	in := strings.Join(paths, "\x00") + "\x00"
	if _, err := r.RunInput(ctx, strings.NewReader(in), "update-index", "--add", "--remove", "--replace", "-z", "--stdin"); err != nil {
		return nil, err
	}
	return paths, nil
}

// Close removes the snapshot.
func (r *Repo) Close() {
	if r.snap != "" {
		os.RemoveAll(r.snap)
		r.snap = ""
	}
}

// safeKeys are the config keys a snapshot keeps (lower case, section.key):
// how to read the index and the work tree, nothing that runs a program or
// points git at another file.
var safeKeys = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.symlinks": true,
	"core.ignorecase": true, "core.precomposeunicode": true, "core.protectntfs": true,
	"core.protecthfs": true, "core.checkstat": true, "core.trustctime": true,
	"core.autocrlf": true, "core.eol": true, "core.safecrlf": true, "core.splitindex": true,
	"core.untrackedcache": true, "core.quotepath": true, "core.logallrefupdates": true,
	"core.sharedrepository": true,
	"index.version":         true, "index.skiphash": true, "index.sparse": true,
	"extensions.objectformat": true, "extensions.refstorage": true,
}

// SafeConfig returns the lines of the git config text cfg whose keys are
// in the allowlist, as a new config: every section or subsection, include,
// includeIf, driver (filter, diff, merge), remote, and unknown key is left
// out. It parses the simple "[section]" / "key = value" form git writes;
// anything else (continuation lines, quoted subsections) is dropped, so
// the result can only be smaller than the input's meaning, never wider.
func SafeConfig(cfg []byte) []byte {
	var out bytes.Buffer
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(cfg))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			section = ""
			if end > 0 && strings.TrimSpace(line[end+1:]) == "" {
				name := strings.TrimSpace(line[1:end])
				if !strings.ContainsAny(name, " \t\".") {
					section = strings.ToLower(name)
				}
			}
			continue
		}
		if section == "" {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if !safeKeys[section+"."+k] || !inert(v) {
			continue
		}
		fmt.Fprintf(&out, "[%s]\n\t%s = %s\n", section, k, v)
	}
	return out.Bytes()
}

// inert reports whether a config value is a plain word: no quotes,
// escapes, comments or continuation that could change how git parses the
// line.
func inert(v string) bool {
	if v == "" || len(v) > 64 {
		return false
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
