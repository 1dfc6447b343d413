package workspace

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/task-x/task-x-runtime/internal/gitx"
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
	head, err := os.ReadFile(filepath.Join(dir, "HEAD"))
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
	stat("index")
	stat(filepath.Join("info", "exclude"))
	// The repository's config can change what status answers
	// (status.showUntrackedFiles, core.excludesFile...); the runtime's git
	// reads no global or system config (gitx.Env).
	stat("config")
	return b.String()
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

// pendingGit is the git state of a scan in progress: either git commands
// already running (ch), or the previous snapshot's state kept for when the
// scan finds nothing changed (old).
type pendingGit struct {
	w     *Workspace
	stamp string
	ch    <-chan *GitInfo
	probe *GitProbe // Options.Git's commands, instead of ch
	saved *Saved    // the first scan's Options.Saved, with probe
	old   *Snapshot
}

// changed is called by the scan when a file is not the saved one: a probe
// that waited for the scan (GitProbe.saved) starts git now.
func (p *pendingGit) changed() {
	if p.probe != nil && !p.probe.starting.Load() {
		p.probe.start()
	}
}

// GitProbe is the git state of a folder being read for the first scan of
// a workspace opened on it (Options.Git), started by StartGit before the
// open: project.Open starts it before it loads a saved index, so git's
// commands run beside that load and the scan instead of starting only
// when the scan does.
type GitProbe struct {
	root  string
	stamp string
	ctx   context.Context
	log   *slog.Logger
	// saved is the saved index's git state when its stamp is this one:
	// the commands then start only when the first scan finds a file that
	// is not the saved one (start), or at its end (answer).
	saved    *SavedGit
	started  sync.Once
	ch       <-chan *GitInfo
	starting atomic.Bool
	once     sync.Once
	info     *GitInfo
}

// start starts the commands (once).
func (p *GitProbe) start() {
	p.starting.Store(true)
	p.started.Do(func() { p.ch = startGitCommands(p.ctx, p.root, defaultGitTimeout, p.log) })
}

// result waits for the commands' answer; every call gets the same one.
func (p *GitProbe) result() *GitInfo {
	p.start()
	p.once.Do(func() { p.info = <-p.ch })
	return p.info
}

// answer is the git state for the first scan's snapshot s (Options.Git):
// the saved one (reuseSaved) when the commands have not started and s
// holds exactly the saved index's entries sv, else the commands' answer.
func (p *GitProbe) answer(ctx context.Context, s *Snapshot, sv *Saved) *GitInfo {
	if p.saved != nil && s != nil && !p.starting.Load() && sameAsSaved(s, sv) {
		if info, ok := p.reuseSaved(ctx, s); ok {
			return info
		}
	}
	return p.result()
}

// SavedGit is the git state a saved index keeps (Snapshot.SavedGit): the
// stamp it was read under, the branch, the head and the paths of `git
// status --porcelain`'s lines.
type SavedGit struct {
	Stamp, Branch, Head string
	Status              []string
	// Excluded are the excluded paths of the snapshot (excludedPaths),
	// for the record: a snapshot with more than maxStatusPathspecs has no
	// SavedGit, so its reopen starts git at once.
	Excluded []string
}

// maxSavedStatus bounds SavedGit.Status (a larger status is not saved:
// its reopen runs git).
const maxSavedStatus = 4096

// maxStatusPathspecs bounds the excluded paths reuseSaved asks git about.
const maxStatusPathspecs = 128

// SavedGit returns s's git state for a saved index, nil when it has none
// that a reopen could reuse (no stamp, no git state, a status not kept).
func (s *Snapshot) SavedGit() *SavedGit {
	g := s.summary.Project.Git
	if g == nil || s.gitStamp == "" || !g.statusOK {
		return nil
	}
	ex := excludedPaths(s)
	if len(ex) > maxStatusPathspecs {
		return nil
	}
	return &SavedGit{Stamp: s.gitStamp, Branch: g.Branch, Head: g.Head, Status: g.status, Excluded: ex}
}

// excludedPaths are the folders and files s excluded (sorted), but .git.
func excludedPaths(s *Snapshot) []string {
	var excluded []string
	for rel, e := range s.skipped {
		if e.reason != skipExcludedDir && e.reason != skipExcludedFile {
			continue
		}
		if rel == ".git" || strings.HasSuffix(rel, "/.git") {
			continue
		}
		excluded = append(excluded, rel)
	}
	slices.Sort(excluded)
	return excluded
}

// statusPaths reads the paths of `git status --porcelain` (v1) lines;
// ok is false when a line is not "XY path" with a plain path (a quoted
// path, a rename's "old -> new") or there are more than maxSavedStatus.
func statusPaths(out string) (paths []string, ok bool) {
	for line := range strings.SplitSeq(out, "\n") {
		if line == "" {
			continue
		}
		p, ok := statusPath(line)
		if !ok || len(paths) == maxSavedStatus {
			return nil, false
		}
		paths = append(paths, p)
	}
	return paths, true
}

func statusPath(line string) (string, bool) {
	if len(line) < 4 || line[2] != ' ' {
		return "", false
	}
	p := line[3:]
	if p[0] == '"' || strings.Contains(p, " -> ") || strings.HasPrefix(p, "/") {
		return "", false
	}
	return p, true
}

// under reports whether the status path p (a folder when it ends with
// "/") is one of the paths in set or inside one of them.
func under(p string, set []string) bool {
	p = strings.TrimSuffix(p, "/")
	for _, e := range set {
		if p == e || strings.HasPrefix(p, e) && p[len(e)] == '/' {
			return true
		}
	}
	return false
}

// sameAsSaved reports whether the first scan's snapshot s holds exactly
// the saved index's entries: every indexed file the saved *File (reused
// by its stamp), the same binary and too-large files by stamp, and
// nothing unreadable, vanished or of an ambiguous stamp.
func sameAsSaved(s *Snapshot, sv *Saved) bool {
	if sv == nil || len(s.files) != len(sv.Files) {
		return false
	}
	for p, f := range s.files {
		if sv.Files[p] != f {
			return false
		}
	}
	n := 0
	for p, e := range s.skipped {
		switch e.reason {
		case skipExcludedDir, skipExcludedFile, skipSymlinkLoop, skipOutsideRoot, skipInvalidName:
			continue
		case skipBinary, skipTooLarge:
			o, ok := sv.Skipped[p]
			if e.ambiguous || !ok || o.Binary != (e.reason == skipBinary) || o.Size != e.size || !o.ModTime.Equal(e.modTime) || o.Inode != e.ino || o.CTime != e.ctime {
				return false
			}
			n++
		default:
			return false
		}
	}
	return n == len(sv.Skipped)
}

// reuseSaved makes the git state of a reopen that found every file as
// saved, under the saved git stamp: the branch and head are the saved
// ones (HEAD, the ref and packed-refs have their stamps), and so are the
// status lines of the indexed part (git's index and every indexed file
// too). What the scan cannot vouch for is inside the excluded folders
// and files (a tracked file changed under node_modules): git is asked
// about those paths alone (`git status -- <paths>`, literal pathspecs)
// and its lines replace the saved ones there. It gives up (ok false) when
// a saved collapsed untracked folder holds an excluded path, when git's
// lines are not all inside the excluded paths or not plain, when there
// are too many excluded paths, and when git fails.
func (p *GitProbe) reuseSaved(ctx context.Context, s *Snapshot) (*GitInfo, bool) {
	excluded := excludedPaths(s)
	if len(excluded) > maxStatusPathspecs {
		return nil, false
	}
	status := make([]string, 0, len(p.saved.Status))
	for _, sp := range p.saved.Status {
		if under(sp, excluded) {
			continue
		}
		if d, ok := strings.CutSuffix(sp, "/"); ok {
			for _, e := range excluded {
				if strings.HasPrefix(e, d+"/") {
					return nil, false
				}
			}
		}
		status = append(status, sp)
	}
	if len(excluded) > 0 {
		repo, err := gitx.Open(p.root)
		if err != nil {
			return nil, false
		}
		defer repo.Close()
		ctx, cancel := context.WithTimeout(ctx, defaultGitTimeout)
		defer cancel()
		args := append(make([]string, 0, 4+len(excluded)), "status", "--porcelain", "--untracked-files=normal", "--")
		for _, e := range excluded {
			args = append(args, ":(literal)"+e)
		}
		out, err := repo.Run(ctx, args...)
		if err != nil {
			p.log.Debug("workspace: git status of the excluded paths failed", "err", err, "out", out)
			return nil, false
		}
		paths, ok := statusPaths(out)
		if !ok {
			return nil, false
		}
		for _, sp := range paths {
			if !under(sp, excluded) {
				return nil, false
			}
		}
		status = append(status, paths...)
	}
	if len(status) > maxSavedStatus {
		return nil, false
	}
	return &GitInfo{Branch: p.saved.Branch, Head: p.saved.Head, Dirty: len(status), status: status, statusOK: true}, true
}

// StartGit takes the git stamp of root (absolute, symbolic links
// resolved, as Workspace.Root) and starts the git commands that read its
// state (see Project.Git); Options.Git hands the result to Open, which
// may use it more than once (project.Open opens the folder again when its
// saved index fails late). ctx bounds the commands, like the scan's own
// (3 s at most).
//
// saved, when not nil, is the git state of the saved index the open
// loaded: when its stamp is root's now, the commands start only once the
// scan finds a file that is not the saved one, and not at all when it
// finds every one (GitProbe.answer).
func StartGit(ctx context.Context, root string, saved *SavedGit, log *slog.Logger) *GitProbe {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	root = filepath.Clean(root)
	p := &GitProbe{root: root, stamp: gitStampOf(root), ctx: ctx, log: log}
	if saved != nil && p.stamp != "" && saved.Stamp == p.stamp && len(saved.Excluded) <= maxStatusPathspecs {
		// A submodule's state (its own commits) has no stamp here.
		if _, err := os.Lstat(filepath.Join(root, ".gitmodules")); errors.Is(err, fs.ErrNotExist) {
			p.saved = saved
			return p
		}
	}
	p.start()
	return p
}

// startGitUnlessStamped starts reading the git state alongside a scan,
// unless old's git state is known and its stamp still holds: then the
// commands run only if the scan finds a changed file (wait). A first scan
// takes Options.Git's commands when they were started for this root.
func (w *Workspace) startGitUnlessStamped(ctx context.Context, old *Snapshot) *pendingGit {
	if g := w.opts.Git; old == nil && g != nil && g.root == w.root {
		w.gitRuns.Add(1)
		return &pendingGit{w: w, stamp: g.stamp, probe: g, saved: w.opts.Saved}
	}
	p := &pendingGit{w: w, stamp: w.gitStamp()}
	if old != nil && p.stamp != "" && old.gitStamp == p.stamp && old.summary.Project.Git != nil {
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
	switch {
	case p.probe != nil:
		return p.probe.answer(ctx, s, p.saved)
	case p.ch != nil:
		return <-p.ch
	case s == nil:
		return nil
	case sameEntries(s, p.old):
		return p.old.summary.Project.Git
	}
	return p.w.gitInfo(ctx)
}
