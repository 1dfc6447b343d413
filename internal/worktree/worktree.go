// Package worktree owns the task-x git worktrees of one workspace
// repository: creating one at a commit (`git worktree add` on a branch
// task-x/<name>), seeding it with the committed changes of other worktrees,
// committing its work and producing its patch (the diff against where its
// own work started) with file and line counts, merging that change into
// the main tree through the edit log (pending review, undoable; a conflict
// is reported and the worktree kept), and discarding it (worktree, branch
// and git folder removed by the runtime itself; every git that writes
// writes into a private store, see gitx write.go). A registry file next to
// the worktrees names every worktree the runtime made, so a runtime
// started later (after a crash too) still lists and discards them.
//
// Worktrees live under <dataDir>/worktrees/<workspace id>/<name>, or
// without a dataDir under the user's state folder ($XDG_STATE_HOME or
// ~/.local/state, then task-x/worktrees/<workspace id>/<name>; not the
// cache folder, which sandboxed commands may write as a build cache), never
// inside the workspace. Every git runs through internal/gitx: the
// repository and the worktrees are written by sandboxed commands, so
// nothing they hold (hooks, config programs, a rewritten .git file) is
// trusted.
//
// Source: ../shared/spec/protocol.md (Team mode, Best of N,
// worktrees/apply, worktrees/discard, worktrees/list) and addendum §4, §7.
// docs/team.md describes the decisions.
package worktree

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/fsx"
	"github.com/task-x/task-x-runtime/internal/gitx"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Errors. Match them with errors.Is.
var (
	// ErrNoRepo: the workspace root is not the work tree of a git
	// repository.
	ErrNoRepo = errors.New("the workspace is not a git repository")
	// ErrNoCommit: the repository has no commit to start a worktree from.
	ErrNoCommit = errors.New("the git repository has no commit")
	// ErrUnknown: no task-x worktree of that name.
	ErrUnknown = errors.New("no such task-x worktree")
	// ErrExists: Create with a name that is taken.
	ErrExists = errors.New("a task-x worktree of that name exists")
	// ErrInvalidName: a name that is not 1-64 of [a-z0-9-], starting with a
	// letter or digit.
	ErrInvalidName = errors.New("invalid worktree name (1 to 64 of a-z, 0-9 and -)")
)

// BranchPrefix is the prefix of every task-x worktree's branch.
const BranchPrefix = "task-x/"

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// ValidName reports whether name can name a worktree.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// NewName returns a fresh name "<prefix>-<8 hex>" (prefix lower-cased,
// anything outside [a-z0-9-] dropped).
func NewName(prefix string) string {
	var b [4]byte
	rand.Read(b[:])
	var p strings.Builder
	for _, c := range strings.ToLower(prefix) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' {
			p.WriteRune(c)
		}
	}
	s := p.String()
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "wt"
	}
	return s + "-" + hex.EncodeToString(b[:])
}

// Worktree is one registry entry. Base is the commit it was created at,
// Start the commit its own work starts from (Base plus any seeded
// changes), Head its last commit (Start until Commit). AdminDir is its git
// folder in the main repository (.git/worktrees/<x>), never read from the
// worktree's own .git file.
type Worktree struct {
	Name      string    `json:"name"`
	Dir       string    `json:"dir"`
	Branch    string    `json:"branch"`
	AdminDir  string    `json:"adminDir,omitempty"`
	Base      string    `json:"base"`
	Start     string    `json:"start"`
	Head      string    `json:"head"`
	TaskID    string    `json:"taskId,omitempty"`
	Role      string    `json:"role,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// Options configure Open. A nil *Options is valid.
type Options struct {
	// DataDir is initialize's dataDir; "" puts worktrees under the user's
	// state folder.
	DataDir string
	// StateDir replaces the user's state folder (tests).
	StateDir string
	Logger   *slog.Logger
}

// Manager owns the task-x worktrees of one repository. Safe for
// concurrent use; git commands that change the repository's worktree list
// or branches run one at a time.
type Manager struct {
	root      string // the main work tree (the workspace root)
	gitDir    string // the main work tree's git folder, as Open found it
	commonDir string // the main repository's git folder
	dir       string // the folder of the worktrees and the registry
	log       *slog.Logger

	gitMu sync.Mutex // worktree add/remove/prune, branch delete
	regMu sync.Mutex // the registry file
}

// Open returns the manager of the repository whose work tree is root
// (absolute, the workspace root). ErrNoRepo when root holds no .git.
func Open(root string, opts *Options) (*Manager, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	root = filepath.Clean(root)
	repo, err := gitx.Open(root)
	if err != nil {
		if errors.Is(err, gitx.ErrNoRepo) {
			return nil, ErrNoRepo
		}
		return nil, err
	}
	// Never write into a repository the workspace's .git was pointed at.
	if err := repo.Owned(); err != nil {
		repo.Close()
		return nil, err
	}
	gitDir, common := repo.GitDir, repo.CommonDir
	repo.Close()
	dir, err := baseDir(root, o)
	if err != nil {
		return nil, err
	}
	return &Manager{root: root, gitDir: gitDir, commonDir: common, dir: dir, log: o.Logger}, nil
}

// baseDir is <dataDir>/worktrees/<workspace id>, else the state folder's,
// whichever does not lie inside the workspace.
func baseDir(root string, o Options) (string, error) {
	id := editlog.WorkspaceID(root)
	var cands []string
	if o.DataDir != "" {
		cands = append(cands, filepath.Join(o.DataDir, "worktrees", id))
	}
	state := o.StateDir
	if state == "" {
		state = userStateDir()
	}
	if state != "" {
		cands = append(cands, filepath.Join(state, "task-x", "worktrees", id))
	}
	for _, c := range cands {
		if !filepath.IsAbs(c) {
			continue
		}
		if !inside(root, c) {
			return c, nil
		}
	}
	return "", errors.New("worktree: no folder for worktrees outside the workspace (set a dataDir)")
}

// userStateDir is $XDG_STATE_HOME, else ~/.local/state ("" without a
// home folder).
func userStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".local", "state")
	}
	return ""
}

// inside reports whether p is root or under it, with symlinks of the
// existing part of p resolved.
func inside(root, p string) bool {
	rr, err := filepath.EvalSymlinks(root)
	if err != nil {
		rr = root
	}
	// Resolve the longest existing prefix of p.
	rest := ""
	cur := filepath.Clean(p)
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			cur = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
	rel, err := filepath.Rel(rr, cur)
	return err == nil && (rel == "." || !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "..")
}

// Root is the main work tree.
func (m *Manager) Root() string { return m.root }

// Dir is the folder that holds the worktrees and the registry.
func (m *Manager) Dir() string { return m.dir }

// mainRepo is the main repository at the folders Open found (and
// checked): the workspace's .git is never read again, since a sandboxed
// command may have made it name another repository since.
func (m *Manager) mainRepo() (*gitx.Repo, error) {
	r, err := gitx.OpenLinked(m.root, m.gitDir, m.commonDir)
	if errors.Is(err, gitx.ErrNoRepo) {
		return nil, ErrNoRepo
	}
	return r, err
}

func (m *Manager) repoOf(w *Worktree) (*gitx.Repo, error) {
	if w.AdminDir == "" {
		return nil, fmt.Errorf("worktree %s: its git folder is unknown (creation did not finish)", w.Name)
	}
	return gitx.OpenLinked(w.Dir, w.AdminDir, m.commonDir)
}

// writeRepoOf is repoOf for git that writes (commit, seed): git writes
// into a private store (gitx.Repo.PrivateWrites: its HEAD the task
// branch, a copy of the worktree's index, objects of its own) and the
// runtime publishes the result (Repo.Publish, Repo.SetRef).
func (m *Manager) writeRepoOf(w *Worktree) (*gitx.Repo, error) {
	r, err := m.repoOf(w)
	if err != nil {
		return nil, err
	}
	if err := r.PrivateWrites("ref: refs/heads/"+w.Branch, true); err != nil {
		r.Close()
		return nil, fmt.Errorf("worktree: %w", err)
	}
	return r, nil
}

// Head is the commit the main tree's HEAD names (ErrNoCommit when none).
func (m *Manager) Head(ctx context.Context) (string, error) {
	r, err := m.mainRepo()
	if err != nil {
		return "", err
	}
	defer r.Close()
	out, err := r.Run(ctx, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", ErrNoCommit
	}
	return strings.TrimSpace(out), nil
}

// CreateOptions are the optional parts of Create.
type CreateOptions struct {
	// Base is the commit to start at; "" is the main tree's HEAD.
	Base   string
	TaskID string
	Role   string
}

// Create makes the worktree name (ValidName) at the commit opts.Base on a
// new branch task-x/<name> and registers it (before git runs, so a crash
// leaves an entry Discard can clean up).
func (m *Manager) Create(ctx context.Context, name string, opts *CreateOptions) (*Worktree, error) {
	var o CreateOptions
	if opts != nil {
		o = *opts
	}
	if !ValidName(name) {
		return nil, ErrInvalidName
	}
	base := o.Base
	if base == "" {
		h, err := m.Head(ctx)
		if err != nil {
			return nil, err
		}
		base = h
	}
	w := &Worktree{Name: name, Dir: filepath.Join(m.dir, name), Branch: BranchPrefix + name, Base: base, Start: base, Head: base,
		TaskID: o.TaskID, Role: o.Role, CreatedAt: time.Now().UTC()}
	if err := m.update(func(reg map[string]*Worktree) error {
		if reg[name] != nil {
			return ErrExists
		}
		reg[name] = w
		return nil
	}); err != nil {
		return nil, err
	}
	if err := m.add(ctx, w); err != nil {
		m.Discard(context.WithoutCancel(ctx), name)
		return nil, err
	}
	if err := m.update(func(reg map[string]*Worktree) error {
		if e := reg[name]; e != nil {
			e.AdminDir = w.AdminDir
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return w, nil
}

func (m *Manager) add(ctx context.Context, w *Worktree) error {
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	m.gitMu.Lock()
	defer m.gitMu.Unlock()
	r, err := m.mainRepo()
	if err != nil {
		return err
	}
	defer r.Close()
	// git writes nothing into the repository: the new worktree's git
	// folder goes to the snapshot's own worktrees folder, its objects
	// (none) to the private store, HEAD detached (no branch, no reflog).
	// The runtime creates the branch and moves the git folder in.
	if err := r.PrivateWrites(w.Base, false); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	r.NoPrivateIndex() // the checkout writes the new worktree's own index
	if _, err := r.Run(ctx, "worktree", "add", "-q", "--detach", "--", w.Dir, w.Base+"^{commit}"); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(w.Dir, ".git"))
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return errors.New("worktree: git wrote no gitdir file")
	}
	id := filepath.Base(strings.TrimSpace(gd))
	src := filepath.Join(r.Snapshot(), "worktrees", id)
	if fi, err := os.Lstat(src); err != nil || !fi.IsDir() {
		return fmt.Errorf("worktree: git's admin folder %s is missing", src)
	}
	if err := r.Publish(); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	if err := r.SetRef(ctx, "refs/heads/"+w.Branch, w.Base, ""); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	if err := os.WriteFile(filepath.Join(src, "HEAD"), []byte("ref: refs/heads/"+w.Branch+"\n"), 0o644); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	admin, err := installAdmin(m.commonDir, src, id)
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	w.AdminDir = admin
	if err := os.WriteFile(filepath.Join(w.Dir, ".git"), []byte("gitdir: "+admin+"\n"), 0o644); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

// Get returns the registered worktree name (ErrUnknown).
func (m *Manager) Get(name string) (*Worktree, error) {
	reg, err := m.load()
	if err != nil {
		return nil, err
	}
	w := reg[name]
	if w == nil {
		return nil, ErrUnknown
	}
	return w, nil
}

// List returns the registered worktrees, oldest first.
func (m *Manager) List() ([]Worktree, error) {
	reg, err := m.load()
	if err != nil {
		return nil, err
	}
	out := make([]Worktree, 0, len(reg))
	for _, w := range reg {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b Worktree) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// Discard removes the worktree name: its folder, its admin folder, its
// branch (gitx.Repo.DeleteRef), and its registry entry.
// A worktree whose creation never finished (a crash) is removed as far as
// it exists. ErrUnknown for a name the registry does not hold.
func (m *Manager) Discard(ctx context.Context, name string) error {
	w, err := m.Get(name)
	if err != nil {
		return err
	}
	m.gitMu.Lock()
	// The runtime removes the worktree itself, never with `git worktree
	// remove` or `git worktree prune`: prune deletes every entry of
	// .git/worktrees that has no gitdir file, through a link a sandboxed
	// command may have put there (a folder of the user's emptied).
	if inside(m.dir, w.Dir) && filepath.Clean(w.Dir) != filepath.Clean(m.dir) {
		os.RemoveAll(w.Dir)
	}
	if w.AdminDir != "" {
		if err := removeAdmin(m.commonDir, w.AdminDir); err != nil {
			m.log.Warn("worktree: removing the git folder failed", "dir", w.AdminDir, "err", err)
		}
	}
	if r, err := m.mainRepo(); err == nil {
		// Not `git branch -D`: it deletes the ref and its reflog through
		// links a sandboxed command put in refs/ or logs/, and rewrites
		// packed-refs through a link (its lock file follows it).
		if out, err := r.Run(ctx, "rev-parse", "-q", "--verify", "refs/heads/"+w.Branch+"^{commit}"); err == nil {
			if err := r.DeleteRef(ctx, "refs/heads/"+w.Branch, strings.TrimSpace(out)); err != nil {
				m.log.Warn("worktree: deleting the branch failed", "branch", w.Branch, "err", err)
			}
		}
		r.Close()
	}
	m.gitMu.Unlock()
	return m.update(func(reg map[string]*Worktree) error {
		delete(reg, name)
		return nil
	})
}

// installAdmin copies the git folder git made for a new worktree in the
// snapshot (src) to commonDir/worktrees/NAME and returns its path. It
// writes through an os.Root of commonDir, so a link on the way
// (.git/worktrees made a link to a folder of the user's by a sandboxed
// command) is refused instead of followed, and it never writes into an
// entry that exists: NAME is id, or id with a number when id is taken.
func installAdmin(commonDir, src, id string) (string, error) {
	root, err := gitx.OpenCommon(commonDir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := root.Mkdir("worktrees", 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if fi, err := root.Lstat("worktrees"); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder", filepath.Join(commonDir, "worktrees"))
	}
	dst := ""
	for i := 0; i < 100 && dst == ""; i++ {
		n := id
		if i > 0 {
			n = id + strconv.Itoa(i)
		}
		err := root.Mkdir(filepath.Join("worktrees", n), 0o755)
		switch {
		case err == nil:
			dst = filepath.Join("worktrees", n)
		case !errors.Is(err, fs.ErrExist):
			return "", err
		}
	}
	if dst == "" {
		return "", fmt.Errorf("no free name for %s in %s", id, filepath.Join(commonDir, "worktrees"))
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return root.Mkdir(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			f, err := root.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			if _, err := f.Write(b); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}
		return fmt.Errorf("%s: not a file or folder", p)
	})
	if err != nil {
		root.RemoveAll(dst)
		return "", err
	}
	return filepath.Join(commonDir, dst), nil
}

// removeAdmin removes a worktree's git folder, commonDir/worktrees/NAME,
// within commonDir: a link on the way (.git/worktrees made a link to a
// folder of the user's) is an error, not followed.
func removeAdmin(commonDir, adminDir string) error {
	rel, err := filepath.Rel(commonDir, adminDir)
	if err != nil || filepath.Dir(rel) != "worktrees" {
		return fmt.Errorf("%s is not a worktree folder of %s", adminDir, commonDir)
	}
	root, err := gitx.OpenCommon(commonDir)
	if err != nil {
		return err
	}
	defer root.Close()
	if fi, err := root.Lstat("worktrees"); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", filepath.Join(commonDir, "worktrees"))
	}
	return root.RemoveAll(rel)
}

// Stat is one file of a change: its path (repository-relative, "/"), and
// its added and removed lines (0 and 0 for a binary file).
type Stat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
}

// Change is a worktree's own change: Start..Head.
type Change struct {
	Start, Head string
	// Patch is the unified diff (binary files as "Binary files differ").
	Patch string
	Files []Stat
	// Added and Removed sum the lines of Files.
	Added, Removed int
}

// Commit commits everything in the worktree (git add -A; ignored files
// stay out) as message, moves Head to it and returns the worktree's
// change. Nothing to commit leaves Head where it was.
func (m *Manager) Commit(ctx context.Context, name, message string) (Change, error) {
	w, err := m.Get(name)
	if err != nil {
		return Change{}, err
	}
	r, err := m.writeRepoOf(w)
	if err != nil {
		return Change{}, err
	}
	defer r.Close()
	head, err := commitAll(ctx, r, w.Branch, message)
	if err != nil {
		return Change{}, err
	}
	if head != w.Head {
		if err := m.update(func(reg map[string]*Worktree) error {
			if e := reg[name]; e != nil {
				e.Head = head
			}
			return nil
		}); err != nil {
			return Change{}, err
		}
		w.Head = head
	}
	return change(ctx, r, w.Start, w.Head)
}

// identity is the author and committer of the runtime's commits (the
// runtime's git reads no global config).
var identity = []string{"-c", "user.name=task-x", "-c", "user.email=task-x@localhost", "-c", "commit.gpgSign=false"}

// commitAll commits the work tree of r (a writeRepoOf: git writes into
// its private store) on the branch and returns the commit (the branch's
// commit when there is nothing to commit).
func commitAll(ctx context.Context, r *gitx.Repo, branch, message string) (string, error) {
	// Not `git add -A` and `git commit`: add looks into nested
	// repositories (gitx.Repo.StagePaths), commit runs hooks and
	// automatic gc. The plumbing below runs nothing but itself, and
	// writes nothing but the private store; the runtime moves the objects
	// and the index in (Publish) and moves the branch (SetRef).
	ref := "refs/heads/" + branch
	out, err := r.Run(ctx, "rev-parse", "-q", "--verify", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	head := strings.TrimSpace(out)
	if _, err := r.StagePaths(ctx); err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	out, err = r.Run(ctx, "write-tree")
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	tree := strings.TrimSpace(out)
	out, err = r.Run(ctx, "rev-parse", "-q", "--verify", head+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	commit := head
	if strings.TrimSpace(out) != tree {
		out, err = r.Run(ctx, append(slices.Clone(identity), "commit-tree", tree, "-p", head, "-m", message)...)
		if err != nil {
			return "", fmt.Errorf("worktree: %w", err)
		}
		commit = strings.TrimSpace(out)
	}
	if err := r.Publish(); err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	if commit == head {
		return head, nil // nothing to commit
	}
	if err := r.SetRef(ctx, ref, commit, head); err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	return commit, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Change returns the worktree's committed change (Start..Head).
func (m *Manager) Change(ctx context.Context, name string) (Change, error) {
	w, err := m.Get(name)
	if err != nil {
		return Change{}, err
	}
	r, err := m.repoOf(w)
	if err != nil {
		return Change{}, err
	}
	defer r.Close()
	return change(ctx, r, w.Start, w.Head)
}

// diffArgs are the flags of every diff of two commits (run with
// RunObjects: no work tree, so no .gitattributes): no external diff, no
// textconv, no colour, no rename detection, gitlinks as commit ids.
var diffArgs = []string{"--no-ext-diff", "--no-textconv", "--no-color", "--no-renames", "--submodule=short"}

func change(ctx context.Context, r *gitx.Repo, start, head string) (Change, error) {
	c := Change{Start: start, Head: head, Files: []Stat{}}
	if start == head {
		return c, nil
	}
	out, err := r.RunObjects(ctx, append(append([]string{"diff", "--numstat", "-z"}, diffArgs...), start, head, "--")...)
	if err != nil {
		return c, fmt.Errorf("worktree: %w", err)
	}
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		f := strings.SplitN(rec, "\t", 3)
		if len(f) != 3 {
			continue
		}
		s := Stat{Path: f[2]}
		if f[0] == "-" {
			s.Binary = true
		} else {
			s.Added, _ = strconv.Atoi(f[0])
			s.Removed, _ = strconv.Atoi(f[1])
		}
		c.Added += s.Added
		c.Removed += s.Removed
		c.Files = append(c.Files, s)
	}
	patch, err := r.RunObjects(ctx, append(append([]string{"diff"}, diffArgs...), start, head, "--")...)
	if err != nil {
		return c, fmt.Errorf("worktree: %w", err)
	}
	c.Patch = patch
	return c, nil
}

// Seed applies the own changes (Start..Head) of the worktrees from, in
// that order, to the worktree name, commits them and makes that commit its
// Start, so its own change holds only what is done there afterwards. A
// change that does not apply (from's changes conflict with each other) is
// an error and leaves the worktree as it was.
func (m *Manager) Seed(ctx context.Context, name string, from []string) error {
	w, err := m.Get(name)
	if err != nil {
		return err
	}
	r, err := m.writeRepoOf(w)
	if err != nil {
		return err
	}
	defer r.Close()
	var names []string
	for _, f := range from {
		src, err := m.Get(f)
		if err != nil {
			return fmt.Errorf("worktree %s: %w", f, err)
		}
		if src.Start == src.Head {
			continue
		}
		patch, err := r.RunObjects(ctx, append(append([]string{"diff", "--binary", "--full-index"}, diffArgs...), src.Start, src.Head, "--")...)
		if err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
		if _, err := r.RunInput(ctx, strings.NewReader(patch), "apply", "--3way", "--index", "--whitespace=nowarn", "-"); err != nil {
			// Back to HEAD (not `reset --hard`, which writes ORIG_HEAD
			// through a link): the private index and the work tree.
			if _, rerr := r.Run(ctx, "read-tree", "--reset", "-u", "HEAD"); rerr == nil {
				if perr := r.Publish(); perr != nil {
					m.log.Warn("worktree: restoring the index failed", "err", perr)
				}
			}
			return fmt.Errorf("worktree: the change of %s does not apply on %s: %w", f, name, err)
		}
		names = append(names, f)
	}
	if len(names) == 0 {
		return nil
	}
	head, err := commitAll(ctx, r, w.Branch, "task-x: changes of "+strings.Join(names, ", "))
	if err != nil {
		return err
	}
	return m.update(func(reg map[string]*Worktree) error {
		if e := reg[name]; e != nil {
			e.Start, e.Head = head, head
		}
		return nil
	})
}

// ApplyResult is worktrees/apply's answer: Applied when the change was
// written; Files the number of files of the change; Changed the paths
// written; Operation the edit-log operation (undo it with edits/undo);
// Conflicts the paths that kept it from applying (nothing is written then).
type ApplyResult = protocol.WorktreeApplyResult

// Apply merges the worktree's own change (Start..Head, committed) into
// the main tree as one edit-log operation of taskID (tool
// "worktree_apply"): pending review, undoable. Each file is merged three
// ways (the file at Start, the worktree's, the main tree's as it is now):
// a main file still as at Start takes the worktree's, one that already
// matches is left alone, others are merged with `git merge-file`. A file
// that does not merge cleanly (or is binary, a symlink, a submodule), or
// whose place in the main tree cannot hold it (a symbolic link on the way,
// to a folder outside the tree say; a file where it needs a folder; a
// folder or link where it needs a file) is a conflict: nothing is written
// and the worktree is kept. A worktree with
// no change of its own applies as nothing to write (Applied, no
// Operation). The worktree stays registered after a successful apply too
// (Discard removes it).
func (m *Manager) Apply(ctx context.Context, name string, log *editlog.Log, taskID string) (ApplyResult, error) {
	res := ApplyResult{Changed: []string{}}
	w, err := m.Get(name)
	if err != nil {
		return res, err
	}
	r, err := m.repoOf(w)
	if err != nil {
		return res, err
	}
	defer r.Close()
	if w.Start == w.Head {
		res.Applied = true // no change of its own: nothing to write
		return res, nil
	}
	out, err := r.RunObjects(ctx, append(append([]string{"diff", "--raw", "-z"}, diffArgs...), w.Start, w.Head, "--")...)
	if err != nil {
		return res, fmt.Errorf("worktree: %w", err)
	}
	entries := parseRaw(out)
	res.Files = len(entries)
	root, err := os.OpenRoot(log.Root())
	if err != nil {
		return res, err
	}
	defer root.Close()
	var specs []editlog.FileSpec
	for _, e := range entries {
		spec, conflict, err := m.merge(ctx, r, root, w, e)
		if err != nil {
			return res, err
		}
		if conflict {
			res.Conflicts = append(res.Conflicts, e.path)
			continue
		}
		if spec != nil {
			specs = append(specs, *spec)
		}
	}
	if len(res.Conflicts) > 0 {
		msg := fmt.Sprintf("%d file(s) conflict with the working tree: %s", len(res.Conflicts), strings.Join(res.Conflicts, ", "))
		res.Error = &msg
		return res, nil
	}
	if len(specs) == 0 {
		res.Applied = true
		return res, nil
	}
	op, err := log.Apply(ctx, editlog.OpSpec{TaskID: taskID, Tool: "worktree_apply", Files: specs})
	var ce *editlog.ChangedError
	if errors.As(err, &ce) {
		res.Conflicts = []string{ce.Path}
		msg := ce.Error()
		res.Error = &msg
		return res, nil
	}
	if err != nil {
		return res, err
	}
	res.Applied = true
	for _, f := range op.Files {
		res.Changed = append(res.Changed, f.Path)
	}
	id := op.ID
	res.Operation = &id
	return res, nil
}

type rawEntry struct {
	oldMode, newMode string
	path             string
}

// parseRaw reads `git diff --raw -z --no-renames`: ":old new oldsha newsha
// status\0path\0" per file.
func parseRaw(out string) []rawEntry {
	var es []rawEntry
	parts := strings.Split(out, "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(parts[i], ":"))
		if len(meta) < 5 {
			break
		}
		es = append(es, rawEntry{oldMode: meta[0], newMode: meta[1], path: parts[i+1]})
	}
	return es
}

func regular(mode string) bool { return mode == "100644" || mode == "100755" }

// merge computes one file's FileSpec (nil: nothing to write) or reports a
// conflict.
func (m *Manager) merge(ctx context.Context, r *gitx.Repo, root *os.Root, w *Worktree, e rawEntry) (*editlog.FileSpec, bool, error) {
	absent := "000000"
	if (e.oldMode != absent && !regular(e.oldMode)) || (e.newMode != absent && !regular(e.newMode)) {
		return nil, true, nil
	}
	var base, theirs []byte
	if e.oldMode != absent {
		s, err := r.RunObjects(ctx, "cat-file", "blob", w.Start+":"+e.path)
		if err != nil {
			return nil, false, fmt.Errorf("worktree: %w", err)
		}
		base = []byte(s)
	}
	if e.newMode != absent {
		s, err := r.RunObjects(ctx, "cat-file", "blob", w.Head+":"+e.path)
		if err != nil {
			return nil, false, fmt.Errorf("worktree: %w", err)
		}
		theirs = []byte(s)
	}
	mine, exists, conflict, err := readFile(root, e.path)
	if err != nil || conflict {
		return nil, conflict, err
	}
	spec := &editlog.FileSpec{Path: e.path, Existed: exists, Before: mine}
	if e.newMode == "100755" {
		spec.Mode = 0o755
	}
	baseExists, theirsExist := e.oldMode != absent, e.newMode != absent
	switch {
	case exists == theirsExist && (!exists || bytes.Equal(mine, theirs)):
		return nil, false, nil // already so
	case exists == baseExists && (!exists || bytes.Equal(mine, base)):
		// untouched in the main tree: take the worktree's
	case exists && baseExists && theirsExist:
		merged, ok, err := mergeFile(ctx, mine, base, theirs)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return nil, true, nil
		}
		theirs = merged
	default:
		return nil, true, nil
	}
	if !theirsExist {
		spec.Delete = true
	} else {
		spec.After = theirs
	}
	return spec, false, nil
}

// readFile reads the main tree's file rel (exists false when it is not
// there: the change creates it, with its folders). conflict is true when
// the tree cannot take a file at rel, as git would refuse to check it
// out: a folder on the way is a symbolic link (to a folder outside the
// tree, say: "beyond a symbolic link") or a file, or rel itself is not a
// regular file. The caller answers that as a conflict naming rel, not as
// an error.
func readFile(root *os.Root, rel string) (b []byte, exists, conflict bool, err error) {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		fi, err := root.Lstat(filepath.FromSlash(strings.Join(parts[:i], "/")))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, false, nil
		}
		if err != nil {
			return nil, false, false, err
		}
		if !fi.IsDir() {
			return nil, false, true, nil
		}
	}
	fi, err := root.Lstat(filepath.FromSlash(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, false, nil
	}
	if err != nil {
		return nil, false, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, true, nil
	}
	b, err = root.ReadFile(filepath.FromSlash(rel))
	return b, err == nil, false, err
}

// mergeFile merges three texts with `git merge-file -p` (no repository:
// it reads no config and runs no driver). ok is false on a conflict or a
// binary input.
func mergeFile(ctx context.Context, mine, base, theirs []byte) ([]byte, bool, error) {
	for _, b := range [][]byte{mine, base, theirs} {
		if bytes.IndexByte(b, 0) >= 0 {
			return nil, false, nil
		}
	}
	tmp, err := os.MkdirTemp("", "task-x-merge-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(tmp)
	names := []string{"mine", "base", "theirs"}
	for i, b := range [][]byte{mine, base, theirs} {
		if err := os.WriteFile(filepath.Join(tmp, names[i]), b, 0o600); err != nil {
			return nil, false, err
		}
	}
	cmd := gitx.Command(ctx, tmp, "merge-file", "-p", "-q", "mine", "base", "theirs")
	var out bytes.Buffer
	cmd.Stdout = &out
	err = cmd.Run()
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128 {
		return nil, false, nil // conflicts
	}
	if err != nil {
		return nil, false, fmt.Errorf("worktree: git merge-file: %w", err)
	}
	return out.Bytes(), true, nil
}

// registry is the JSON file of the worktrees this runtime made.
type registry struct {
	Worktrees []*Worktree `json:"worktrees"`
}

func (m *Manager) regPath() string { return filepath.Join(m.dir, "registry.json") }

func (m *Manager) load() (map[string]*Worktree, error) {
	m.regMu.Lock()
	defer m.regMu.Unlock()
	return m.loadLocked()
}

func (m *Manager) loadLocked() (map[string]*Worktree, error) {
	reg := map[string]*Worktree{}
	b, err := os.ReadFile(m.regPath())
	if errors.Is(err, fs.ErrNotExist) {
		return reg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("worktree registry: %w", err)
	}
	var f registry
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("worktree registry %s: %w", m.regPath(), err)
	}
	for _, w := range f.Worktrees {
		// An entry must name a folder of ours: the registry is ours, but
		// never let it steer a removal elsewhere.
		if w == nil || !ValidName(w.Name) || filepath.Clean(w.Dir) != filepath.Join(m.dir, w.Name) || w.Branch != BranchPrefix+w.Name ||
			(w.AdminDir != "" && filepath.Dir(filepath.Clean(w.AdminDir)) != filepath.Join(m.commonDir, "worktrees")) {
			continue
		}
		reg[w.Name] = w
	}
	return reg, nil
}

func (m *Manager) regLockPath() string { return filepath.Join(m.dir, "registry.lock") }

// update changes the registry under its locks and saves it atomically. The
// read-modify-write holds regMu (this process) and an exclusive flock on
// registry.lock next to it (other runtimes on the same data folder, or
// another Manager), so no update loses another's entries; readers need no
// lock, since the file is only ever replaced whole (a rename).
func (m *Manager) update(fn func(map[string]*Worktree) error) error {
	m.regMu.Lock()
	defer m.regMu.Unlock()
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return fmt.Errorf("worktree registry: %w", err)
	}
	lock, err := os.OpenFile(m.regLockPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("worktree registry: lock: %w", err)
	}
	defer lock.Close() // closing releases the flock
	if err := fsx.LockFile(lock); err != nil {
		return fmt.Errorf("worktree registry: lock %s: %w", m.regLockPath(), err)
	}
	reg, err := m.loadLocked()
	if err != nil {
		return err
	}
	if err := fn(reg); err != nil {
		return err
	}
	f := registry{Worktrees: []*Worktree{}}
	for _, w := range reg {
		f.Worktrees = append(f.Worktrees, w)
	}
	slices.SortFunc(f.Worktrees, func(a, b *Worktree) int { return strings.Compare(a.Name, b.Name) })
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(m.regPath(), b, 0o600); err != nil {
		return fmt.Errorf("worktree registry: %w", err)
	}
	return nil
}
