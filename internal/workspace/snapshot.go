package workspace

import (
	"slices"
	"sort"
	"time"
)

// File is one indexed file of a snapshot. It is immutable once published:
// a later snapshot that keeps the file shares the same *File.
type File struct {
	// Path is relative to the root with "/".
	Path string
	// Language is detected from the name, the extension or a "#!" line:
	// go, rust, typescript, tsx, javascript, python, java, c, cpp, csharp,
	// ruby, bash, markdown, json, yaml, toml, ... ("" when unknown).
	Language string
	// Size is in bytes; ModTime is the file's modification time.
	Size    int64
	ModTime time.Time
	// Parsed is what Options.Parse returned for this file (nil without a
	// parser or when parsing failed).
	Parsed any
	// Symbols is the symbol count the parser reported.
	Symbols int
	// ParseErr is the parser's error text, "" when it succeeded.
	ParseErr string
	// Inode is the file's inode when it was read (0 where the platform
	// gives none). With Size, ModTime and CTime it is the stamp a saved
	// index is revalidated by (Options.Saved).
	Inode uint64
	// CTime is the file's inode change time in ns when it was read (0
	// where the platform gives none; Linux only for now). A user cannot
	// set it, so a file rewritten with the same size and its mtime put
	// back (cp -p, rsync -t, os.Chtimes) has a new one: Refresh and a
	// saved index reuse an entry only when it is unchanged too.
	CTime int64
	// Hash, when Hashed, is ContentHash of the content that was read. It
	// is taken when the stamp is ambiguous: the modification time was less
	// than AmbiguousWindow before the read, so a later write could keep the
	// same size and time (coarse timestamps, git's "racily clean" case).
	Hash   uint64
	Hashed bool
	// Sum is ContentHash of the content the parse result was made from
	// (Options.ParseSource; 0 when not taken). A saved entry whose file
	// has a new stamp but this content (touched, checked out back and
	// forth) lends the new entry its parse result instead of a parse.
	Sum uint64
	// Link is true when Path is a symbolic link (to a regular file inside
	// the root; the stamp is the target's). A saved or earlier entry is
	// reused only when the scan sees the same, so a file the index holds
	// is a link exactly when its Link says so as of the scan that checked
	// it (callers that care about the link's target, such as the secret
	// file check, need not lstat the others).
	Link bool
	// Exec is the file's owner-execute bit when it was read: git records
	// it (core.filemode), so a saved git state holds for a file with a
	// new stamp and the saved content only while it is the same.
	Exec bool
}

// SameContent reports whether f has the content old was read with, by
// their content hashes (Sum, taken for parsed files), sizes, languages and
// link-ness: a file with a new stamp and the saved bytes.
func (f *File) SameContent(old *File) bool {
	return f.Sum != 0 && f.Sum == old.Sum && f.Size == old.Size && f.Language == old.Language && f.Link == old.Link
}

// SkippedFile is the stamp of a file seen but not indexed because it is
// binary or too large, kept so a saved index need not read it again.
type SkippedFile struct {
	// Binary is true for a binary file, false for one over MaxFileSize.
	Binary  bool
	Size    int64
	ModTime time.Time
	Inode   uint64
	CTime   int64 // as File.CTime
}

// SkippedFiles returns the binary and too-large files of s by
// root-relative path (a new map), without binary files whose stamp was
// ambiguous when they were read.
func (s *Snapshot) SkippedFiles() map[string]SkippedFile {
	out := map[string]SkippedFile{}
	for p, e := range s.skipped {
		if (e.reason == skipBinary && !e.ambiguous) || e.reason == skipTooLarge {
			out[p] = SkippedFile{Binary: e.reason == skipBinary, Size: e.size, ModTime: e.modTime, Inode: e.ino, CTime: e.ctime}
		}
	}
	return out
}

// SavedGit returns s's git state for a saved index (Options.SavedGit), or
// nil when s has none to offer: no git stamp (not a plain repository),
// no answer from git, a repository nested in the root (nestedRepo), or
// more than maxSavedGitOthers other skipped paths.
func (s *Snapshot) SavedGit() *SavedGit {
	g := s.summary.Project.Git
	if s.gitStamp == "" || g == nil || s.nestedRepo() {
		return nil
	}
	others := map[string]uint8{}
	for p, e := range s.skipped {
		if e.reason == skipBinary || e.reason == skipTooLarge {
			continue
		}
		if len(others) == maxSavedGitOthers {
			return nil
		}
		others[p] = uint8(e.reason)
	}
	return &SavedGit{Stamp: s.gitStamp, Info: *g, Others: others}
}

// skipReason says why a seen path is not indexed.
type skipReason uint8

const (
	skipExcludedFile skipReason = iota + 1
	skipExcludedDir
	skipBinary
	skipTooLarge
	skipUnreadable
	skipVanished
	skipSymlinkLoop
	skipOutsideRoot
	skipInvalidName
)

// skipEntry records a seen, not indexed path. size and modTime are kept
// for binary and too-large files so Refresh need not read them again.
type skipEntry struct {
	reason  skipReason
	size    int64
	modTime time.Time
	ino     uint64
	ctime   int64
	// ambiguous marks a binary file whose stamp was ambiguous when it was
	// read (File.Hash): it is not offered to a saved index.
	ambiguous bool
}

// Snapshot is an immutable, versioned view of the index: the indexed files,
// the exclude rules, the summary and the instructions. Readers hold a
// *Snapshot for as long as they like; writers publish a new one.
type Snapshot struct {
	version uint64
	root    string
	files   map[string]*File
	paths   []string // sorted keys of files
	skipped map[string]skipEntry
	rules   *rules
	// instrCandidates are root-relative paths of instruction files or
	// folders (.clinerules, .cursor, .github, .task-x) seen by the walk in
	// folders that are not excluded.
	instrCandidates []string
	summary         Summary
	// filesID is shared by consecutive snapshots whose indexed files are
	// the same *File entries (a refresh that found nothing changed), so
	// caches derived from the files alone can be kept (SameFiles).
	filesID *filesIdentity
	// gitStamp is Workspace.gitStamp taken before this snapshot's git
	// state was read ("" when none could be made).
	gitStamp string
	// listings are the folder listings of the scan that made this
	// snapshot, by root-relative folder path, for the next scan to reuse
	// (scanner.oldListing).
	listings map[string]*dirListing
}

// filesIdentity is the identity of one set of indexed files (not
// zero-sized: distinct allocations must compare unequal).
type filesIdentity struct{ _ byte }

// SameFiles reports whether s and o hold the very same indexed files: same
// paths and, for each, the same *File (so the same size, modification
// time, language and parse result). It is true for consecutive snapshots
// of one workspace when a refresh or filesChanged found nothing changed,
// and lets caches derived from the files alone (the project graph, the
// retrieval index) survive them. It is false when either is nil.
func (s *Snapshot) SameFiles(o *Snapshot) bool {
	return s != nil && o != nil && s.filesID == o.filesID
}

// setFiles installs files in s: when they are the same entries as old's,
// old's map, sorted paths and files identity are shared; otherwise the
// paths are sorted and a new identity is made.
func (s *Snapshot) setFiles(files map[string]*File, old *Snapshot) {
	if old != nil && len(old.files) == len(files) {
		same := true
		for p, f := range files {
			if old.files[p] != f {
				same = false
				break
			}
		}
		if same {
			s.files, s.paths, s.filesID = old.files, old.paths, old.filesID
			return
		}
	}
	s.files, s.paths, s.filesID = files, sortedPaths(files), &filesIdentity{}
}

// Version increases by one with each published snapshot, starting at 1.
func (s *Snapshot) Version() uint64 { return s.version }

// Root is the absolute workspace root with symlinks resolved.
func (s *Snapshot) Root() string { return s.root }

// Files returns the sorted root-relative paths ("/"-separated) of the
// indexed files. The slice is a copy the caller may modify.
func (s *Snapshot) Files() []string { return slices.Clone(s.paths) }

// BytesAtLeast is the indexed files' bytes with each file counted as at
// least min bytes (the heap limit's measure of a project, which counts
// every file's own entry and records even when the file is tiny).
func (s *Snapshot) BytesAtLeast(min int64) int64 {
	var n int64
	for _, f := range s.files {
		n += max(f.Size, min)
	}
	return n
}

// Len returns the number of indexed files.
func (s *Snapshot) Len() int { return len(s.paths) }

// File returns the indexed file at rel (root-relative, "/"-separated).
func (s *Snapshot) File(rel string) (*File, bool) {
	f, ok := s.files[rel]
	return f, ok
}

// Excluded reports whether rel (root-relative, "/"-separated) is excluded by
// the full rule set: built-in excludes, .gitignore files at every level,
// .git/info/exclude, .ignore, .task-xignore and the request's globs. A path
// inside an excluded folder is excluded whatever later rules say. isDir
// marks a folder (for "dir/" rules). It answers for paths the snapshot has
// never seen too, from the rules it holds.
func (s *Snapshot) Excluded(rel string, isDir bool) bool {
	rel = cleanRel(rel)
	if rel == "" {
		return false
	}
	return s.rules.excluded(rel, isDir)
}

// Summary returns the workspace summary of this snapshot (addendum §2).
// Its slices and maps are shared: callers must not modify them.
func (s *Snapshot) Summary() Summary { return s.summary }

// Instructions returns all loaded instruction files: user, workspace and
// directory scope.
func (s *Snapshot) Instructions() []Instruction { return s.summary.Instructions }

// InstructionsFor returns the instructions that apply to work on rel: the
// user and workspace ones, plus the directory-scoped ones whose Dir is rel
// or one of its ancestors. The order is user, workspace, then directories
// from shallow to deep (more specific last).
func (s *Snapshot) InstructionsFor(rel string) []Instruction {
	rel = cleanRel(rel)
	var out []Instruction
	for _, in := range s.summary.Instructions {
		if in.Scope != ScopeDirectory {
			out = append(out, in)
			continue
		}
		if rel == in.Dir || (len(rel) > len(in.Dir) && rel[len(in.Dir)] == '/' && rel[:len(in.Dir)] == in.Dir) {
			out = append(out, in)
		}
	}
	return out
}

// sortedPaths returns the sorted keys of files.
func sortedPaths(files map[string]*File) []string {
	out := make([]string, 0, len(files))
	for p := range files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// computeStats derives the stats of a snapshot from its entries.
func computeStats(files map[string]*File, skipped map[string]skipEntry) Stats {
	var st Stats
	st.IndexedFiles = len(files)
	for _, f := range files {
		st.Bytes += f.Size
		st.Symbols += f.Symbols
		if f.ParseErr != "" {
			st.ParseErrors++
		}
	}
	for _, e := range skipped {
		switch e.reason {
		case skipExcludedFile:
			st.Skipped.Excluded++
		case skipExcludedDir:
			st.Skipped.Excluded++
			continue // a folder is not a file seen
		case skipBinary:
			st.Skipped.Binary++
		case skipTooLarge:
			st.Skipped.TooLarge++
		case skipUnreadable:
			st.Skipped.Unreadable++
		case skipVanished:
			st.Skipped.Vanished++
		case skipSymlinkLoop:
			st.Skipped.SymlinkLoop++
		case skipOutsideRoot:
			st.Skipped.OutsideRoot++
		case skipInvalidName:
			st.Skipped.InvalidName++
		}
		st.Files++
	}
	st.Files += st.IndexedFiles
	return st
}
