package workspace

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/task-x/task-x-runtime/internal/fsx"
)

// FilesChanged updates only the given paths (absolute, or relative to the
// root) and publishes a new snapshot (protocol.md, workspace/filesChanged).
// A deleted path leaves the index, with everything below it when it was a
// folder; a path that is now excluded leaves it; a new or changed file is
// read again; a new folder is walked. A changed ignore file or build
// manifest reloads its folder's rules: what they now exclude below it
// leaves (the topmost excluded folder skipped once), what they stop
// excluding is walked, so the index and its skipped counts are those of a
// cold open of the tree. A path that leads outside the root through a
// symbolic link is skipped at that link (outsideRoot, once), nothing read
// there. The root itself rescans everything.
func (w *Workspace) FilesChanged(ctx context.Context, paths []string) (Summary, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.snap.Load()
	rels := make([]string, 0, len(paths))
	var escaped []string // inside by name, outside through a symlink
	for _, p := range paths {
		rel, err := w.relPath(p)
		if err != nil {
			w.log.Debug("workspace: changed path ignored", "err", err)
			if rel != "" && errors.Is(err, fsx.ErrOutsideRoot) {
				escaped = append(escaped, rel)
			}
			continue
		}
		if rel == "" {
			s, err := w.fullScan(ctx, old)
			if err != nil {
				return Summary{}, err
			}
			w.snap.Store(s)
			return s.summary, nil
		}
		rels = append(rels, rel)
	}
	git := w.startGitUnlessStamped(ctx, old)
	sc := newScanner(ctx, w, nil, old.rules.clone())
	sc.files = maps.Clone(old.files)
	sc.skipped = maps.Clone(old.skipped)
	sc.candidate = len(old.files)
	instr := map[string]bool{}
	for _, c := range old.instrCandidates {
		instr[c] = true
	}
	instrChanged := false
	for _, rel := range escaped {
		delete(sc.files, rel)
		delete(sc.skipped, rel)
		sc.forgetBelow(rel)
		// The link that leaves the root (rel, or a folder above it) is an
		// entry of a folder inside: classified below as a cold open does
		// (once, as outsideRoot), with nothing below it.
		if link := w.linkOut(rel); link != "" {
			rels = append(rels, link)
		}
	}

	// Rules first: reload the ignore files and manifests of touched folders.
	var ruleDirs []string
	for _, rel := range rels {
		dir, name := splitRel(rel)
		if isIgnoreFile(name) || isOutputManifest(name) {
			sc.reloadDir(dir)
			ruleDirs = append(ruleDirs, dir)
		}
	}
	// What the new rules exclude below those folders leaves the index,
	// counted as a cold open counts it; what they stop excluding is
	// looked at again with the changed paths.
	for _, dir := range ruleDirs {
		rels = append(rels, sc.reexclude(dir)...)
	}
	for _, rel := range rels {
		dir, name := splitRel(rel)
		if w.isInstructionPath(rel) {
			instrChanged = true
		}
		// Forget the old state of rel and below it: a folder now is walked
		// again, and a folder that became a file or a link (or went away)
		// has nothing below it any more.
		delete(sc.files, rel)
		delete(sc.skipped, rel)
		sc.forgetBelow(rel)
		fi, err := os.Lstat(w.abs(rel))
		if isInstructionName(name) {
			delete(instr, rel)
			if err == nil {
				instr[rel] = true
			}
		}
		if err != nil {
			continue // deleted
		}
		if dir != "" && sc.rules.excluded(dir, true) {
			continue // inside an excluded folder: not seen at all
		}
		if fi.IsDir() {
			if sc.rules.excludedSelf(rel, true) {
				sc.skipped[rel] = skipEntry{reason: skipExcludedDir}
				continue
			}
			sc.stack = append(sc.stack, dirJob{rel: rel, abs: w.abs(rel)})
			if err := sc.walk(); err != nil {
				git.wait(ctx, nil)
				return Summary{}, err
			}
			continue
		}
		abs := w.abs(rel)
		sc.entry(rel, filepath.Dir(abs), abs, fi.Name(), fi.Mode().Type(), 0, nil)
	}
	// A link to a folder that entry queued is followed (walked when it
	// stays inside the root, else skipped as outsideRoot).
	if err := sc.walk(); err != nil {
		git.wait(ctx, nil)
		return Summary{}, err
	}
	sc.flush()
	if err := sc.g.Wait(); err != nil {
		git.wait(ctx, nil)
		return Summary{}, err
	}
	if err := ctx.Err(); err != nil {
		git.wait(ctx, nil)
		return Summary{}, err
	}
	for _, b := range sc.batches {
		for i, j := range b.jobs {
			if res := b.results[i]; res.file != nil {
				sc.files[j.rel] = res.file
			} else {
				sc.skipped[j.rel] = res.skip
			}
		}
	}
	sc.putBatches()
	// Listings are checked against each folder's lstat when reused, so
	// the previous ones stay valid here.
	s := &Snapshot{
		version: old.version + 1, root: w.root, skipped: sc.skipped, rules: sc.rules,
		listings: old.listings,
	}
	for c := range instr {
		s.instrCandidates = append(s.instrCandidates, c)
	}
	s.setFiles(sc.files, old)
	s.gitStamp = git.stamp
	sc.truncated = sc.truncated || old.summary.Stats.Truncated
	w.finish(s, sc, git.wait(ctx, s))
	if !instrChanged {
		s.summary.Instructions = old.summary.Instructions
	}
	w.snap.Store(s)
	return s.summary, nil
}

// isInstructionPath reports whether a changed path may alter the loaded
// instructions: an instruction file or folder, a file inside one, or a file
// a CLAUDE.md may import (any .md file).
func (w *Workspace) isInstructionPath(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if isInstructionName(part) {
			return true
		}
	}
	return strings.HasSuffix(rel, ".md")
}

// reloadDir reloads the ignore rules and manifest flag of one folder.
func (sc *scanner) reloadDir(dir string) {
	entries, err := os.ReadDir(sc.w.abs(dir))
	if err != nil {
		delete(sc.rules.perDir, dir)
		delete(sc.rules.outputParents, dir)
		return
	}
	saved := sc.instr
	sc.loadIgnores(dirJob{rel: dir, abs: sc.w.abs(dir)}, sc.compactEntries(entries))
	sc.instr = saved
}

// reexclude brings the entries below dir, whose ignore rules or manifest
// changed, to what a cold open of the tree holds under the new rules: an
// indexed file or skipped entry inside a folder they now exclude leaves,
// and the topmost such folder is skipped once (excluded); a file they now
// exclude is skipped as excluded. It returns the skipped entries whose
// exclusion the rules changed the other way, or whose own exclusion they
// changed (a folder no longer excluded, a binary file now excluded): the
// caller classifies them again like changed paths.
func (sc *scanner) reexclude(dir string) []string {
	start := 0
	if dir != "" {
		start = len(dir) + 1
	}
	under := func(rel string) bool { return dir == "" || strings.HasPrefix(rel, dir+"/") }
	// excludedAbove is the topmost folder between dir and rel that the
	// rules exclude, or "".
	excludedAbove := func(rel string) string {
		for i := start; i < len(rel); i++ {
			if rel[i] == '/' && sc.rules.excludedSelf(rel[:i], true) {
				return rel[:i]
			}
		}
		return ""
	}
	var files, skipped []string
	for rel := range sc.files {
		if under(rel) {
			files = append(files, rel)
		}
	}
	for rel := range sc.skipped {
		if under(rel) {
			skipped = append(skipped, rel)
		}
	}
	for _, rel := range files {
		if top := excludedAbove(rel); top != "" {
			delete(sc.files, rel)
			sc.skipped[top] = skipEntry{reason: skipExcludedDir}
		} else if sc.rules.excludedSelf(rel, false) {
			delete(sc.files, rel)
			sc.skipped[rel] = skipEntry{reason: skipExcludedFile}
		}
	}
	var again []string
	for _, rel := range skipped {
		e, ok := sc.skipped[rel]
		if !ok {
			continue
		}
		if top := excludedAbove(rel); top != "" {
			if top != rel {
				delete(sc.skipped, rel)
				sc.skipped[top] = skipEntry{reason: skipExcludedDir}
			}
			continue
		}
		was := e.reason == skipExcludedFile || e.reason == skipExcludedDir
		isDir := e.reason == skipExcludedDir
		if !isDir && e.reason != skipExcludedFile && e.reason != skipBinary && e.reason != skipTooLarge {
			fi, err := os.Stat(sc.w.abs(rel)) // a link's target decides, as in entry
			isDir = err == nil && fi.IsDir()
		}
		if sc.rules.excludedSelf(rel, isDir) != was {
			again = append(again, rel)
		}
	}
	return again
}

// linkOut is the symbolic link that takes rel (root-relative) outside the
// root: rel itself or a folder above it, the first such link from the
// root down; "" when there is none (or a part of rel is missing).
func (w *Workspace) linkOut(rel string) string {
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) && rel[i] != '/' {
			continue
		}
		p := rel[:i]
		fi, err := os.Lstat(w.abs(p))
		if err != nil {
			return ""
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(w.abs(p))
		if err != nil || !within(w.root, target) {
			return p
		}
	}
	return ""
}

// forgetBelow drops every entry below the folder rel.
func (sc *scanner) forgetBelow(rel string) {
	prefix := rel + "/"
	for p := range sc.files {
		if strings.HasPrefix(p, prefix) {
			delete(sc.files, p)
		}
	}
	for p := range sc.skipped {
		if strings.HasPrefix(p, prefix) {
			delete(sc.skipped, p)
		}
	}
}

func splitRel(rel string) (dir, name string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}

// relPath maps a client path to its root-relative name with
// fsx.ClientRel, the containment every client path passes. A path whose
// existing components lead outside the root through a symlink returns its
// name and an error wrapping fsx.ErrOutsideRoot: FilesChanged forgets what
// the index held under that name and reads nothing there.
func (w *Workspace) relPath(p string) (string, error) {
	rel, err := fsx.ClientRel(w.root, p)
	return cleanRel(rel), err
}
