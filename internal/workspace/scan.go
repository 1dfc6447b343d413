package workspace

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/task-x/task-x-runtime/internal/workspace/ignore"
)

// batchSize is how many files one worker task checks: a goroutine per file
// would cost more than the check on small files.
const batchSize = 64

// testHookBeforeRead, when set by tests, runs after a file was listed and
// before its content is opened.
var testHookBeforeRead func(rel string)

// readPool holds the workers' read buffers: BinarySniffSize bytes, grown
// to a whole file's size when Options.ParseSource is set.
var readPool = sync.Pool{New: func() any { b := make([]byte, BinarySniffSize); return &b }}

// dirJob is a folder to list. fi, when set, is its lstat (or the root's
// stat) taken when it was found, which lets an unchanged listing be reused.
type dirJob struct {
	rel, abs string
	fi       fs.FileInfo
	// parentRules identifies the ignore rules that apply in the parent
	// folder (rulesKey); 0 when unknown, and then the folder's entries are
	// classified without the cache of its listing.
	parentRules uint64
}

type fileJob struct {
	rel string
	// abs is the file's absolute path; "" until absPath builds it from
	// dirAbs and the entry's name (an unchanged file in a folder open as
	// dir never needs it: its lstat is relative to dir, and it is not read).
	abs, dirAbs string
	name        string      // the entry's name in its folder; lstat on demand unless info is set
	info        fs.FileInfo // known already (a symlink's target)
	// dir, when set, is the open folder holding the file (entry's name):
	// the lstat is done relative to it (statAt). check releases it.
	dir *dirHandle
}

// dirHandle is a folder kept open while its files are checked. The walk
// holds one reference while it lists the folder and each queued file one;
// the last release closes it.
type dirHandle struct {
	f    *os.File // nil: fd is openDirPath's
	fd   int
	refs atomic.Int32
}

func (h *dirHandle) release() {
	if h.refs.Add(-1) == 0 {
		if h.f != nil {
			h.f.Close()
		} else {
			closeFD(h.fd)
		}
	}
}

// absPath is the file's absolute path.
func (j *fileJob) absPath() string {
	if j.abs == "" {
		j.abs = j.dirAbs + string(filepath.Separator) + j.name
	}
	return j.abs
}

// done releases the job's folder, once.
func (j *fileJob) done() {
	if j.dir != nil {
		j.dir.release()
		j.dir = nil
	}
}

type result struct {
	file *File
	skip skipEntry
	// kept is the saved entry whose parse result file takes (sameContent),
	// copied once the saved parse results are decoded (Saved.Decoded).
	kept *File
}

type batch struct {
	jobs    []fileJob
	results []result
}

// scanner walks folders and checks files. The walk runs on one goroutine;
// file checks (stat, 8 KiB sniff, parse) run on at most runtime.NumCPU()
// workers.
type scanner struct {
	w      *Workspace
	parent context.Context // the caller's context
	ctx    context.Context // the worker group's context
	start  time.Time
	old    *Snapshot // entries to reuse when size and mtime match; nil to read all
	saved  *Saved    // entries of a saved index, reused after the stamp check
	git    *pendingGit

	// The free tails of the slabs the listings are carved from (carve).
	slabBytes      []byte
	slabEntries    []listEntry
	slabClassified []classified
	batchHint      int // entries of the folder being listed (queue sizes a new batch by it)

	rules   *rules
	files   map[string]*File
	skipped map[string]skipEntry
	instr   []string

	visitedID   map[fileID]bool
	listings    map[string]*dirListing // folder listings for the new snapshot
	curDir      *dirHandle             // the folder dir is listing; nil outside dir
	visitedPath map[string]bool
	links       []dirJob // symlinked folders, walked after real ones
	stack       []dirJob

	g         *errgroup.Group
	cur       *batch
	batches   []*batch
	candidate int
	truncated bool

	seen, parsed atomic.Int64
}

func newScanner(ctx context.Context, w *Workspace, old *Snapshot, r *rules) *scanner {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.NumCPU())
	var files map[string]*File
	var nSkipped, nDirs int
	if old != nil { // a refresh: sized like the last scan, no rehashing
		nSkipped, nDirs = len(old.skipped), len(old.listings)
	} else {
		files = map[string]*File{}
	}
	return &scanner{
		w: w, parent: ctx, ctx: gctx, start: time.Now(), old: old, rules: r,
		files: files, skipped: make(map[string]skipEntry, nSkipped),
		visitedID: map[fileID]bool{}, visitedPath: map[string]bool{}, listings: make(map[string]*dirListing, nDirs),
		g: g,
	}
}

// fullScan walks the whole root and builds a new snapshot. old, when not
// nil, provides entries to reuse and the previous version.
func (w *Workspace) fullScan(ctx context.Context, old *Snapshot) (*Snapshot, error) {
	r, err := newRules(w.opts.Exclude, w.private)
	if err != nil {
		return nil, err
	}
	git := w.startGitUnlessStamped(ctx, old)
	sc := newScanner(ctx, w, old, r)
	if old == nil {
		sc.saved = w.opts.Saved
	}
	sc.git = git
	stop := sc.startProgress()
	err = sc.run("", w.root)
	stop()
	if err != nil {
		git.wait(ctx, nil)
		return nil, err
	}
	var version uint64 = 1
	if old != nil {
		version = old.version + 1
	}
	s := &Snapshot{
		version: version, root: w.root, skipped: sc.skipped,
		rules: sc.rules, instrCandidates: sc.instr, listings: sc.listings,
	}
	s.setFiles(sc.files, old)
	s.gitStamp = git.stamp
	w.finish(s, sc, git.wait(ctx, s))
	w.log.Debug("workspace scanned", "root", w.root, "files", s.summary.Stats.IndexedFiles,
		"elapsedMs", s.summary.Stats.ElapsedMs, "version", s.version)
	return s, nil
}

// finish fills the snapshot's summary: stats, project, instructions.
func (w *Workspace) finish(s *Snapshot, sc *scanner, git *GitInfo) {
	st := computeStats(s.files, s.skipped)
	st.Truncated = sc.truncated
	st.ElapsedMs = time.Since(sc.start).Milliseconds()
	s.summary = Summary{
		Root:         w.root,
		Project:      detectProject(w.root, s.paths, s.files, s.skipped),
		Stats:        st,
		Instructions: w.loadInstructions(s.instrCandidates),
		Excludes:     append(BuiltinExcludes(), w.opts.Exclude...),
	}
	s.summary.Project.Git = git
}

// run walks from the folder rel (abs on disk), then every symlinked folder
// found on the way, then waits for the file checks and merges their results.
func (sc *scanner) run(rel, abs string) error {
	fi, err := os.Stat(abs)
	if err == nil {
		sc.markVisited(abs, fi)
	} else {
		fi = nil
	}
	sc.stack = append(sc.stack, dirJob{rel: rel, abs: abs, fi: fi, parentRules: rootRules})
	err = sc.walk()
	sc.flush()
	if werr := sc.g.Wait(); err == nil {
		err = werr
	}
	if err == nil {
		err = sc.parent.Err()
	}
	if err != nil {
		return err
	}
	// A refresh that found every file unchanged shares the last
	// snapshot's map (setFiles keeps it) instead of building a copy
	// (GOROOT/src: 0.5 of a refresh's 1.1 MB).
	shared := false
	if sc.files == nil {
		if shared = sc.sameFilesAsOld(); shared {
			sc.files = sc.old.files
		} else {
			sc.files = make(map[string]*File, len(sc.old.files))
		}
	}
	waited := false
	for _, b := range sc.batches {
		for i, j := range b.jobs {
			res := b.results[i]
			if res.kept != nil {
				if !waited && sc.saved.Decoded != nil {
					sc.saved.Decoded()
				}
				waited = true
				res.file.Parsed = res.kept.Parsed
			}
			if res.file != nil {
				if !shared {
					sc.files[j.rel] = res.file
				}
			} else {
				sc.skipped[j.rel] = res.skip
			}
		}
	}
	sc.putBatches()
	return nil
}

// sameFilesAsOld reports whether the scan's files are the last
// snapshot's, entry for entry (a refresh where nothing changed).
func (sc *scanner) sameFilesAsOld() bool {
	n := 0
	for _, b := range sc.batches {
		for i, j := range b.jobs {
			res := b.results[i]
			if res.file == nil {
				continue
			}
			if res.kept != nil || sc.old.files[j.rel] != res.file {
				return false
			}
			n++
		}
	}
	return n == len(sc.old.files)
}

func (sc *scanner) walk() error {
	for !sc.truncated {
		if err := sc.ctx.Err(); err != nil {
			return err
		}
		if n := len(sc.stack); n > 0 {
			d := sc.stack[n-1]
			sc.stack = sc.stack[:n-1]
			if err := sc.dir(d); err != nil {
				return err
			}
			continue
		}
		if len(sc.links) == 0 {
			return nil
		}
		l := sc.links[0]
		sc.links = sc.links[1:]
		sc.followLink(l)
	}
	return nil
}

// markVisited records a folder; it reports false when it was seen before.
func (sc *scanner) markVisited(abs string, fi fs.FileInfo) bool {
	if id, ok := idOf(fi); ok {
		if sc.visitedID[id] {
			return false
		}
		sc.visitedID[id] = true
		return true
	}
	if sc.visitedPath[abs] {
		return false
	}
	sc.visitedPath[abs] = true
	return true
}

// followLink walks a symlinked folder when its target is inside the root
// and was not walked yet.
func (sc *scanner) followLink(l dirJob) {
	target, err := filepath.EvalSymlinks(l.abs)
	if err != nil {
		sc.skip(l.rel, skipEntry{reason: skipSymlinkLoop})
		return
	}
	if !within(sc.w.root, target) {
		sc.skip(l.rel, skipEntry{reason: skipOutsideRoot})
		return
	}
	fi, err := os.Stat(target)
	if err != nil {
		sc.skip(l.rel, skipEntry{reason: skipUnreadable})
		return
	}
	if !sc.markVisited(target, fi) {
		sc.skip(l.rel, skipEntry{reason: skipSymlinkLoop})
		return
	}
	sc.stack = append(sc.stack, dirJob{rel: l.rel, abs: target})
}

func (sc *scanner) skip(rel string, e skipEntry) {
	sc.seen.Add(1)
	sc.skipped[rel] = e
}

// dir lists one folder: it loads the folder's ignore files first, then
// classifies each entry.
func (sc *scanner) dir(d dirJob) error {
	if l := sc.oldListing(d); l != nil {
		// Unchanged since it was listed: its names and types are the same.
		sc.listings[d.rel] = l
		if fd, err := openDirPath(d.abs); err == nil {
			h := &dirHandle{fd: fd}
			h.refs.Store(1)
			sc.curDir = h
			defer func() { sc.curDir = nil; h.release() }()
		}
		sc.dirEntries(d, l.entries, l, true)
		return nil
	}
	// os.ReadDir, keeping the folder open for the lstat of its files.
	listedAt := time.Now()
	sc.w.dirReads.Add(1)
	f, err := openDir(d.abs)
	var entries []fs.DirEntry
	if err == nil {
		if entries, err = f.ReadDir(-1); err != nil {
			f.Close()
		}
	}
	if err != nil {
		if d.rel == "" {
			return err
		}
		sc.w.log.Debug("workspace: folder unreadable", "path", d.rel, "err", err)
		sc.skip(d.rel, skipEntry{reason: skipUnreadable})
		return nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	list := sc.compactEntries(entries)
	entries = nil
	l := sc.remember(d, list, listedAt)
	h := &dirHandle{f: f, fd: int(f.Fd())}
	h.refs.Store(1)
	sc.curDir = h
	defer func() { sc.curDir = nil; h.release() }()
	sc.dirEntries(d, list, l, false)
	return nil
}

// dirEntries classifies the sorted entries of the folder d: its ignore
// files first, then each entry. l is the folder's listing for the new
// snapshot (nil when it keeps none), reused when it is the last scan's.
// The listing caches each entry's path and exclude answer (classified)
// under the rules it was classified with: when they are the rules of now
// (same rulesKey: the same ignore files in this folder and every parent,
// the same .git/info/exclude), the entries are not matched against the
// ignore rules again.
func (sc *scanner) dirEntries(d dirJob, entries []listEntry, l *dirListing, reused bool) {
	key := sc.loadIgnores(d, entries)
	var cls []classified
	switch {
	case l == nil || key == 0:
	case reused && l.rules == key && l.complete:
		cls = l.cls // read only: the last snapshot holds it too
	default:
		if reused { // other rules: a new listing, classified again
			nl := *l
			l = &nl
			sc.listings[d.rel] = l
		}
		l.rules, l.complete = key, false
		l.cls = carve(&sc.slabClassified, len(entries))
		cls = l.cls
	}
	ro := reused && cls != nil && l.complete
	sc.batchHint = len(entries)
	for i, e := range entries {
		var c *classified
		var rel string
		if cls != nil {
			c = &cls[i]
			rel = c.rel
		}
		if rel == "" {
			rel = e.name
			if d.rel != "" {
				rel = sc.joinRel(d.rel, rel)
			}
		}
		if ro {
			cc := cls[i] // a copy: entry may record into it
			c = &cc
		} else if c != nil {
			c.rel = rel
		}
		sc.entry(rel, d.abs, "", e.name, e.typ, key, c)
		if sc.truncated {
			break
		}
	}
	if cls != nil && !ro && !sc.truncated {
		l.complete = true
	}
	// A folder's files go to the workers once a quarter batch has
	// gathered, from it and the folders before it: a batch (a goroutine, a
	// read buffer, two slices) per folder cost a refresh of the mixed tree,
	// ~1 500 folders of 5-6 files, 15-20% of its time (26-31 -> 21-23 ms;
	// GOROOT/src 25-26 -> 19-22). Each file keeps its own folder open.
	if sc.cur != nil && len(sc.cur.jobs) >= batchSize/4 {
		sc.flush()
	}
}

// loadIgnores reads the folder's .gitignore, .ignore and .task-xignore (in
// that precedence order) and, at the root, .git/info/exclude. It also notes
// build manifests (for outputDirs) and instruction file candidates. It
// returns the rulesKey of the folder: a hash of d.parentRules and the
// ignore files read here (0 when d.parentRules is 0).
func (sc *scanner) loadIgnores(d dirJob, entries []listEntry) uint64 {
	var list ignore.List
	manifest := false
	var h maphash.Hash
	h.SetSeed(rulesSeed)
	var kb [8]byte
	binary.LittleEndian.PutUint64(kb[:], d.parentRules)
	h.Write(kb[:])
	for _, want := range ignoreFileNames {
		for _, e := range entries {
			if e.name == want && !e.typ.IsDir() {
				if data, err := readSmall(filepath.Join(d.abs, want)); err == nil {
					list = append(list, ignore.Parse(data, d.rel)...)
					hashPart(&h, want, data)
				}
			}
		}
	}
	for _, e := range entries {
		name := e.name
		if isOutputManifest(name) && !e.typ.IsDir() {
			manifest = true
		}
		if isInstructionName(name) {
			rel := name
			if d.rel != "" {
				rel = d.rel + "/" + name
			}
			sc.instr = append(sc.instr, rel)
		}
	}
	if len(list) > 0 {
		sc.rules.perDir[d.rel] = list
	} else {
		delete(sc.rules.perDir, d.rel)
	}
	if manifest {
		sc.rules.outputParents[d.rel] = true
	} else {
		delete(sc.rules.outputParents, d.rel)
	}
	if d.rel == "" {
		if data, err := readSmall(filepath.Join(d.abs, ".git", "info", "exclude")); err == nil {
			sc.rules.info = ignore.Parse(data, "")
			hashPart(&h, "info/exclude", data)
		} else {
			sc.rules.info = nil
		}
	}
	if d.parentRules == 0 {
		return 0
	}
	return h.Sum64() | 1 // never 0
}

// rootRules is the parentRules of a full scan's root folder: the built-in
// excludes and the request's globs, which a workspace keeps for its life.
const rootRules = 1

var rulesSeed = maphash.MakeSeed()

// hashPart adds one ignore file (its name and content) to h.
func hashPart(h *maphash.Hash, name string, data []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(data)))
	h.WriteString(name)
	h.Write(n[:])
	h.Write(data)
}

// readSmall reads at most 1 MiB of a file (ignore files, manifests).
func readSmall(abs string) ([]byte, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileSize))
}

// entry classifies one listed path: folder (walk or exclude), symlink
// (resolve), regular file (queue a check), anything else (ignored).
//
// rules is the rulesKey of rel's folder, handed to a subfolder's walk; c,
// when not nil, caches the exclude answer of a folder or regular file
// (symlinks are classified each time: their target's type decides).
//
// dirAbs is the absolute path of the entry's folder and abs the entry's own
// ("" to build it from dirAbs and e's name: dirAbs is clean and the name is
// one element, so no filepath.Join, whose Clean was 7% of a refresh's CPU;
// a regular file's is built only when needed, see fileJob.absPath).
func (sc *scanner) entry(rel, dirAbs, abs, name string, typ fs.FileMode, rules uint64, c *classified) {
	if !utf8.ValidString(rel) {
		sc.skip(rel, skipEntry{reason: skipInvalidName})
		return
	}
	if abs == "" && !typ.IsRegular() {
		abs = dirAbs + string(filepath.Separator) + name
	}
	switch {
	case typ.IsDir():
		if sc.excludedSelf(c, rel, true) {
			sc.skipped[rel] = skipEntry{reason: skipExcludedDir}
			return
		}
		// An lstat, not e.Info (see check): the folder's own lstat now.
		fi, err := sc.lstatEntry(abs, name)
		if err != nil {
			sc.skip(rel, skipEntry{reason: skipVanished})
			return
		}
		if !sc.markVisited(abs, fi) {
			sc.skip(rel, skipEntry{reason: skipSymlinkLoop})
			return
		}
		sc.stack = append(sc.stack, dirJob{rel: rel, abs: abs, fi: fi, parentRules: rules})
	case typ&fs.ModeSymlink != 0:
		fi, err := os.Stat(abs)
		if err != nil {
			if sc.rules.excludedSelf(rel, false) {
				sc.skip(rel, skipEntry{reason: skipExcludedFile})
				return
			}
			// A broken link, or a link to itself (ELOOP).
			reason := skipUnreadable
			if errors.Is(err, fs.ErrNotExist) {
				if _, lerr := os.Lstat(abs); lerr != nil {
					reason = skipVanished
				}
			} else if isLoopErr(err) {
				reason = skipSymlinkLoop
			}
			sc.skip(rel, skipEntry{reason: reason})
			return
		}
		if fi.IsDir() {
			if sc.rules.excludedSelf(rel, true) {
				sc.skipped[rel] = skipEntry{reason: skipExcludedDir}
				return
			}
			sc.links = append(sc.links, dirJob{rel: rel, abs: abs})
			return
		}
		if !fi.Mode().IsRegular() {
			return
		}
		if sc.rules.excludedSelf(rel, false) {
			sc.skip(rel, skipEntry{reason: skipExcludedFile})
			return
		}
		target, err := filepath.EvalSymlinks(abs)
		if err != nil {
			sc.skip(rel, skipEntry{reason: skipUnreadable})
			return
		}
		if !within(sc.w.root, target) {
			sc.skip(rel, skipEntry{reason: skipOutsideRoot})
			return
		}
		sc.queue(fileJob{rel: rel, abs: abs, info: fi})
	case typ.IsRegular():
		if sc.excludedSelf(c, rel, false) {
			sc.skip(rel, skipEntry{reason: skipExcludedFile})
			return
		}
		j := fileJob{rel: rel, abs: abs, dirAbs: dirAbs, name: name}
		if h := sc.curDir; h != nil && sc.candidate < sc.w.opts.MaxFiles {
			h.refs.Add(1)
			j.dir = h
		}
		sc.queue(j)
	}
}

// lstatEntry is the lstat of the entry name of the folder being listed
// (abs is its path): relative to the folder's open handle where there is
// one, else by path.
func (sc *scanner) lstatEntry(abs, name string) (fs.FileInfo, error) {
	if h := sc.curDir; h != nil {
		if fi, err := statAt(h.fd, name); !errors.Is(err, errors.ErrUnsupported) {
			return fi, err
		}
	}
	return os.Lstat(abs)
}

// excludedSelf is the rules' answer for rel, from c's cache when it has
// one (c.excludedSelf); rulesMatched counts the answers computed.
func (sc *scanner) excludedSelf(c *classified, rel string, isDir bool) bool {
	if c != nil && c.known {
		return c.excluded
	}
	sc.w.rulesMatched.Add(1)
	return c.excludedSelf(sc.rules, rel, isDir)
}

func isLoopErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "too many levels of symbolic links")
}

// within reports whether target (absolute, resolved) is root or below it.
func within(root, target string) bool {
	rel, err := filepath.Rel(root, target)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// queue adds a file to the current batch, enforcing MaxFiles.
func (sc *scanner) queue(j fileJob) {
	if sc.candidate >= sc.w.opts.MaxFiles {
		sc.truncated = true
		return
	}
	sc.candidate++
	sc.seen.Add(1)
	if sc.cur == nil {
		if b, ok := batchPool.Get().(*batch); ok {
			sc.cur = b // a refresh reuses the last scan's
		} else {
			// Sized for the folder's entries, not grown by doubling: a
			// cold open holds every batch until the end of its scan.
			sc.cur = &batch{jobs: make([]fileJob, 0, max(1, min(batchSize, sc.batchHint)))}
		}
	}
	sc.cur.jobs = append(sc.cur.jobs, j)
	if len(sc.cur.jobs) >= batchSize {
		sc.flush()
	}
}

// batchPool holds batches whose results were merged (putBatches), for
// the next scan: a refresh of the mixed tree allocated ~1.8 of its 3.3 MB
// in them, and the GC that garbage called for made GOROOT/src's refreshes
// right after an open 10-20% slower.
var batchPool sync.Pool

// putBatches returns the scan's batches, merged, to batchPool.
func (sc *scanner) putBatches() {
	for _, b := range sc.batches {
		clear(b.jobs)
		clear(b.results)
		b.jobs, b.results = b.jobs[:0], b.results[:0]
		batchPool.Put(b)
	}
	sc.batches = nil
}

// flush hands the current batch to a worker. g.Go blocks while all workers
// are busy, which keeps the walk from running far ahead.
func (sc *scanner) flush() {
	b := sc.cur
	if b == nil || len(b.jobs) == 0 {
		return
	}
	sc.cur = nil
	if cap(b.results) < len(b.jobs) {
		b.results = make([]result, len(b.jobs))
	}
	b.results = b.results[:len(b.jobs)]
	sc.batches = append(sc.batches, b)
	sc.g.Go(func() error {
		bufp := readPool.Get().(*[]byte)
		defer readPool.Put(bufp)
		for i := range b.jobs {
			if err := sc.ctx.Err(); err != nil {
				for k := i; k < len(b.jobs); k++ {
					b.jobs[k].done()
				}
				return err
			}
			b.results[i] = sc.check(&b.jobs[i], bufp)
		}
		return nil
	})
}

// check stats one file and, unless an unchanged entry can be reused, reads
// its first 8 KiB for the binary check and the language, then parses it.
func (sc *scanner) check(j *fileJob, bufp *[]byte) result {
	if testHookBeforeRead != nil {
		testHookBeforeRead(j.rel)
	}
	var st statInfo
	known := false
	if j.info != nil {
		st, known = statOf(j.info), true
	} else if j.dir != nil {
		err := statAtInto(j.dir.fd, j.name, &st, (*bufp)[:0])
		j.done()
		if err == nil {
			known = true
		} else if !errors.Is(err, errors.ErrUnsupported) {
			return result{skip: skipEntry{reason: errReason(err)}}
		}
	}
	if !known {
		// Not entry.Info: on file systems without d_type it answers from
		// the lstat taken when the folder was listed, and a reused listing
		// (dirListing) may be old.
		info, err := lstatPath(j.absPath())
		if err != nil {
			return result{skip: skipEntry{reason: errReason(err)}}
		}
		st = statOf(info)
	}
	if !st.mode.IsRegular() {
		return result{skip: skipEntry{reason: skipVanished}}
	}
	size, mtime, ino, ctime := st.size, st.modTime, st.ino, st.ctime
	link := j.info != nil // only a symbolic link's job carries its target's stat
	if sc.saved != nil {
		if r, ok := sc.reuseSaved(j, size, mtime, ino, ctime); ok {
			return r
		}
		if old := sc.saved.Files[j.rel]; old == nil || old.Sum == 0 || old.Size != size || sc.w.opts.ParseSource == nil {
			// Neither the saved entry nor, by its size, its content: a
			// saved git state no longer holds, and git runs beside the
			// parse (the content check below decides for the rest).
			sc.git.changed()
		}
	}
	if sc.old != nil {
		if f, ok := sc.old.files[j.rel]; ok && f.Size == size && f.ModTime.Equal(mtime) && f.CTime == ctime && f.Link == link {
			return result{file: f}
		}
		if e, ok := sc.old.skipped[j.rel]; ok && (e.reason == skipBinary || e.reason == skipTooLarge) &&
			e.size == size && e.modTime.Equal(mtime) && e.ctime == ctime {
			return result{skip: e}
		}
	}
	if size > MaxFileSize {
		return result{skip: skipEntry{reason: skipTooLarge, size: size, modTime: mtime, ino: ino, ctime: ctime}}
	}
	sc.w.contentReads.Add(1)
	ambiguous := time.Since(mtime) < AmbiguousWindow
	rf, err := openRead(j.absPath())
	if err != nil {
		return result{skip: skipEntry{reason: errReason(err)}}
	}
	buf := *bufp
	n, err := readUpTo(rf, buf[:BinarySniffSize])
	if err != nil {
		rf.close()
		return result{skip: skipEntry{reason: skipUnreadable}}
	}
	head := buf[:n]
	if bytes.IndexByte(head, 0) >= 0 {
		rf.close()
		return result{skip: skipEntry{reason: skipBinary, size: size, modTime: mtime, ino: ino, ctime: ctime, ambiguous: ambiguous}}
	}
	file := &File{Path: j.rel, Language: detectLanguage(j.rel, head), Size: size, ModTime: mtime, Inode: ino, CTime: ctime, Link: link,
		Exec: st.mode&0o100 != 0}
	// With a ParseSource the whole file is read here, once, for the hash
	// and the parser (the head above is its start).
	var data []byte
	var readErr error
	if ps := sc.w.opts.ParseSource; ps != nil && n == BinarySniffSize {
		buf, readErr = readRest(rf, buf, n, size)
		*bufp = buf
		data = buf
	} else if ps != nil {
		data = head // the whole file: it ended within the head
	}
	rf.close()
	if ambiguous {
		// Hashed before the parser reads it: should it change in between,
		// the hash is of the older content and the next check reads again.
		if data != nil {
			if readErr == nil {
				file.Hash, file.Hashed = ContentHash(data), true
			}
		} else if data, err := os.ReadFile(j.absPath()); err == nil {
			file.Hash, file.Hashed = ContentHash(data), true
		}
	}
	if ps := sc.w.opts.ParseSource; ps != nil {
		if readErr == nil && int64(len(data)) == size {
			if file.Hashed {
				file.Sum = file.Hash
			} else {
				file.Sum = ContentHash(data)
			}
			if old := sc.sameContent(j.rel, file); old != nil {
				file.Symbols, file.ParseErr = old.Symbols, old.ParseErr
				if !sameForGit(file, old) {
					sc.git.changed()
				}
				return result{file: file, kept: old}
			}
		}
		sc.git.changed() // not the saved content
		if readErr != nil {
			file.ParseErr = readErr.Error()
		} else if res, err := ps(sc.ctx, file, data); err != nil {
			file.ParseErr = err.Error()
		} else {
			file.Parsed, file.Symbols = res.Data, res.Symbols
		}
		sc.parsed.Add(1)
	} else if p := sc.w.opts.Parse; p != nil {
		res, err := p(sc.ctx, j.absPath(), file)
		if err != nil {
			file.ParseErr = err.Error()
		} else {
			file.Parsed, file.Symbols = res.Data, res.Symbols
		}
		sc.parsed.Add(1)
	}
	return result{file: file}
}

// statOf is what check keeps of info.
func statOf(info fs.FileInfo) statInfo {
	return statInfo{size: info.Size(), modTime: info.ModTime(), mode: info.Mode(), ino: inodeOf(info), ctime: ctimeOf(info)}
}

// readUpTo reads from f until b is full or the file ends.
func readUpTo(f readFile, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
	}
	return n, nil
}

// readRest reads the rest of f, whose first n bytes are buf[:n], to its
// end, growing buf (once to size, the file's size when it was stated, and
// more if it grew since) and returning the whole content.
func readRest(f readFile, buf []byte, n int, size int64) ([]byte, error) {
	buf = buf[:n]
	if want := int(min(size, MaxFileSize)) + 1; cap(buf) < want {
		buf = slices.Grow(buf, want-n)
	}
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		m, err := f.read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
		if m == 0 {
			return buf, nil
		}
	}
}

// sameContent returns the saved entry of rel when file, read now with a
// stamp that is not the saved one, has the content that entry was parsed
// from: the same size, language, link-ness and content hash (File.Sum).
// Its parse result then stands for file's (a touched file, a checkout
// back and forth), without a parse.
func (sc *scanner) sameContent(rel string, file *File) *File {
	if sc.saved == nil {
		return nil
	}
	if old := sc.saved.Files[rel]; old != nil && file.SameContent(old) {
		return old
	}
	return nil
}

// reuseSaved returns the saved entry of j when the file's stamp is the
// saved one (and, for a hashed entry, its content hashes the same).
func (sc *scanner) reuseSaved(j *fileJob, size int64, mtime time.Time, ino uint64, ctime int64) (result, bool) {
	if f, ok := sc.saved.Files[j.rel]; ok && f.Path == j.rel && f.Size == size && f.ModTime.Equal(mtime) && f.Inode == ino && f.CTime == ctime && f.Link == (j.info != nil) {
		if !f.Hashed {
			return result{file: f}, true
		}
		sc.w.contentReads.Add(1)
		if data, err := os.ReadFile(j.absPath()); err == nil && int64(len(data)) == size && ContentHash(data) == f.Hash {
			return result{file: f}, true
		}
		return result{}, false
	}
	if e, ok := sc.saved.Skipped[j.rel]; ok && e.Size == size && e.ModTime.Equal(mtime) && e.Inode == ino && e.CTime == ctime {
		// A binary file stays binary only while its head is unchanged,
		// which the stamp vouches for as it does for indexed files; a file
		// over the limit is over it by its size alone.
		if !e.Binary && size > MaxFileSize {
			return result{skip: skipEntry{reason: skipTooLarge, size: size, modTime: mtime, ino: ino, ctime: ctime}}, true
		}
		if e.Binary {
			return result{skip: skipEntry{reason: skipBinary, size: size, modTime: mtime, ino: ino, ctime: ctime}}, true
		}
	}
	return result{}, false
}

func errReason(err error) skipReason {
	if errors.Is(err, fs.ErrNotExist) {
		return skipVanished
	}
	return skipUnreadable
}

// startProgress calls Options.Progress from one goroutine, each call at
// least ProgressInterval after the previous one returned. The returned stop
// function ends it and waits for it.
func (sc *scanner) startProgress() (stop func()) {
	cb := sc.w.opts.Progress
	if cb == nil {
		return func() {}
	}
	total := 0
	if sc.old != nil {
		total = len(sc.old.files) + len(sc.old.skipped)
	} else if sc.saved != nil {
		total = len(sc.saved.Files) + len(sc.saved.Skipped)
	} else {
		total = gitIndexEntries(sc.w.root) // a first scan: git's tracked files, if any
	}
	since := sc.start
	if sc.old == nil && !sc.w.opts.Since.IsZero() {
		since = sc.w.opts.Since
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				stage := ""
				if sc.saved != nil && sc.parsed.Load() == 0 {
					stage = "loading"
				}
				files := int(sc.seen.Load())
				if total > 0 && files > total {
					total = files // an estimate; never report past 100%
				}
				cb(Progress{
					Phase:     "indexing",
					Stage:     stage,
					Files:     files,
					Parsed:    int(sc.parsed.Load()),
					Total:     total,
					ElapsedMs: time.Since(since).Milliseconds(),
				})
				t.Reset(ProgressInterval)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
