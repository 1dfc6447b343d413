// Package project owns one open project: the workspace index (scan,
// snapshots, parsed symbols), the import/reference graph cache, the
// retrieval index cache and the edit log, opened the same way by every
// front end (the protocol server's workspace/open, `task-x-runtime
// --mcp-server --root DIR`, and a subagent's worktree). Tools read it
// through tool.Env (Env), tasks through the task layer; front ends never
// assemble these parts themselves. Rel is the one rule that turns a
// client's path into a root-relative one.
//
// Source: ../shared/spec/protocol.md (workspace/open, graph/*, context/*,
// edits/*; "Claude Code engine and the task-x tools") and addendum §2, §3,
// §4. docs/layers.md describes the layers.
package project

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/fsx"
	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// Options configure Open. A nil *Options is the zero value.
type Options struct {
	// DataDir holds the edit log's checkpoint
	// (dataDir/checkpoints/<workspace id>.json) and the saved index
	// (IndexPath); "" keeps both in memory. A data folder that cannot be
	// written to (permissions, a read-only mount) is only read: its saved
	// index is used, the edit log is kept in memory and nothing is saved
	// (one warning in the log).
	DataDir string
	// Exclude are the extra exclude globs (workspace/open exclude).
	Exclude []string
	// Home is the user's home folder (user instruction files).
	Home string
	// Logger receives diagnostics; default discards.
	Logger *slog.Logger
	// Progress receives the scan's progress.
	Progress func(workspace.Progress)
	// NoParse skips tree-sitter parsing (tests, benchmarks).
	NoParse bool
	// BuildRetrieval says the caller builds the retrieval index right
	// after Open (Project.BuildRetrieval, as workspace/open does): the
	// index is then first saved SaveDelay after that build rather than
	// after Open.
	BuildRetrieval bool
	// Redact shows a held key as [redacted] in the edit log's diffs
	// (editlog.Options.Redact); nil shows them as they are.
	Redact func(string) string
	// protectReleased (tests) makes the parts of the mapped index file
	// its decoders released unreadable (mapIndex), so a read of one
	// after its release is a decode error.
	protectReleased bool
}

// ErrOutside is Rel's error for a path outside the root.
var ErrOutside = errors.New("outside the workspace root")

// Project is one open project. It is safe for concurrent use and
// implements tool.Project.
type Project struct {
	ws      *workspace.Workspace
	edits   *editlog.Log
	dataDir string
	log     *slog.Logger
	graph   graph.Cache

	retrievalOnce sync.Once
	retrieval     *retrieve.Cache
	rebuilding    atomic.Bool // a background retrieval rebuild is pending

	saver *saver // nil without a dataDir
	mem   *memBudget
	// memSnap is the snapshot mem's share was last set from (setMem).
	memSnap atomic.Pointer[workspace.Snapshot]
	// openSave is set from an Open with Options.BuildRetrieval until its
	// BuildRetrieval schedules the open's first save.
	openSave atomic.Bool
}

var _ tool.Project = (*Project)(nil)

// Open scans root (absolute) and opens its edit log. With a DataDir it
// first loads the saved index (IndexPath): every saved file is revalidated
// by its stamp during the scan and only new or changed files are parsed;
// a saved index that fails a check is ignored (logged) and the folder is
// indexed from scratch. Progress then reports phase "indexing" with stage
// "loading" first, and without a stage only when files had to be parsed. The index is saved in the
// background after open and after updates. workspace.ErrInvalidRoot is
// returned (wrapped) for a root that is not a readable folder.
func Open(ctx context.Context, root string, opts *Options) (*Project, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	wo := &workspace.Options{Exclude: o.Exclude, Home: o.Home, Logger: o.Logger, Progress: o.Progress, Since: start,
		Private: privateDirs(o.DataDir)}
	var sv *saver
	var saved *savedIndex
	if o.DataDir != "" {
		if resolved, err := filepath.EvalSymlinks(filepath.Clean(root)); err == nil {
			sv = &saver{path: IndexPath(o.DataDir, resolved), engine: engineKey(!o.NoParse)}
			// The decoded records take 3-4x the index file's bytes (mixed
			// tree: 12 MB file, ~45 MB of heap; GOROOT/src 29 MB, ~90 MB):
			// a block of 3x fresh heap bytes becomes huge-page backed
			// first, before git's processes start and compete with its
			// collection. A larger one (16 MiB + 4x) saved more CPU but
			// raised the reopen's VmHWM by 3 MB (2 MiB pages the rest of
			// the reopen filled partly); 3x did not.
			indexFile := false
			if fi, err := os.Lstat(sv.path); err == nil && fi.Mode().IsRegular() {
				hugeHeap(3 * fi.Size())
				indexFile = true
			}
			if !indexFile {
				// git's commands run beside the scan and the parse from
				// the start.
				wo.Git = workspace.StartGit(ctx, resolved, o.Logger)
			}
			removeStaleTemps(sv.path)
			saved = loadSaved(sv.path, sv.engine, resolved, o.protectReleased, o.Logger)
			if saved != nil {
				sv.strings, sv.bodyBytes, sv.retrievalBytes = saved.strings, saved.bodyBytes, len(saved.retrieval)
			}
			switch {
			case wo.Git != nil:
			case saved != nil && saved.git != nil:
				// Under the saved git state's stamp, git runs only if the
				// scan meets a file that is not its saved entry
				// (workspace.Options.SavedGit): an unchanged reopen runs
				// none of git's commands, whose CPU competed with the scan
				// on two cores (mixed tree: 0.12 of ~0.42 CPU-s).
				wo.SavedGit = saved.git
			default:
				// No saved state to go by: git runs beside the scan.
				wo.Git = workspace.StartGit(ctx, resolved, o.Logger)
			}
		}
	}
	// The heap limit follows the bytes indexed: the saved ones at once,
	// parsed ones as they are parsed (memlimit.go).
	var savedBytes int64
	if saved != nil {
		for _, f := range saved.files {
			savedBytes += memBytes(f.Size)
		}
	}
	mem := newMemBudget(savedBytes, saved != nil)
	var parsed atomic.Int64
	if !o.NoParse {
		wo.ParseSource = func(ctx context.Context, f *workspace.File, src []byte) (workspace.ParseResult, error) {
			parsed.Add(1)
			mem.grow(memBytes(f.Size))
			return parseSource(ctx, f, src)
		}
	}
	if saved != nil {
		wo.Saved = &workspace.Saved{Files: saved.files, Skipped: saved.skipped, Decoded: saved.waitDecoded}
		if o.Progress != nil {
			o.Progress(workspace.Progress{Phase: "indexing", Stage: "loading", Files: len(saved.files),
				Total: len(saved.files) + len(saved.skipped), ElapsedMs: time.Since(start).Milliseconds()})
		}
	}
	ws, err := workspace.Open(ctx, filepath.Clean(root), wo)
	if saved != nil {
		// The parse results and the graph decoded during the scan; one
		// that did not decode makes the whole saved index unusable, and
		// the scan took its records: the folder is indexed from scratch.
		if derr := saved.waitResults(); derr != nil {
			o.Logger.Warn("saved index ignored; indexing from scratch", "path", sv.path, "reason", derr.Error())
			saved, wo.Saved, wo.SavedGit = nil, nil, nil
			sv.strings, sv.others, sv.bodyBytes, sv.retrievalBytes = 0, 0, 0, 0
			if err == nil {
				parsed.Store(0)
				ws, err = workspace.Open(ctx, filepath.Clean(root), wo)
			}
		}
	}
	if err != nil {
		mem.close()
		return nil, err
	}
	mem.set(snapMemBytes(ws.Snapshot()))
	if o.BuildRetrieval && saved == nil {
		mem.parsed() // the builds' share (memlimit.go)
	}
	if saved != nil && o.Progress != nil && parsed.Load() > 0 {
		st := ws.Summary().Stats
		o.Progress(workspace.Progress{Phase: "indexing", Files: st.Files, Parsed: int(parsed.Load()),
			Total: st.Files, ElapsedMs: time.Since(start).Milliseconds()})
	}
	file, dataDir := "", o.DataDir
	if dataDir != "" {
		file = editlog.CheckpointPath(dataDir, ws.Root())
		if err := probeWritable(filepath.Dir(file)); errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
			// A read-only data folder (QA D4): the saved index was read
			// above; nothing is written to it.
			o.Logger.Warn("data folder is not writable: checkpoints and the saved index are off for this project; edits are kept in memory",
				"dataDir", dataDir, "err", err)
			file, dataDir = "", ""
		}
	}
	l, err := editlog.Open(ws.Root(), file, &editlog.Options{Logger: o.Logger, Redact: o.Redact})
	if err != nil {
		mem.close()
		return nil, err
	}
	if c := l.LoadConflicts(); len(c) > 0 {
		o.Logger.Warn("edit log: files changed during an unfinished edit were left untouched", "files", len(c))
	}
	if sv != nil && sv.path != IndexPath(o.DataDir, ws.Root()) {
		sv = nil // the root moved under us: save nothing rather than under another id
	}
	p := &Project{ws: ws, edits: l, dataDir: dataDir, log: o.Logger, saver: sv, mem: mem}
	p.memSnap.Store(ws.Snapshot())
	if saved != nil && sv != nil {
		p.restore(saved, parsed.Load(), start)
	}
	if dataDir == "" {
		p.saver = nil // read-only data folder: no saves
	}
	if o.BuildRetrieval {
		// The first save waits for the caller's build (BuildRetrieval):
		// one started before it ends would take the cores from the
		// graph and retrieval builds the open's reply waits for, and
		// then be written again with the retrieval index.
		p.openSave.Store(true)
	} else {
		p.saveAfter(SaveDelay)
	}
	return p, nil
}

// probeWritable creates and removes a file in dir (made when missing):
// an error wrapping fs.ErrPermission or EROFS means the data folder is
// read-only (its mode, a read-only mount). Other errors are left to the
// edit log's open, as before.
func probeWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// dataFolders are the folders the runtime writes in a data folder
// (addendum §7, and task worktrees).
var dataFolders = []string{"checkpoints", "index", "tasks", "worktrees"}

// privateDirs are the runtime's own folders that the scan of a root
// must leave out (workspace.Options.Private): the data folder when it
// lies inside the root, and its folders when it is the root itself. Its
// index.bin and checkpoints are then never indexed, listed or retrieved.
func privateDirs(dataDir string) []string {
	if dataDir == "" {
		return nil
	}
	out := []string{dataDir}
	for _, f := range dataFolders {
		out = append(out, filepath.Join(dataDir, f))
	}
	return out
}

// DataDir is the data folder the edit log's checkpoint lives in ("" when
// the log is in memory, also for a read-only data folder): another process opening the project with it
// shares the log (--mcp-server --data-dir).
func (p *Project) DataDir() string { return p.dataDir }

// Root is the project's absolute root, symlinks resolved.
func (p *Project) Root() string { return p.ws.Root() }

// Workspace is the project's workspace index.
func (p *Project) Workspace() *workspace.Workspace { return p.ws }

// Snapshot is the current index snapshot.
func (p *Project) Snapshot() *workspace.Snapshot { return p.ws.Snapshot() }

// Summary is the current workspace summary.
func (p *Project) Summary() workspace.Summary { return p.ws.Summary() }

// Edits is the project's edit log.
func (p *Project) Edits() *editlog.Log { return p.edits }

// Graph is the graph of the current snapshot, rebuilt on its first use
// after the index changed.
func (p *Project) Graph() *graph.Graph { return p.graph.Get(p.ws.Snapshot()) }

// Index is the tool.Index over whatever snapshot is current, so tools see
// files the agent created once the index knows them.
func (p *Project) Index() tool.Index { return liveIndex{p.ws} }

// Env is the tool environment of a task (taskID "" for direct calls) in
// this project: root, live index, the project, its edit log and a fresh
// stale-edit record. The front end adds Ask and Secrets.
func (p *Project) Env(sandbox bool, taskID string) *tool.Env {
	env := tool.NewEnv(p.Root(), p.Index(), sandbox, taskID)
	env.Project = p
	env.Edits = builtin.LogEdits(p.edits)
	return env
}

// Refresh scans again (unchanged files are not parsed again).
func (p *Project) Refresh(ctx context.Context) (workspace.Summary, error) {
	sum, err := p.ws.Refresh(ctx)
	if err == nil {
		p.setMem()
		p.saveSoon()
	}
	return sum, err
}

// FilesChanged updates only these root-relative paths in the index (deleted
// ones leave it); the graph is rebuilt on its next use.
func (p *Project) FilesChanged(ctx context.Context, paths []string) (workspace.Summary, error) {
	sum, err := p.ws.FilesChanged(ctx, paths)
	if err == nil {
		p.setMem()
		p.saveSoon()
	}
	return sum, err
}

// setMem sets the project's share of the heap limit from the current
// snapshot's files, unless they are the ones it was last set from (a
// refresh that changed nothing does not walk them).
func (p *Project) setMem() {
	snap := p.ws.Snapshot()
	if last := p.memSnap.Load(); last != nil && snap.SameFiles(last) {
		return
	}
	p.mem.set(snapMemBytes(snap))
	p.memSnap.Store(snap)
}

// Changed tells the index about files a tool or the edit log changed,
// logging a failure (the edit itself is done).
func (p *Project) Changed(ctx context.Context, paths []string) {
	if len(paths) == 0 {
		return
	}
	if _, err := p.ws.FilesChanged(context.WithoutCancel(ctx), paths); err != nil {
		p.log.Warn("updating the index after an edit", "err", err)
		return
	}
	p.saveSoon()
}

// Retrieve ranks the project's code for q, with the graph's neighbours as
// a boost (the graph is built on first use, like graph/file). The
// retrieval index is built per snapshot on first use; secret-looking files
// are never indexed.
func (p *Project) Retrieve(ctx context.Context, q retrieve.Query) (retrieve.Result, error) {
	ix, err := p.retrievalIndex(ctx)
	if err != nil {
		return retrieve.Result{}, err
	}
	if q.Neighbours == nil {
		q.Neighbours = p.neighbours()
	}
	return retrieve.Search(ctx, ix, q)
}

func (p *Project) retrievalIndex(ctx context.Context) (*retrieve.Index, error) {
	return p.retrievalCache().Index(ctx, p.ws.Snapshot())
}

func (p *Project) retrievalOptions() *retrieve.BuildOptions {
	root := p.Root()
	return &retrieve.BuildOptions{Skip: func(rel string) bool { return builtin.IsSecretFile(root, rel) }}
}

// loadOptions are retrievalOptions for loading the saved retrieval index
// of snap right after the scan that made it: a file that is not a
// symbolic link as of that scan (workspace.File.Link) is a secret file by
// its own path alone, so only links are looked at on disk (an lstat of
// every file otherwise: ~8-11 k on a reopen).
func (p *Project) loadOptions(snap *workspace.Snapshot) *retrieve.BuildOptions {
	root := p.Root()
	return &retrieve.BuildOptions{Skip: func(rel string) bool {
		if f, ok := snap.File(rel); ok && !f.Link {
			return builtin.IsSecretPath(rel)
		}
		return builtin.IsSecretFile(root, rel)
	}}
}

func (p *Project) retrievalCache() *retrieve.Cache {
	p.retrievalOnce.Do(func() { p.retrieval = retrieve.NewCache(p.retrievalOptions()) })
	return p.retrieval
}

// BuildRetrieval builds the retrieval index of the current snapshot now
// (workspace/open and refresh), so the first query does not pay for it. A
// failed build (ctx ended) leaves it to the first query. A new index is
// saved with the rest (a dataDir).
func (p *Project) BuildRetrieval(ctx context.Context) {
	ix, err := p.retrievalIndex(ctx)
	if p.openSave.CompareAndSwap(true, false) {
		p.saveAfter(SaveDelay) // the open's save, built or not (Options.BuildRetrieval)
	}
	if err == nil {
		// The open's builds end with the index's name table (Build makes
		// it; a load that must make it again does so in the background,
		// and a reopen's reply does not wait for it): the limit keeps the
		// builds' share until then, and then takes the steady share, or
		// the first save's until that save is done (memlimit.go).
		done := ix.NameTableBuilt()
		endBuilds := func() {
			if p.saver == nil {
				p.mem.relax()
			} else {
				p.mem.saving() // then relax (scheduledSave)
			}
		}
		select {
		case <-done:
			endBuilds()
		default:
			go func() {
				<-done
				endBuilds()
			}()
		}
		p.saveSoon() // with a dataDir, after it (scheduledSave)
	}
}

// RebuildRetrievalSoon rebuilds the retrieval index in the background
// after the index changed, rather than at the next query (which waits for
// a build under way). Bursts of changes share one pending rebuild.
func (p *Project) RebuildRetrievalSoon() {
	if p.rebuilding.CompareAndSwap(false, true) {
		go func() {
			defer p.rebuilding.Store(false)
			p.BuildRetrieval(context.Background())
		}()
	}
}

// Excerpts retrieves about budget tokens for prompt (focus folders and
// files boosted) and formats them (retrieve.FormatExcerpts), or "" for an
// empty prompt, no match or an error (logged without the prompt).
func (p *Project) Excerpts(ctx context.Context, prompt string, budget int, focus []string) string {
	if strings.TrimSpace(prompt) == "" {
		return ""
	}
	res, err := p.Retrieve(ctx, retrieve.Query{Text: prompt, BudgetTokens: budget, FocusPaths: focus})
	if err != nil {
		p.log.Debug("retrieving excerpts", "err", err)
		return ""
	}
	return retrieve.FormatExcerpts(res)
}

// InstructionsFor returns the instructions that apply to the snippets'
// paths, each once, in the snapshot's order (user, workspace, directories
// from shallow to deep).
func (p *Project) InstructionsFor(snippets []retrieve.Snippet) []workspace.Instruction {
	snap := p.ws.Snapshot()
	want := map[string]bool{}
	for _, sn := range snippets {
		for _, in := range snap.InstructionsFor(sn.Path) {
			want[in.Source] = true
		}
	}
	out := []workspace.Instruction{}
	for _, in := range snap.Instructions() {
		if want[in.Source] {
			out = append(out, in)
		}
	}
	return out
}

// neighbours is the graph boost of retrieval: the files a file depends on
// and the files that use it.
func (p *Project) neighbours() func(rel string) []retrieve.Neighbour {
	var g *graph.Graph
	return func(rel string) []retrieve.Neighbour {
		if g == nil {
			g = p.Graph()
		}
		deps, err := g.File(rel)
		if err != nil {
			return nil
		}
		out := make([]retrieve.Neighbour, 0, len(deps.DependsOn)+len(deps.UsedBy))
		for _, d := range deps.DependsOn {
			rel := "imported by"
			if d.Kind == graph.KindReference {
				rel = "used by"
			}
			out = append(out, retrieve.Neighbour{Path: d.Path, Relation: rel, Weight: max(1, len(d.Symbols))})
		}
		for _, d := range deps.UsedBy {
			rel := "imports"
			if d.Kind == graph.KindReference {
				rel = "uses"
			}
			out = append(out, retrieve.Neighbour{Path: d.Path, Relation: rel, Weight: max(1, len(d.Symbols))})
		}
		return out
	}
}

// Rel turns a client path into a clean root-relative path with "/" ("."
// for the root) with fsx.ClientRel, the one containment rule of every
// client path (the scan's: a relative path is taken from the root, an
// absolute one must lie inside it, and no existing component may be a
// symlink that leads outside). A path that leaves the root is ErrOutside;
// every front end uses it (graph focus and file, editor context,
// edits/keep and edits/revert).
func (p *Project) Rel(clientPath string) (string, error) { return Rel(p.Root(), clientPath) }

// Rel is Project.Rel for a root.
func Rel(root, clientPath string) (string, error) {
	rel, err := fsx.ClientRel(root, clientPath)
	if err != nil {
		if errors.Is(err, fsx.ErrOutsideRoot) {
			return "", fmt.Errorf("%q is %w", clientPath, ErrOutside)
		}
		return "", err
	}
	return rel, nil
}

// ParseFile is the workspace.Parser of a project: it reads the indexed
// file (at most 1 MiB, the scanner skips larger ones) and, for a language
// internal/syntax supports, stores the *syntax.FileInfo in File.Parsed with
// its symbol count. Files of other languages get an empty result. A parse
// stopped by the time limit returns an error, which the workspace counts
// in stats.parseErrors; a tree with syntax errors is not an error (its
// symbols are kept).
func ParseFile(ctx context.Context, abs string, f *workspace.File) (workspace.ParseResult, error) {
	if !syntax.Supported(f.Language) {
		return workspace.ParseResult{}, nil
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return workspace.ParseResult{}, err
	}
	return parseSource(ctx, f, src)
}

// parseSource is ParseFile given the file's content (the scan's
// workspace.SourceParser); the FileInfo keeps no part of src.
func parseSource(ctx context.Context, f *workspace.File, src []byte) (workspace.ParseResult, error) {
	if !syntax.Supported(f.Language) {
		return workspace.ParseResult{}, nil
	}
	info, err := syntax.Parse(ctx, f.Language, src, nil)
	if err != nil {
		return workspace.ParseResult{}, err
	}
	if info.TimedOut {
		return workspace.ParseResult{}, fmt.Errorf("parse of %s stopped after %v", f.Path, syntax.DefaultTimeout)
	}
	return workspace.ParseResult{Symbols: len(info.Symbols), Data: info}, nil
}

// liveIndex is the tool.Index over the workspace's current snapshot.
type liveIndex struct{ ws *workspace.Workspace }

func (l liveIndex) Files() []string { return l.ws.Snapshot().Files() }
func (l liveIndex) Excluded(rel string, isDir bool) bool {
	return l.ws.Snapshot().Excluded(rel, isDir)
}
