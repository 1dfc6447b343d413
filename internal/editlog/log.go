package editlog

import (
	"bytes"
	"context"
	"encoding/json"
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
	file string // checkpoint path; "" keeps the log in memory only
	log  *slog.Logger
	now  func() time.Time
	// redact hides the runtime's keys in diffs and Pending contents.
	redact func(string) string

	mu        sync.Mutex
	prefix    string // this Log's id prefix (sync.go)
	seq       int
	ops       []*Operation
	conflicts []string  // found on load: files matching neither hash
	stamp     fileStamp // the checkpoint version last loaded or saved
	stampOK   bool
}

// checkpoint is the JSON saved in the checkpoint file.
type checkpoint struct {
	Version    int          `json:"version"`
	Root       string       `json:"root"`
	Operations []*Operation `json:"operations"`
}

// CheckpointPath is dataDir/checkpoints/<WorkspaceID(root)>.json.
func CheckpointPath(dataDir, root string) string {
	return filepath.Join(dataDir, "checkpoints", WorkspaceID(root)+".json")
}

// Open returns the log of the workspace root (an absolute folder). With a
// checkpoint file it loads the saved operations: a file that cannot be
// decoded is moved aside to "<file>.corrupt-<unix time>" with a warning in
// the log and an empty log is used (never fatal). Operations saved before
// their writes finished (a crash) are settled against the disk: a file that
// holds the new content stays logged, one that holds the old content is
// dropped from the operation, one that holds neither is a conflict (listed by
// LoadConflicts) and is left untouched. An empty file keeps the log in memory.
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
		l.prefix = newPrefix(nil)
		return l, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	release, err := l.lock()
	if err != nil {
		return nil, err
	}
	defer release()
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		l.prefix = newPrefix(nil)
		return l, nil
	case err != nil:
		return nil, fmt.Errorf("editlog: read checkpoint: %w", err)
	}
	cp, err := decodeCheckpoint(data)
	if err != nil {
		aside := fmt.Sprintf("%s.corrupt-%d", file, o.Now().Unix())
		if rerr := os.Rename(file, aside); rerr != nil {
			return nil, fmt.Errorf("editlog: %w, and it cannot be moved aside: %v", err, rerr)
		}
		l.log.Warn("edit log checkpoint is corrupt; moved aside, starting an empty log", "file", aside, "err", err)
		l.prefix = newPrefix(nil)
		return l, nil
	}
	l.ops = cp.Operations
	l.prefix = newPrefix(l.ops)
	l.stamp, l.stampOK = stampOf(file)
	if l.recover() {
		if err := l.save(); err != nil {
			l.log.Warn("saving the recovered edit log", "err", err)
		}
	}
	return l, nil
}

func decodeCheckpoint(data []byte) (*checkpoint, error) {
	var cp checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if cp.Version != checkpointVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, cp.Version, checkpointVersion)
	}
	for i, op := range cp.Operations {
		if op == nil || op.ID == "" {
			return nil, fmt.Errorf("%w: operation %d has no id", ErrCorrupt, i)
		}
		for _, f := range op.Files {
			if !fs.ValidPath(f.Path) || f.Path == "." {
				return nil, fmt.Errorf("%w: operation %s names the path %q", ErrCorrupt, op.ID, f.Path)
			}
		}
	}
	return &cp, nil
}

// recover settles the operations that were saved before their writes
// finished. It reports whether the log changed.
func (l *Log) recover() bool {
	root, err := os.OpenRoot(l.root)
	if err != nil {
		l.log.Warn("edit log: cannot open the root to check unfinished operations", "err", err)
		return false
	}
	defer root.Close()
	changed := false
	kept := l.ops[:0]
	for _, op := range l.ops {
		if op.Committed {
			kept = append(kept, op)
			continue
		}
		changed = true
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
			continue
		}
		op.Files, op.Committed = files, true
		kept = append(kept, op)
	}
	l.ops = kept
	if len(l.conflicts) > 0 {
		l.log.Warn("edit log: files changed during an unfinished edit are left as they are", "count", len(l.conflicts))
	}
	return changed
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

// Apply checks that every file still holds what the caller read
// (*ChangedError otherwise), saves the operation (write-ahead), writes the
// files atomically through an os.Root on the log's root (creating missing
// parent folders; deleting for Delete) and marks the operation committed.
// All or nothing: when a write fails, the files already written get their
// old content back and the operation is removed. It returns the logged
// operation.
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
		if !fs.ValidPath(f.Path) || f.Path == "." {
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
	for _, f := range spec.Files {
		cur, ok, err := readDisk(root, f.Path)
		if err != nil {
			return Operation{}, fmt.Errorf("editlog: %w", err)
		}
		if ok != f.Existed || (ok && !bytes.Equal(cur, f.Before)) {
			return Operation{}, &ChangedError{Path: f.Path}
		}
		fe := FileEdit{Path: f.Path, Mode: f.Mode}
		if ok {
			fe.Before = cur
			fe.BeforeHash = hashOf(cur)
			if fi, err := root.Stat(filepath.FromSlash(f.Path)); err == nil {
				fe.Mode = fi.Mode().Perm()
			}
		}
		if !f.Delete {
			fe.After = append([]byte{}, f.After...)
			fe.AfterHash = hashOf(f.After)
		}
		if fe.Mode == 0 {
			fe.Mode = 0o644
		}
		d := diffOf(f.Path, fe.Before, fe.After, fe.BeforeHash != "", fe.AfterHash != "")
		fe.Added, fe.Removed = d.added, d.removed
		diff.WriteString(d.text)
		op.Files = append(op.Files, fe)
	}
	op.Diff = capDiff(l.redact(diff.String()))
	if err := ctx.Err(); err != nil {
		return Operation{}, err
	}
	l.seq++
	op.ID = fmt.Sprintf("op-%s-%d", l.prefix, l.seq)
	l.ops = append(l.ops, op)
	if err := l.save(); err != nil {
		l.ops = l.ops[:len(l.ops)-1]
		return Operation{}, fmt.Errorf("editlog: saving the operation before writing: %w", err)
	}
	for i := range op.Files {
		if err := writeState(root, &op.Files[i], false); err != nil {
			for j := i - 1; j >= 0; j-- {
				if rerr := writeState(root, &op.Files[j], true); rerr != nil {
					l.log.Warn("edit log: rolling back a failed edit", "path", op.Files[j].Path, "err", rerr)
				}
			}
			l.ops = l.ops[:len(l.ops)-1]
			if serr := l.save(); serr != nil {
				l.log.Warn("edit log: saving after a failed edit", "err", serr)
			}
			return Operation{}, fmt.Errorf("editlog: write %s: %w", op.Files[i].Path, err)
		}
	}
	op.Committed = true
	l.prune()
	if err := l.save(); err != nil {
		// The files are written and the write-ahead record names them:
		// the next Open settles it.
		l.log.Warn("edit log: saving after an edit", "err", err)
	}
	return copyOp(op), nil
}

// writeState puts f's new content on disk (its old one when old is true):
// the content written atomically, or the file removed when that state is
// absent. Missing parent folders are created.
func writeState(root *os.Root, f *FileEdit, old bool) error {
	content, hash := f.After, f.AfterHash
	if old {
		content, hash = f.Before, f.BeforeHash
	}
	name := filepath.FromSlash(f.Path)
	if hash == "" {
		err := root.Remove(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if dir := path.Dir(f.Path); dir != "." {
		if err := root.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
			return err
		}
	}
	return fsx.WriteFileAtomicIn(root, name, content, f.Mode)
}

// prune drops the contents of the oldest settled operations while more than
// MaxOperations hold contents.
func (l *Log) prune() {
	n := 0
	for _, op := range l.ops {
		if !op.Dropped {
			n++
		}
	}
	for _, op := range l.ops {
		if n <= MaxOperations {
			return
		}
		if op.Dropped || !op.Committed || !op.Settled() {
			continue
		}
		op.Dropped = true
		op.Diff = ""
		for i := range op.Files {
			op.Files[i].Before, op.Files[i].After = nil, nil
		}
		n--
	}
}

// save writes the checkpoint atomically; a no-op without a file. Callers
// hold l.mu and the file lock (begin), so the file holds every other Log's
// operations merged in.
func (l *Log) save() error {
	if l.file == "" {
		return nil
	}
	data, err := json.Marshal(checkpoint{Version: checkpointVersion, Root: l.root, Operations: l.ops})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.file), 0o700); err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(l.file, data, 0o600); err != nil {
		return err
	}
	l.stamp, l.stampOK = stampOf(l.file)
	return nil
}

func copyOp(op *Operation) Operation {
	c := *op
	c.Files = append([]FileEdit(nil), op.Files...)
	return c
}

// List returns every operation, oldest first. Contents are left out
// (Before and After nil); Diff holds the unified diff.
func (l *Log) List() []Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	out := make([]Operation, 0, len(l.ops))
	for _, op := range l.ops {
		c := copyOp(op)
		for i := range c.Files {
			c.Files[i].Before, c.Files[i].After = nil, nil
		}
		out = append(out, c)
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
type Pending struct {
	Path           string   `json:"path"`
	Original       *string  `json:"original"`
	Current        *string  `json:"current"`
	Added          int      `json:"added"`
	Removed        int      `json:"removed"`
	Operations     []string `json:"operations"`
	ChangedOutside bool     `json:"changedOutside"`
	// Truncated: Original or Current was cut (see CutText) to keep the
	// edits/pending reply under the 32 MiB message cap; the file on disk and
	// Added/Removed are whole.
	Truncated bool `json:"truncated,omitempty"`
}

// pendingFile gathers the unsettled edits of one path.
type pendingFile struct {
	path    string
	first   *FileEdit
	last    *FileEdit
	edits   []*FileEdit
	opIDs   []string
	ordinal int
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
				p = &pendingFile{path: f.Path, first: f, ordinal: len(out)}
				byPath[f.Path] = p
				out = append(out, p)
			}
			p.last = f
			p.edits = append(p.edits, f)
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
// Errors: the root cannot be opened.
func (l *Log) Pending() ([]Pending, error) {
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
		if p.first.BeforeHash != "" {
			s := l.redact(string(p.first.Before))
			e.Original = &s
		}
		if diskHash != "" {
			s := l.redact(string(disk))
			e.Current = &s
		}
		d := diffOf(p.path, p.first.Before, disk, p.first.BeforeHash != "", diskHash != "")
		e.Added, e.Removed = d.added, d.removed
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
	for _, p := range l.pending() {
		if !selected(set, p.path) {
			continue
		}
		for _, f := range p.edits {
			f.Settled = true
		}
		kept = append(kept, p.path)
	}
	sort.Strings(kept)
	l.prune()
	return kept, l.save()
}

// Revert puts the files of paths (nil or empty: every file with unsettled
// changes) back to their content before the agent's first unsettled edit,
// deleting the files the agent created and recreating the ones it deleted.
// A file whose disk content is not the agent's last write (the user changed
// it since) is a conflict: it is left untouched and stays pending. Only files
// in the log are touched. It returns the reverted and conflicting paths,
// sorted.
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
	reverted, conflicts = []string{}, []string{}
	for _, p := range l.pending() {
		if !selected(set, p.path) {
			continue
		}
		h, herr := diskHash(root, p.path)
		if herr != nil || h != p.last.AfterHash {
			conflicts = append(conflicts, p.path)
			continue
		}
		target := FileEdit{Path: p.path, Before: p.first.Before, BeforeHash: p.first.BeforeHash, Mode: p.first.Mode}
		if err := writeState(root, &target, true); err != nil {
			l.log.Warn("edit log: revert failed", "path", p.path, "err", err)
			conflicts = append(conflicts, p.path)
			continue
		}
		for _, f := range p.edits {
			f.Settled = true
		}
		reverted = append(reverted, p.path)
	}
	sort.Strings(reverted)
	sort.Strings(conflicts)
	l.prune()
	return reverted, conflicts, l.save()
}

// Undo reverts one operation: each of its files whose disk content is still
// the operation's new content gets its old content back (or is deleted, or
// recreated); a file changed since (by the user or a later edit) is a
// conflict and left untouched. Only the operation's files are touched.
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
	restored, conflicts = []string{}, []string{}
	for i := range op.Files {
		f := &op.Files[i]
		h, herr := diskHash(root, f.Path)
		if herr != nil || h != f.AfterHash {
			conflicts = append(conflicts, f.Path)
			continue
		}
		if err := writeState(root, f, true); err != nil {
			l.log.Warn("edit log: undo failed", "path", f.Path, "err", err)
			conflicts = append(conflicts, f.Path)
			continue
		}
		f.Settled = true
		restored = append(restored, f.Path)
	}
	if len(restored) > 0 {
		op.Undone = true
	}
	sort.Strings(restored)
	sort.Strings(conflicts)
	l.prune()
	return restored, conflicts, l.save()
}
