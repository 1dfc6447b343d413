package workspace

import (
	"github.com/task-x/task-x-runtime/internal/fsx"

	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// gitStamp describes the files git reads to answer for the repository's
// state: .git/HEAD, the ref HEAD points to (loose, and packed-refs),
// .git/index and .git/info/exclude, each by size, modification time and
// inode. Two equal stamps mean the branch, the head commit and the index
// are the same, so a scan whose files did not change either can reuse the
// last GitInfo instead of running git (see reuseGit). It returns "" when
// no stamp can be made (no .git folder: a worktree's or submodule's .git
// file, or no repository), and then git always runs.
func (w *Workspace) gitStamp() string { return gitStampOf(w.root) }

func gitStampOf(root string) string {
	dir := filepath.Join(root, ".git")
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	var b strings.Builder
	stat := func(rel string) {
		b.WriteString(rel)
		if fi, err := os.Stat(filepath.Join(dir, rel)); err == nil {
			b.WriteByte(' ')
			b.WriteString(strconv.FormatInt(fi.Size(), 10))
			b.WriteByte(' ')
			b.WriteString(strconv.FormatInt(fi.ModTime().UnixNano(), 10))
			if id, ok := idOf(fi); ok {
				b.WriteByte(' ')
				b.WriteString(strconv.FormatUint(id.ino, 10))
			}
		}
		b.WriteByte('\n')
	}
	head, err := fsx.ReadRegular(filepath.Join(dir, "HEAD"), 4096)
	if err != nil {
		return ""
	}
	b.Write(head)
	b.WriteByte('\n')
	if ref, ok := bytes.CutPrefix(bytes.TrimSpace(head), []byte("ref: ")); ok {
		r := filepath.Clean(filepath.FromSlash(string(ref)))
		if filepath.IsAbs(r) || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return ""
		}
		stat(r)
	}
	stat("HEAD")
	stat("packed-refs")
	if d, ok := cachedIndexDigest(dir); ok {
		b.WriteString("index digest ")
		b.WriteString(d)
		b.WriteByte('\n')
	} else {
		stat("index")
	}
	stat(filepath.Join("info", "exclude"))
	return b.String()
}

// hasSubmodules reports whether root has a .gitmodules entry: a
// submodule's commits move no file of the stamp (they live under
// .git/modules), so its git state is never taken from a saved one.
func hasSubmodules(root string) bool {
	_, err := os.Lstat(filepath.Join(root, ".gitmodules"))
	return err == nil
}

// nestedRepo reports whether s saw a repository inside the root (a .git
// folder or file below it, excluded as the root's is): a submodule
// without .gitmodules, or a repository added as a gitlink, whose commits
// git reports and no file of the stamp shows (QA: `git add sub` of a
// folder with its own .git, then a commit inside it).
func (s *Snapshot) nestedRepo() bool {
	for p := range s.skipped {
		if strings.HasSuffix(p, "/.git") {
			return true
		}
	}
	// A .git file (a submodule's or a linked worktree's "gitdir:" line) is
	// not excluded as a folder named .git is: it is an indexed file (QA: a
	// submodule whose .gitmodules was removed).
	for p := range s.files {
		if strings.HasSuffix(p, "/.git") {
			return true
		}
	}
	return false
}

// sameEntries reports whether s saw exactly what old saw: the same indexed
// files (SameFiles) and the same skipped paths for the same reasons (with
// the same size and modification time for binary and too large files).
func sameEntries(s, old *Snapshot) bool {
	if !s.SameFiles(old) || len(s.skipped) != len(old.skipped) {
		return false
	}
	for p, e := range s.skipped {
		if o, ok := old.skipped[p]; !ok || o.reason != e.reason || o.size != e.size || !o.modTime.Equal(e.modTime) {
			return false
		}
	}
	return true
}

// sameAsSaved is sameEntries for a first scan against a saved index:
// every indexed file is its saved entry, the binary and too-large files
// are the saved ones with the same stamps, and the other skipped paths
// are g's, for the same reasons.
func sameAsSaved(s *Snapshot, saved *Saved, g *SavedGit) bool {
	if len(s.files) != len(saved.Files) {
		return false
	}
	for rel, f := range s.files {
		if o := saved.Files[rel]; o != f && (o == nil || !keptSame(f, o)) {
			return false
		}
	}
	files, others := 0, 0
	for p, e := range s.skipped {
		switch e.reason {
		case skipBinary, skipTooLarge:
			o, ok := saved.Skipped[p]
			if !ok || o.Binary != (e.reason == skipBinary) || o.Size != e.size || !o.ModTime.Equal(e.modTime) {
				return false
			}
			files++
		default:
			if r, ok := g.Others[p]; !ok || r != uint8(e.reason) {
				return false
			}
			others++
		}
	}
	return files == len(saved.Skipped) && others == len(g.Others)
}

// sameForGit reports whether git sees f as it saw old, whose content f
// has (File.Sum): for a regular file with the same mode bit git records, a
// new stamp alone changes no line of git status (git compares the content
// of a file whose stat data changed). A symbolic link is never: git
// records the path it points to, which the stamp (its target's) and the
// content do not show (QA: a link moved to another file of the same bytes).
func sameForGit(f, old *File) bool { return f.Exec == old.Exec && !f.Link && !old.Link }

// keptSame reports whether f, a new entry of a file saved as old, has
// old's content (File.SameContent) and is the same for git.
func keptSame(f, old *File) bool { return f.SameContent(old) && sameForGit(f, old) }

// pendingGit is the git state of a scan in progress: either git commands
// already running (ch), or the previous snapshot's state kept for when the
// scan finds nothing changed (old), or a saved index's state (saved) kept
// likewise, git's commands starting at the first changed file (changed).
type pendingGit struct {
	w     *Workspace
	stamp string
	ch    <-chan *GitInfo
	probe *GitProbe // Options.Git's commands, instead of ch
	old   *Snapshot
	saved *SavedGit
	ctx   context.Context // the scan's caller's, for commands changed starts
	once  sync.Once       // starts the commands (changed), or rules them out (wait)
}

// changed starts git's commands, once, when the scan is waiting on a
// saved state (saved) and has met a file that is not its saved entry: git
// then runs beside the rest of the scan and its parse, as on any open.
// Safe for concurrent use (the scan's file checks).
func (p *pendingGit) changed() {
	if p == nil || p.saved == nil {
		return
	}
	p.once.Do(func() { p.ch = p.w.startGit(p.ctx) })
}

// GitProbe is the git state of a folder being read for the first scan of
// a workspace opened on it (Options.Git), started by StartGit before the
// open: project.Open starts it before it loads a saved index, so git's
// commands run beside that load and the scan instead of starting only
// when the scan does.
type GitProbe struct {
	root  string
	stamp string
	ch    <-chan *GitInfo
	once  sync.Once
	info  *GitInfo
}

// result waits for the commands' answer; every call gets the same one.
func (p *GitProbe) result() *GitInfo {
	p.once.Do(func() { p.info = <-p.ch })
	return p.info
}

// StartGit takes the git stamp of root (absolute, symbolic links
// resolved, as Workspace.Root) and starts the git commands that read its
// state (see Project.Git); Options.Git hands the result to Open, which
// may use it more than once (project.Open opens the folder again when its
// saved index fails late). ctx bounds the commands, like the scan's own
// (3 s at most).
func StartGit(ctx context.Context, root string, log *slog.Logger) *GitProbe {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	root = filepath.Clean(root)
	p := &GitProbe{root: root, stamp: gitStampOf(root)}
	p.ch = startGitCommands(ctx, root, defaultGitTimeout, log)
	return p
}

// startGitUnlessStamped starts reading the git state alongside a scan,
// unless old's git state is known and its stamp still holds: then the
// commands run only if the scan finds a changed file (wait). A first scan
// takes Options.Git's commands when they were started for this root.
func (w *Workspace) startGitUnlessStamped(ctx context.Context, old *Snapshot) *pendingGit {
	if g := w.opts.Git; old == nil && g != nil && g.root == w.root {
		w.gitRuns.Add(1)
		return &pendingGit{w: w, stamp: g.stamp, probe: g}
	}
	p := &pendingGit{w: w, stamp: w.gitStamp()}
	if g := w.opts.SavedGit; old == nil && g != nil && w.opts.Saved != nil && p.stamp != "" && p.stamp == g.Stamp && !hasSubmodules(w.root) {
		p.saved, p.ctx = g, ctx
		return p
	}
	if old != nil && p.stamp != "" && old.gitStamp == p.stamp && old.summary.Project.Git != nil && !old.nestedRepo() && !hasSubmodules(w.root) {
		p.old = old
		return p
	}
	p.ch = w.startGit(ctx)
	return p
}

// wait returns the git state for the new snapshot s (nil s: the scan
// failed; the result is dropped): the running commands' answer, else the
// previous one when s saw exactly the entries of the previous snapshot
// (sameEntries), else the answer of git run now.
func (p *pendingGit) wait(ctx context.Context, s *Snapshot) *GitInfo {
	if p.saved != nil {
		started := true
		p.once.Do(func() { started = false }) // no command starts after this
		if started {
			return <-p.ch
		}
		if s == nil {
			return nil
		}
		if sameAsSaved(s, p.w.opts.Saved, p.saved) {
			info := p.saved.Info
			return &info
		}
		return p.w.gitInfo(ctx)
	}
	switch {
	case p.probe != nil:
		return p.probe.result()
	case p.ch != nil:
		return <-p.ch
	case s == nil:
		return nil
	case sameEntries(s, p.old):
		return p.old.summary.Project.Git
	}
	return p.w.gitInfo(ctx)
}
