// Package workspace owns the index of an open workspace folder: the scan and
// its excludes (built-ins, .gitignore at every level, .git/info/exclude,
// .ignore, .task-xignore, the request's globs), immutable versioned
// snapshots of the indexed files, project detection (name, kinds,
// manifests, languages, commands, git state), the instruction files
// (AGENTS.md, CLAUDE.md, ...) and indexing progress callbacks.
//
// Source: spec/protocol.md (workspace/open, workspace/progress,
// workspace/refresh, workspace/filesChanged, context/inspect) and
// spec/addendum.md §2 (the summary shape) and §11 (excluded files).
//
// Readers call Workspace.Snapshot and keep the *Snapshot as long as they
// need: it never changes. Refresh and FilesChanged build a new snapshot and
// publish it with an atomic pointer swap; they are serialized among
// themselves and never block readers.
//
// Decisions (see also the doc comments of Stats and Options):
//   - vendor/ is not a built-in exclude (Go's vendor tree is source people
//     read; ripgrep does not skip it either).
//   - target/, dist/, build/ and out/ are excluded only next to a build
//     manifest (package.json, Cargo.toml, pom.xml, ...), so Go's go/build
//     package stays indexed.
//   - Built-in excludes and the request's globs cannot be undone by a "!"
//     line in an ignore file; within ignore files git's precedence holds.
//   - A request glob without "/" matches the base name at any depth too
//     ("*.log" excludes "a/b.log"); one with "/" matches the whole
//     root-relative path (doublestar syntax).
//   - Symlinked files are indexed when their target is inside the root;
//     symlinked folders are walked after all real folders, only when their
//     target is inside the root and was not walked yet (device and inode).
package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// ErrInvalidRoot is wrapped by the error Open returns when the root is not
// an absolute path to an existing folder.
var ErrInvalidRoot = errors.New("invalid workspace root")

// Limits of the index (addendum §2).
const (
	DefaultMaxFiles = 200_000
	// MaxFileSize is the largest file indexed, in bytes (1 MiB).
	MaxFileSize = 1 << 20
	// BinarySniffSize is how many leading bytes are checked for a NUL.
	BinarySniffSize = 8 << 10
	// ProgressInterval is the least time between two Progress callbacks.
	ProgressInterval = 150 * time.Millisecond
)

// ParseResult is what a Parser returns for one file.
type ParseResult struct {
	// Symbols is the number of symbols found (summed into stats.symbols).
	Symbols int
	// Data is stored as File.Parsed for later packages (symbols, imports).
	Data any
}

// Parser parses one indexed file. abs is its absolute path; f is the entry
// being built (Path, Language, Size and ModTime are set; do not keep or
// modify f). It is called in parallel for different files and must be safe
// for concurrent use. An error counts in stats.parseErrors; the file stays
// indexed. Unchanged files (same size, modification time and inode change
// time) are not parsed again by Refresh.
type Parser func(ctx context.Context, abs string, f *File) (ParseResult, error)

// SourceParser is a Parser given the file's content, read by the scan
// (one open and read per file, for the binary check, the hash and the
// parse). src is only valid during the call (the scan reuses its buffer):
// keep no part of it.
type SourceParser func(ctx context.Context, f *File, src []byte) (ParseResult, error)

// Options configure Open. A nil *Options means all defaults.
type Options struct {
	// Exclude holds the request's exclude globs (doublestar "**" syntax).
	// An invalid glob makes Open fail.
	Exclude []string
	// MaxFiles caps the files indexed; default DefaultMaxFiles. Over it the
	// walk stops and Stats.Truncated is set.
	MaxFiles int
	// Home is the user's home folder for ~/.task-x/instructions.md; default
	// os.UserHomeDir(). Set it to "-" to load no user instructions.
	Home string
	// Logger receives diagnostics (paths and counts, never file contents);
	// default discards.
	Logger *slog.Logger
	// Progress is called with phase "indexing" while a scan runs, at most
	// once per ProgressInterval and never concurrently.
	Progress func(Progress)
	// Since, when set, is when the caller's operation began (workspace/open
	// loads a saved index before the scan): the first scan's Progress
	// ElapsedMs counts from it, so the phases of one open never go back in
	// time. Refreshes count from their own start.
	Since time.Time
	// Parse, when set, is called for each new or changed indexed file.
	Parse Parser
	// ParseSource, when set, is called instead of Parse with the file's
	// content (SourceParser). A file whose content cannot be read to its
	// end is indexed with that error as its parse error.
	ParseSource SourceParser
	// GitTimeout bounds the git commands of project detection; default 3s.
	GitTimeout time.Duration
	// Git, when set, is the git state StartGit began reading for this
	// root: the first scan uses it instead of running git itself. One
	// started for another root is ignored.
	Git *GitProbe
	// Private are absolute folders the runtime itself writes (the data
	// folder, its worktrees): one inside the root is excluded like a
	// built-in folder (never indexed, listed or returned by a tool) but,
	// not being the user's rule, is not listed in Summary.Excludes. A
	// folder that does not exist yet is resolved through its nearest
	// existing parent; one outside the root, the root itself or a parent
	// of it is ignored.
	Private []string
	// Saved, when set, holds the entries of a saved index. Open's scan
	// reuses a saved entry, without reading or parsing the file, when the
	// file's size, modification time, inode and inode change time
	// (File.CTime) are the saved ones and,
	// for an entry with a hash (File.Hashed), its content hashes the same;
	// anything else is read as new. While nothing had to be parsed, the
	// scan's progress is phase "indexing" with stage "loading".
	Saved *Saved
	// SavedGit, with Saved, is the git state the saved index was made
	// under (Snapshot.SavedGit). When git's stamp is the saved one, the
	// first scan starts git's commands only once it meets a file that is
	// not its saved entry, and when it ends having seen exactly the saved
	// entries it takes the saved state instead: the rule a refresh follows
	// (sameEntries), across a restart. Ignored when Git is set.
	SavedGit *SavedGit
}

// SavedGit is a snapshot's git state as a saved index keeps it: git's
// stamp taken before the commands ran, their answer, and the skipped
// paths other than binary and too-large files (excluded folders and
// files, unreadable, vanished...) with their reasons, which the saved
// file entries do not hold but sameEntries compares.
type SavedGit struct {
	Stamp  string
	Info   GitInfo
	Others map[string]uint8
}

// maxSavedGitOthers bounds SavedGit.Others: a snapshot with more such
// paths offers no git state (git runs on every reopen, as before).
const maxSavedGitOthers = 4096

// Saved is what a saved index offers Open (Options.Saved): file entries by
// root-relative path, to be trusted only after the stamp check, and the
// stamps of binary and too-large files.
type Saved struct {
	Files   map[string]*File
	Skipped map[string]SkippedFile
	// Decoded, when set, returns once every saved entry's Parsed is final
	// (the saved parse results may be decoded while the scan runs). The
	// scan calls it, at its end, before it gives a file read with a new
	// stamp and the saved content the saved entry's parse result
	// (File.Sum).
	Decoded func()
}

// defaultGitTimeout is Options.GitTimeout's default.
const defaultGitTimeout = 3 * time.Second

// AmbiguousWindow is how close to its read a file's modification time
// makes its stamp ambiguous (File.Hash).
const AmbiguousWindow = 2 * time.Second

// ContentHash is the content hash of File.Hash: the first 8 bytes of
// SHA-256.
func ContentHash(data []byte) uint64 {
	sum := sha256.Sum256(data)
	return binary.LittleEndian.Uint64(sum[:8])
}

// Progress is one workspace/progress notification of phase "indexing".
// Total (additive, 0 when unknown) is what Files is expected to reach: the
// number of entries the previous scan of this folder saw (or the saved
// index held), and on a first scan of a git repository's top folder an
// estimate, the number of files in git's index (`git ls-files`; untracked
// files and excluded folders make the final count differ). The walk is
// paced by the file checks, so the scan itself knows its count only at
// the end.
//
// Phase is one of protocol.md's (indexing, graph, ready, updated, failed):
// a new value of an existing field is not an additive change. Stage
// (additive, optional) says which part of a phase runs: "loading" in
// indexing while a saved index is revalidated and nothing had to be
// parsed, "retrieval" in graph while the retrieval index is built.
type Progress struct {
	Phase     string `json:"phase"`
	Stage     string `json:"stage,omitempty"`
	Files     int    `json:"files"`
	Parsed    int    `json:"parsed"`
	Total     int    `json:"total,omitempty"`
	ElapsedMs int64  `json:"elapsedMs"`
}

// Summary is the workspace summary of workspace/open, workspace/refresh and
// context/inspect (addendum §2).
type Summary = protocol.WorkspaceSummary

// Stats counts what a scan saw (addendum §2; fields after ParseErrors in
// Skipped are additive).
//
// Files counts every path the walk met that is not a folder it entered:
// indexed files plus skipped ones (excluded files, binary, too large,
// unreadable, vanished, symlink loops, symlinks leaving the root, invalid
// names). An excluded folder counts once in Skipped.Excluded and not in
// Files; nothing below it is seen. IndexedFiles counts indexed files and
// Bytes sums their sizes. Symbols and ParseErrors stay 0 without a Parser.
type Stats = protocol.WorkspaceStats

// Skipped counts paths seen but not indexed. Binary, TooLarge and Excluded
// are addendum §2; the others are additive:
//   - Unreadable: a file or folder that could not be opened or listed, or a
//     broken symlink;
//   - Vanished: a file listed but gone when read;
//   - SymlinkLoop: a symlinked folder whose target was already walked (a
//     loop, or a second path to the same folder);
//   - OutsideRoot: a symlink whose target is outside the root;
//   - InvalidName: a name that is not valid UTF-8 (it could not round-trip
//     through JSON).
type Skipped = protocol.SkippedStats

// Workspace is an open workspace folder.
type Workspace struct {
	root string
	opts Options
	log  *slog.Logger
	// private holds Options.Private as root-relative folders (only those
	// strictly inside the root).
	private map[string]bool

	snap atomic.Pointer[Snapshot]
	mu   sync.Mutex // serializes writers (Refresh, FilesChanged)

	// contentReads counts files whose content was opened (a test hook that
	// proves Refresh does not read unchanged files).
	contentReads atomic.Int64
	// gitRuns counts reads of the git state by running git (a test hook
	// that proves an unchanged refresh does not run git).
	gitRuns atomic.Int64
	// dirReads counts folders listed from disk (a test hook that proves a
	// refresh reuses the listings of unchanged folders).
	dirReads atomic.Int64
	// rulesMatched counts entries matched against the exclude rules by
	// full scans (a test hook that proves a listing's cached answers are
	// used).
	rulesMatched atomic.Int64
}

// Open scans root and returns the workspace with its first snapshot. root
// must be an absolute path to an existing folder; otherwise the error wraps
// ErrInvalidRoot. An invalid exclude glob is an error too. ctx cancels the
// scan.
func Open(ctx context.Context, root string, opts *Options) (*Workspace, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.GitTimeout <= 0 {
		o.GitTimeout = defaultGitTimeout
	}
	if o.Home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			o.Home = h
		}
	}
	o.Exclude = append([]string(nil), o.Exclude...)
	if root == "" || !filepath.IsAbs(root) {
		return nil, fmt.Errorf("workspace: root %q is not an absolute path: %w", root, ErrInvalidRoot)
	}
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("workspace: root %q: %v: %w", root, errors.Unwrap(err), ErrInvalidRoot)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, fmt.Errorf("workspace: root %q: %v: %w", root, err, ErrInvalidRoot)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace: root %q is not a folder: %w", root, ErrInvalidRoot)
	}
	if _, err := newRules(o.Exclude, nil); err != nil {
		return nil, err
	}
	w := &Workspace{root: filepath.Clean(resolved), opts: o, log: o.Logger}
	w.private = privateRels(w.root, o.Private)
	s, err := w.fullScan(ctx, nil)
	w.opts.Saved, w.opts.Git = nil, nil // only the first scan may use them
	if err != nil {
		return nil, err
	}
	w.snap.Store(s)
	return w, nil
}

// Root returns the absolute root with symlinks resolved.
func (w *Workspace) Root() string { return w.root }

// Snapshot returns the current snapshot. It never blocks.
func (w *Workspace) Snapshot() *Snapshot { return w.snap.Load() }

// Summary returns the current snapshot's summary.
func (w *Workspace) Summary() Summary { return w.snap.Load().summary }

// Refresh scans the root again and publishes a new snapshot. Files with the
// same size, modification time and inode change time keep their entry
// (they are not read or parsed again). On error the current snapshot stays.
func (w *Workspace) Refresh(ctx context.Context) (Summary, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, err := w.fullScan(ctx, w.snap.Load())
	if err != nil {
		return Summary{}, err
	}
	w.snap.Store(s)
	return s.summary, nil
}

// privateRels turns the absolute folders of Options.Private into
// root-relative folder paths, keeping those strictly inside root
// (resolved).
func privateRels(root string, dirs []string) map[string]bool {
	var out map[string]bool
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		rel, err := filepath.Rel(root, resolvePartial(filepath.Clean(d)))
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[filepath.ToSlash(rel)] = true
	}
	return out
}

// resolvePartial resolves the symlinks of abs's longest existing prefix
// and appends the rest: a data folder the runtime has not created yet
// still maps to where it will be.
func resolvePartial(abs string) string {
	rest := ""
	for p := abs; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// cleanRel turns a root-relative path into the index's form: "/"-separated,
// cleaned, no leading "./" or "/"; "" for the root itself.
func cleanRel(rel string) string {
	rel = filepath.ToSlash(rel)
	if rel == "" || rel == "." {
		return ""
	}
	rel = strings.TrimPrefix(filepath.ToSlash(filepath.Clean(rel)), "/")
	if rel == "." {
		return ""
	}
	return rel
}
