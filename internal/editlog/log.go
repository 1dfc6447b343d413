package editlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/fsx"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Options configure a Log. A nil *Options is valid.
type Options struct {
	// Logger receives warnings (a corrupt checkpoint moved aside, a failed
	// save, conflicts found on load); never file contents. Default: discard.
	Logger *slog.Logger
	// Now is the clock for operation times; default time.Now.
	Now func() time.Time
	// Redact replaces the keys the runtime holds in text it emits: each
	// operation's diff (stored in the checkpoint and listed), and the
	// original and current contents of Pending. File contents the log
	// keeps to undo and revert stay exact. Default: none.
	Redact func(string) string
}

// Log is the edit log of one workspace root, safe for concurrent use. Every
// method that changes files or the log holds one lock for the whole change.
type Log struct {
	root string // absolute, symlinks resolved
	file string // snapshot path; "" keeps the log in memory only
	log  *slog.Logger
	now  func() time.Time
	// redact hides the runtime's keys in diffs and Pending contents.
	redact func(string) string

	mu sync.Mutex
	state
	prefix    string // this Log's id prefix (sync.go)
	seq       int
	conflicts []string  // found on load: files matching neither hash
	blobs     blobStore // the contents, by hash
	tmpDir    string    // temp folder of workspace writes; "": next to the file
	disk      diskState // what this Log has read of the checkpoint files
	garbage   int       // operations dropped or aborted since the last compaction
}

// CheckpointPath is dataDir/checkpoints/<WorkspaceID(root)>.json.
func CheckpointPath(dataDir, root string) string {
	return filepath.Join(dataDir, "checkpoints", WorkspaceID(root)+".json")
}

// Open returns the log of the workspace root (an absolute folder). With a
// checkpoint file it loads the saved log (journal.go; a version 1 checkpoint
// is imported): a snapshot that cannot be decoded is moved aside to
// "<file>.corrupt-<unix time>" with a warning in the log and an empty log is
// used (never fatal). Operations saved before their writes finished (a
// crash) are settled against the disk: a file that holds the new content
// stays logged, one that holds the old content is dropped from the
// operation, one that holds neither is a conflict (listed by LoadConflicts)
// and is left untouched. Reverts and undos that stopped halfway are settled
// the same way: the files they restored are settled. Temp files a crash left
// (in the checkpoint folder, and next to the logged files in the workspace)
// are removed. An empty file keeps the log in memory.
//
// Errors: root not absolute or not a folder; a checkpoint that cannot be read
// (other than not existing).
func Open(root, file string, opts *Options) (*Log, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("editlog: root %q is not absolute", root)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("editlog: root: %w", err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("editlog: root %q is not a folder", root)
	}
	l := &Log{root: real, file: file, log: o.Logger, now: o.Now, redact: o.Redact}
	if file == "" {
		l.blobs = memBlobs{}
		l.prefix = newPrefix(nil)
		return l, nil
	}
	l.blobs = newDirBlobs(l.blobsDir())
	l.mu.Lock()
	defer l.mu.Unlock()
	release, err := l.lock()
	if err != nil {
		return nil, err
	}
	defer release()
	if err := os.MkdirAll(l.tempDir(), 0o700); err == nil {
		l.tmpDir = l.tempDir()
	}
	l.removeCheckpointTemps()
	im, err := l.readImage()
	if errors.Is(err, ErrCorrupt) {
		aside := fmt.Sprintf("%s.corrupt-%d", file, o.Now().Unix())
		if rerr := os.Rename(file, aside); rerr != nil {
			return nil, fmt.Errorf("editlog: %w, and it cannot be moved aside: %v", err, rerr)
		}
		// Its journal goes with it: its records are changes to that
		// snapshot.
		if rerr := os.Rename(l.journalPath(), aside+".journal"); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return nil, fmt.Errorf("editlog: %w, and its journal cannot be moved aside: %v", err, rerr)
		}
		l.log.Warn("edit log checkpoint is corrupt; moved aside, starting an empty log", "file", aside, "err", err)
		l.prefix = newPrefix(nil)
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	l.state, l.disk = im.state, im.disk
	l.prefix = newPrefix(l.ops)
	l.settleOrphans(im.migrate)
	l.removeWorkspaceTemps()
	return l, nil
}

// settleOrphans settles the unfinished operations and intents of runtimes
// that died mid-change (callers hold the file lock, so no live runtime is in
// the middle of one) and compacts when that changed anything or when force
// is set.
func (l *Log) settleOrphans(force bool) {
	if l.recover() || force {
		if err := l.compact(); err != nil {
			l.log.Warn("saving the recovered edit log", "err", err)
		}
	}
}

// recover settles the operations that were saved before their writes
// finished, and the reverts and undos that did not finish. It reports
// whether the log changed.
func (l *Log) recover() bool {
	orphan := len(l.intents) > 0
	for _, op := range l.ops {
		orphan = orphan || !op.Committed
	}
	if !orphan {
		return false
	}
	root, err := os.OpenRoot(l.root)
	if err != nil {
		l.log.Warn("edit log: cannot open the root to check unfinished operations", "err", err)
		return false
	}
	defer root.Close()
	kept := l.ops[:0]
	for _, op := range l.ops {
		if op.Committed {
			kept = append(kept, op)
			continue
		}
		l.removeTempsOf(root, op.Files)
		var files []FileEdit
		for _, f := range op.Files {
			h, err := diskHash(root, f.Path)
			switch {
			case err == nil && h == f.AfterHash:
				files = append(files, f)
			case err == nil && h == f.BeforeHash:
				// The write never happened.
			default:
				l.conflicts = append(l.conflicts, f.Path)
				files = append(files, f)
			}
		}
		if len(files) == 0 {
			l.garbage++
			continue
		}
		op.Files, op.Committed = files, true
		kept = append(kept, op)
	}
	l.ops = kept
	for _, in := range l.intents {
		var settle []settleRef
		restored := false
		for _, f := range in.Files {
			l.removeTempsOf(root, []FileEdit{{Path: f.Path}})
			h, err := diskHash(root, f.Path)
			switch {
			case err == nil && h == f.To:
				settle = append(settle, settleRefs(f.Path, f.Settle)...)
				restored = true
			case err == nil && h == f.From:
				// Not written: still pending.
			default:
				l.conflicts = append(l.conflicts, f.Path)
			}
		}
		r := &record{Settle: settle, Done: in.ID}
		if in.Kind == "undo" && restored {
			r.Undone = []string{in.Undo}
		}
		l.state.apply(r)
	}
	if len(l.conflicts) > 0 {
		l.log.Warn("edit log: files changed during an unfinished edit are left as they are", "count", len(l.conflicts))
	}
	return true
}

// removeTempsOf removes the temp files of interrupted writes next to files
// (a crash mid-write leaves ".<name>.tmp-<hex>" beside the file when the
// temp file could not be kept out of the tree).
func (l *Log) removeTempsOf(root *os.Root, files []FileEdit) {
	byDir := map[string][]string{}
	for _, f := range files {
		dir, base := path.Split(f.Path)
		byDir[dir] = append(byDir[dir], base)
	}
	for dir, bases := range byDir {
		if dir == "" {
			dir = "."
		}
		n, err := fsx.RemoveTempsOf(root, filepath.FromSlash(path.Clean(dir)), bases...)
		if err != nil {
			l.log.Warn("edit log: removing temp files left by a crash", "err", err)
		}
		if n > 0 {
			l.log.Info("edit log: removed temp files left by a crash in the workspace", "count", n)
		}
	}
}

// removeWorkspaceTemps removes the temp files of interrupted writes next to
// every file the log names.
func (l *Log) removeWorkspaceTemps() {
	var files []FileEdit
	seen := map[string]bool{}
	for _, op := range l.ops {
		for _, f := range op.Files {
			if !seen[f.Path] {
				seen[f.Path] = true
				files = append(files, FileEdit{Path: f.Path})
			}
		}
	}
	if len(files) == 0 {
		return
	}
	root, err := os.OpenRoot(l.root)
	if err != nil {
		return
	}
	defer root.Close()
	l.removeTempsOf(root, files)
}

// LoadConflicts returns the paths that Open (or a later reload) found
// holding neither the old nor the new content of an unfinished operation.
func (l *Log) LoadConflicts() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.conflicts...)
}

// Root returns the log's root (absolute, symlinks resolved).
func (l *Log) Root() string { return l.root }

// diskHash is the hash of rel's content, "" when it does not exist.
func diskHash(root *os.Root, rel string) (string, error) {
	data, ok, err := readDisk(root, rel)
	if err != nil || !ok {
		return "", err
	}
	return hashOf(data), nil
}

// readDisk reads rel through root; ok is false when it does not exist.
func readDisk(root *os.Root, rel string) (data []byte, ok bool, err error) {
	name := filepath.FromSlash(rel)
	fi, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file", rel)
	}
	data, err = root.ReadFile(name)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// do makes the change r: appends it to the journal (with a checkpoint) and
// applies it to the log. ahead marks a write-ahead record: when it cannot be
// saved the log is left as it was and the error returned. Otherwise (the
// files are written already) the change is applied even when the save
// fails, and the error is returned for a warning. Callers hold l.mu and the
// file lock.
//
// Write-ahead records and a keep's settles are fsynced before do returns.
// The records that end a change (commit, abort, the end of an intent) and
// pruning are not: when a power loss takes them, the next load settles the
// unfinished operation or intent by the hashes on disk, which gives the same
// log (a lost drop only keeps contents longer).
func (l *Log) do(r *record, ahead bool) error {
	var err error
	if l.file != "" {
		durable := ahead || (len(r.Settle) > 0 && r.Done == "")
		err = l.appendRecord(r, durable)
	}
	if err != nil && ahead {
		return err
	}
	l.state.apply(r)
	return err
}

// Apply checks that every file still holds what the caller read
// (*ChangedError otherwise), stores the old and new contents and saves the
// operation (write-ahead), writes the files atomically through an os.Root on
// the log's root (creating missing parent folders; deleting for Delete) and
// marks the operation committed. All or nothing: when a write fails, the
// files already written get their old content back and the operation is
// removed. It returns the logged operation.
//
// Errors: an empty or invalid spec (no files, a path that is not a clean
// relative path, a path given twice); *ChangedError; ctx ending before the
// writes; a failed save of the write-ahead record; a failed write.
func (l *Log) Apply(ctx context.Context, spec OpSpec) (Operation, error) {
	if len(spec.Files) == 0 {
		return Operation{}, errors.New("editlog: an operation needs at least one file")
	}
	seen := map[string]bool{}
	for _, f := range spec.Files {
		if !validPath(f.Path) {
			return Operation{}, fmt.Errorf("editlog: invalid path %q", f.Path)
		}
		if seen[f.Path] {
			return Operation{}, fmt.Errorf("editlog: %s is named twice in one operation", f.Path)
		}
		seen[f.Path] = true
		if !f.Existed && f.Delete {
			return Operation{}, fmt.Errorf("editlog: %s: cannot delete a file that does not exist", f.Path)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	release, err := l.begin()
	if err != nil {
		return Operation{}, err
	}
	defer release()
	root, err := os.OpenRoot(l.root)
	if err != nil {
		return Operation{}, fmt.Errorf("editlog: open root: %w", err)
	}
	defer root.Close()

	op := &Operation{TaskID: spec.TaskID, CallID: spec.CallID, Tool: spec.Tool, Time: l.now().UTC()}
	var diff strings.Builder
	befores := make([][]byte, len(spec.Files))
	for i, f := range spec.Files {
		cur, ok, err := readDisk(root, f.Path)
		if err != nil {
			return Operation{}, fmt.Errorf("editlog: %w", err)
		}
		if ok != f.Existed || (ok && !bytes.Equal(cur, f.Before)) {
			return Operation{}, &ChangedError{Path: f.Path}
		}
		fe := FileEdit{Path: f.Path, Mode: f.Mode}
		if ok {
			befores[i] = cur
			fe.BeforeHash = hashOf(cur)
			if fi, err := root.Stat(filepath.FromSlash(f.Path)); err == nil {
				fe.Mode = fi.Mode().Perm()
			}
		}
		if !f.Delete {
			fe.AfterHash = hashOf(f.After)
		}
		if fe.Mode == 0 {
			fe.Mode = 0o644
		}
		var after []byte
		if !f.Delete {
			after = f.After
		}
		d := diffOf(f.Path, cur, after, fe.BeforeHash != "", fe.AfterHash != "")
		fe.Added, fe.Removed = d.added, d.removed
		diff.WriteString(d.text)
		op.Files = append(op.Files, fe)
	}
	op.Diff = capDiff(l.redact(diff.String()))
	if err := ctx.Err(); err != nil {
		return Operation{}, err
	}
	for i, f := range spec.Files {
		var after []byte
		if !f.Delete {
			after = f.After
		}
		if err := l.putContents(op.Files[i].BeforeHash, befores[i], op.Files[i].AfterHash, after); err != nil {
			return Operation{}, fmt.Errorf("editlog: saving the contents before writing: %w", err)
		}
	}
	l.seq++
	op.ID = fmt.Sprintf("op-%s-%d", l.prefix, l.seq)
	if err := l.do(&record{Op: op}, true); err != nil {
		return Operation{}, fmt.Errorf("editlog: saving the operation before writing: %w", err)
	}
	for i, f := range spec.Files {
		fe := &op.Files[i]
		if err := l.writeContent(root, fe.Path, fe.AfterHash, f.After, fe.Mode); err != nil {
			for j := i - 1; j >= 0; j-- {
				prev := &op.Files[j]
				if rerr := l.writeContent(root, prev.Path, prev.BeforeHash, befores[j], prev.Mode); rerr != nil {
					l.log.Warn("edit log: rolling back a failed edit", "path", prev.Path, "err", rerr)
				}
			}
			if serr := l.do(&record{Abort: op.ID}, false); serr != nil {
				l.log.Warn("edit log: saving after a failed edit", "err", serr)
			}
			l.garbage++
			l.maybeCompact()
			return Operation{}, fmt.Errorf("editlog: write %s: %w", fe.Path, err)
		}
	}
	if err := l.do(&record{Commit: op.ID}, false); err != nil {
		// The files are written and the write-ahead record names them:
		// the next Open settles it.
		l.log.Warn("edit log: saving after an edit", "err", err)
	}
	l.prune()
	l.maybeCompact()
	return copyOp(l.find(op.ID)), nil
}

// writeContent puts the content with hash on disk at rel: written
// atomically (the temp file outside the tree where it can be), or the file
// removed when hash is "" (absent). Missing parent folders are created.
func (l *Log) writeContent(root *os.Root, rel, hash string, content []byte, mode fs.FileMode) error {
	name := filepath.FromSlash(rel)
	if hash == "" {
		err := root.Remove(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
			return err
		}
	}
	return fsx.WriteFileAtomicVia(root, name, content, mode, l.tmpDir)
}

// content returns the content of hash ("" is an absent file: nil).
func (l *Log) content(hash string) ([]byte, error) {
	if hash == "" {
		return nil, nil
	}
	return l.blobs.get(hash)
}

// prune drops the contents of the oldest settled operations while more than
// MaxOperations hold contents (one journal record).
func (l *Log) prune() {
	n := 0
	for _, op := range l.ops {
		if !op.Dropped {
			n++
		}
	}
	var drop []string
	for _, op := range l.ops {
		if n <= MaxOperations {
			break
		}
		if op.Dropped || !op.Committed || !op.Settled() {
			continue
		}
		drop = append(drop, op.ID)
		n--
	}
	if len(drop) == 0 {
		return
	}
	l.garbage += len(drop)
	if err := l.do(&record{Drop: drop}, false); err != nil {
		l.log.Warn("edit log: saving the pruned log", "err", err)
	}
}

func copyOp(op *Operation) Operation {
	c := *op
	c.Files = append([]FileEdit(nil), op.Files...)
	return c
}

// List returns every committed operation, oldest first; Diff holds the
// unified diff (contents are not part of an Operation).
func (l *Log) List() []Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	out := make([]Operation, 0, len(l.ops))
	for _, op := range l.ops {
		if op.Committed {
			out = append(out, copyOp(op))
		}
	}
	return out
}

// TaskOperations returns the ids of the committed operations of taskID,
// oldest first.
func (l *Log) TaskOperations(taskID string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	var ids []string
	for _, op := range l.ops {
		if op.TaskID == taskID && op.Committed {
			ids = append(ids, op.ID)
		}
	}
	return ids
}

// Pending is the net unsettled change of one file (protocol.md
// edits/pending; addendum §11; docs/edits.md): Original is the content
// before the first unsettled operation (nil when the agent created the
// file), Current the file's content on disk now (nil when it does not exist
// or is not a regular file), Added and Removed the line counts of the diff
// from Original to Current, Operations the ids involved. ChangedOutside is
// true when the disk no longer holds the agent's last write of the file
// (the user or another program changed it since); revert and undo then
// report the file as a conflict.
type Pending = protocol.PendingFile

// pendingFile gathers the unsettled edits of one path.
type pendingFile struct {
	path  string
	first *FileEdit
	last  *FileEdit
	opIDs []string
}

// pending returns the unsettled edits by path, in order of first change.
func (l *Log) pending() []*pendingFile {
	byPath := map[string]*pendingFile{}
	var out []*pendingFile
	for _, op := range l.ops {
		// An undone operation stays: a file its undo could not restore (a
		// conflict) is not settled and stays pending.
		if !op.Committed || op.Dropped {
			continue
		}
		for i := range op.Files {
			f := &op.Files[i]
			if f.Settled {
				continue
			}
			p := byPath[f.Path]
			if p == nil {
				p = &pendingFile{path: f.Path, first: f}
				byPath[f.Path] = p
				out = append(out, p)
			}
			p.last = f
			if len(p.opIDs) == 0 || p.opIDs[len(p.opIDs)-1] != op.ID {
				p.opIDs = append(p.opIDs, op.ID)
			}
		}
	}
	return out
}

// Pending returns the net unsettled change of every file, in the order the
// files were first changed, with each file's content read from disk now. A
// file whose net change is nothing (created then deleted, or changed back by
// the agent) and that nobody changed since is left out; a file changed
// outside the agent since its last write is listed with ChangedOutside.
//
// Errors: the root cannot be opened; an original content missing from the
// checkpoint (or damaged).
func (l *Log) Pending() ([]Pending, error) { return l.pendingEntries(true) }

// pendingEntries is Pending; counts false leaves Added and Removed 0 (they
// take a diff of each whole file).
func (l *Log) pendingEntries(counts bool) ([]Pending, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	out := []Pending{}
	files := l.pending()
	if len(files) == 0 {
		return out, nil
	}
	root, err := os.OpenRoot(l.root)
	if err != nil {
		return nil, fmt.Errorf("editlog: open root: %w", err)
	}
	defer root.Close()
	for _, p := range files {
		disk, ok, rerr := readDisk(root, p.path)
		diskHash := ""
		if rerr == nil && ok {
			diskHash = hashOf(disk)
		}
		outside := rerr != nil || diskHash != p.last.AfterHash
		if p.first.BeforeHash == p.last.AfterHash && !outside {
			continue
		}
		e := Pending{Path: p.path, Operations: p.opIDs, ChangedOutside: outside}
		original, err := l.content(p.first.BeforeHash)
		if err != nil {
			return nil, fmt.Errorf("editlog: the original content of %s: %w", p.path, err)
		}
		if p.first.BeforeHash != "" {
			s := l.redact(string(original))
			e.Original = &s
		}
		if diskHash != "" {
			s := l.redact(string(disk))
			e.Current = &s
		}
		if counts {
			d := diffOf(p.path, original, disk, p.first.BeforeHash != "", diskHash != "")
			e.Added, e.Removed = d.added, d.removed
		}
		out = append(out, e)
	}
	boundPending(out)
	return out, nil
}

// selected reports whether path is in the set (nil selects every path).
func selected(set map[string]bool, path string) bool {
	return set == nil || set[path]
}

func pathSet(paths []string) map[string]bool {
	if paths == nil {
		return nil
	}
	set := map[string]bool{}
	for _, p := range paths {
		set[strings.TrimPrefix(path.Clean(filepath.ToSlash(p)), "./")] = true
	}
	return set
}

// Keep settles the unsettled changes of paths (root-relative, "/"; nil or
// empty means every file) as accepted, and returns the paths it settled,
// sorted. Files are not touched.
func (l *Log) Keep(paths []string) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	release, err := l.begin()
	if err != nil {
		return nil, err
	}
	defer release()
	if len(paths) == 0 {
		paths = nil
	}
	set := pathSet(paths)
	kept := []string{}
	r := &record{}
	for _, p := range l.pending() {
		if !selected(set, p.path) {
			continue
		}
		r.Settle = append(r.Settle, settleRefs(p.path, p.opIDs)...)
		kept = append(kept, p.path)
	}
	sort.Strings(kept)
	if len(r.Settle) == 0 {
		return kept, nil
	}
	err = l.do(r, false)
	l.prune()
	l.maybeCompact()
	return kept, err
}

// restore is one file a revert or an undo writes.
type restore struct {
	intentFile
	content []byte
}

// restoreFiles writes files as one intent of kind ("revert" or "undo" of
// the operation undo): the intent is saved first (write-ahead), then each
// file is written, then one record settles the restored files (and marks an
// undo's operation undone) and ends the intent. A file that cannot be
// written is a conflict. Callers hold l.mu and the file lock.
func (l *Log) restoreFiles(root *os.Root, kind, undo string, files []restore) (restored, conflicts []string, err error) {
	if len(files) == 0 {
		return nil, nil, nil
	}
	l.seq++
	in := &intent{ID: fmt.Sprintf("%s-%s-%d", kind, l.prefix, l.seq), Kind: kind, Undo: undo}
	for _, f := range files {
		in.Files = append(in.Files, f.intentFile)
	}
	if err := l.do(&record{Intent: in}, true); err != nil {
		return nil, nil, fmt.Errorf("editlog: saving the %s before writing: %w", kind, err)
	}
	done := &record{Done: in.ID}
	for _, f := range files {
		if err := l.writeContent(root, f.Path, f.To, f.content, f.Mode); err != nil {
			l.log.Warn("edit log: "+kind+" failed", "path", f.Path, "err", err)
			conflicts = append(conflicts, f.Path)
			continue
		}
		done.Settle = append(done.Settle, settleRefs(f.Path, f.Settle)...)
		restored = append(restored, f.Path)
	}
	if kind == "undo" && len(restored) > 0 {
		done.Undone = []string{undo}
	}
	err = l.do(done, false)
	l.prune()
	l.maybeCompact()
	return restored, conflicts, err
}

// Revert puts the files of paths (nil or empty: every file with unsettled
// changes) back to their content before the agent's first unsettled edit,
// deleting the files the agent created and recreating the ones it deleted.
// A file whose disk content is not the agent's last write (the user changed
// it since) is a conflict: it is left untouched and stays pending. Only files
// in the log are touched. The revert is saved before any file is written
// (write-ahead), so a crash in the middle settles the files it restored. It
// returns the reverted and conflicting paths, sorted.
func (l *Log) Revert(paths []string) (reverted, conflicts []string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	release, err := l.begin()
	if err != nil {
		return nil, nil, err
	}
	defer release()
	if len(paths) == 0 {
		paths = nil
	}
	set := pathSet(paths)
	root, err := os.OpenRoot(l.root)
	if err != nil {
		return nil, nil, fmt.Errorf("editlog: open root: %w", err)
	}
	defer root.Close()
	conflicts = []string{}
	var files []restore
	for _, p := range l.pending() {
		if !selected(set, p.path) {
			continue
		}
		h, herr := diskHash(root, p.path)
		if herr != nil || h != p.last.AfterHash {
			conflicts = append(conflicts, p.path)
			continue
		}
		content, cerr := l.content(p.first.BeforeHash)
		if cerr != nil {
			l.log.Warn("edit log: the original content is missing; not reverted", "path", p.path, "err", cerr)
			conflicts = append(conflicts, p.path)
			continue
		}
		files = append(files, restore{intentFile{Path: p.path, From: h, To: p.first.BeforeHash, Mode: p.first.Mode, Settle: p.opIDs}, content})
	}
	reverted, failed, err := l.restoreFiles(root, "revert", "", files)
	if reverted == nil {
		reverted = []string{}
	}
	conflicts = append(conflicts, failed...)
	sort.Strings(reverted)
	sort.Strings(conflicts)
	if err != nil && len(reverted) == 0 && len(failed) == 0 && len(files) > 0 {
		return nil, nil, err
	}
	return reverted, conflicts, err
}

// Undo reverts one operation: each of its files whose disk content is still
// the operation's new content gets its old content back (or is deleted, or
// recreated); a file changed since (by the user or a later edit) is a
// conflict and left untouched. Only the operation's files are touched. Like
// Revert it is saved before any file is written.
//
// Errors: ErrUnknownOperation, ErrAlreadyUndone, ErrTooOld (its contents
// were dropped), a failed save.
func (l *Log) Undo(id string) (restored, conflicts []string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	release, err := l.begin()
	if err != nil {
		return nil, nil, err
	}
	defer release()
	var op *Operation
	for _, o := range l.ops {
		if o.ID == id && o.Committed {
			op = o
		}
	}
	switch {
	case op == nil:
		return nil, nil, fmt.Errorf("%w %q", ErrUnknownOperation, id)
	case op.Undone:
		return nil, nil, fmt.Errorf("%s: %w", id, ErrAlreadyUndone)
	case op.Dropped:
		return nil, nil, fmt.Errorf("%s is %w: its contents were dropped from the edit log", id, ErrTooOld)
	}
	root, err := os.OpenRoot(l.root)
	if err != nil {
		return nil, nil, fmt.Errorf("editlog: open root: %w", err)
	}
	defer root.Close()
	conflicts = []string{}
	var files []restore
	for i := range op.Files {
		f := &op.Files[i]
		h, herr := diskHash(root, f.Path)
		if herr != nil || h != f.AfterHash {
			conflicts = append(conflicts, f.Path)
			continue
		}
		content, cerr := l.content(f.BeforeHash)
		if cerr != nil {
			l.log.Warn("edit log: the old content is missing; not undone", "path", f.Path, "err", cerr)
			conflicts = append(conflicts, f.Path)
			continue
		}
		files = append(files, restore{intentFile{Path: f.Path, From: h, To: f.BeforeHash, Mode: f.Mode, Settle: []string{op.ID}}, content})
	}
	restored, failed, err := l.restoreFiles(root, "undo", op.ID, files)
	if restored == nil {
		restored = []string{}
	}
	conflicts = append(conflicts, failed...)
	sort.Strings(restored)
	sort.Strings(conflicts)
	if err != nil && len(restored) == 0 && len(failed) == 0 && len(files) > 0 {
		return nil, nil, err
	}
	return restored, conflicts, err
}
