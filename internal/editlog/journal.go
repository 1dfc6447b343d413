package editlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/fsx"
)

// A log with a checkpoint is kept in four places next to each other in
// dataDir/checkpoints (docs/edits.md, "Persistence"):
//
//   - <id>.json, the snapshot: the whole log at one generation, operations
//     and unfinished intents, without contents (version 2); written
//     atomically at compaction only;
//   - <id>.journal, the journal: a header line naming the snapshot's
//     generation, then one JSON record a line, each a batch of one-way
//     changes, appended and fsynced as they happen;
//   - <id>.blobs/, the contents by hash (blobs.go);
//   - <id>.tmp/, the temp files of writes into the workspace (kept out of
//     the user's tree where a rename allows it).
//
// The log is the snapshot with the journal replayed over it. A journal of
// another generation than the snapshot's is left over from a compaction
// that stopped between its two renames and is ignored (its records are in
// the snapshot). A torn last line (a crash during an append) is cut off.
// A version 1 checkpoint (contents inline, base64) is imported on Open: its
// contents go to the blob store and a version 2 snapshot replaces it.

// Compaction: when the journal is over compactBytes and over the snapshot's
// size (so each rewrite is paid for by as many appended bytes), or when
// gcEvery operations were dropped or aborted since the last one (their
// contents can go).
const (
	compactBytes = 1 << 20
	gcEvery      = 64
)

// snapshot is the JSON of <id>.json (version 2).
type snapshot struct {
	Version    int          `json:"version"`
	Root       string       `json:"root"`
	Generation int64        `json:"generation"`
	Operations []*Operation `json:"operations"`
	Intents    []*intent    `json:"intents,omitempty"`
}

// journalHeader is the first line of <id>.journal.
type journalHeader struct {
	Journal    int    `json:"journal"`
	Generation int64  `json:"generation"`
	Root       string `json:"root"`
}

// record is one line of the journal: a batch of changes, applied in the
// order of the fields. Every change is one-way (or removes an operation that
// was never committed), so applying a record twice is harmless.
type record struct {
	// Op is a new operation, saved before its files are written
	// (committed false).
	Op *Operation `json:"op,omitempty"`
	// Commit marks the operation written.
	Commit string `json:"commit,omitempty"`
	// Abort removes an operation whose writes failed and were rolled back.
	Abort string `json:"abort,omitempty"`
	// Intent is a revert or undo about to write files.
	Intent *intent `json:"intent,omitempty"`
	// Settle marks files of operations settled (kept, reverted, undone).
	Settle []settleRef `json:"settle,omitempty"`
	// Undone marks operations undone.
	Undone []string `json:"undone,omitempty"`
	// Drop drops the contents of operations (pruning).
	Drop []string `json:"drop,omitempty"`
	// Done ends an intent.
	Done string `json:"done,omitempty"`
}

// settleRef names files of one operation.
type settleRef struct {
	Op    string   `json:"op"`
	Paths []string `json:"paths"`
}

// intent is a revert or an undo saved before it writes files, so that a
// crash in the middle leaves a log that says which files it restored: on
// load each file is settled by hash (To on disk: restored, its edits
// settled; From: never written; neither: changed by someone else, left
// alone).
type intent struct {
	ID    string       `json:"id"`
	Kind  string       `json:"kind"`           // "revert" or "undo"
	Undo  string       `json:"undo,omitempty"` // the operation an undo restores
	Files []intentFile `json:"files"`
}

// intentFile is one file an intent writes: from the content with hash From
// (the agent's last write) to To ("" deletes it), settling the file's edits
// in the operations Settle.
type intentFile struct {
	Path   string      `json:"path"`
	From   string      `json:"from"`
	To     string      `json:"to"`
	Mode   fs.FileMode `json:"mode,omitempty"`
	Settle []string    `json:"settle"`
}

// diskState is what a Log has read of its checkpoint files.
type diskState struct {
	snap    os.FileInfo // nil: no snapshot
	journal os.FileInfo // nil: no journal of the snapshot's generation
	off     int64       // bytes of the journal applied
	gen     int64       // the snapshot's generation
}

func (l *Log) base() string        { return strings.TrimSuffix(l.file, ".json") }
func (l *Log) journalPath() string { return l.base() + ".journal" }
func (l *Log) blobsDir() string    { return l.base() + ".blobs" }
func (l *Log) tempDir() string     { return l.base() + ".tmp" }

// sameStamp reports whether a and b are one version of one file (both nil:
// both absent).
func sameStamp(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func statOrNil(p string) (os.FileInfo, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return fi, err
}

// changedOnDisk reports whether the checkpoint files differ from what the
// Log last read or wrote (a cheap stat of both).
func (l *Log) changedOnDisk() bool {
	if l.file == "" {
		return false
	}
	snap, err1 := statOrNil(l.file)
	j, err2 := statOrNil(l.journalPath())
	if err1 != nil || err2 != nil {
		return true
	}
	if !sameStamp(snap, l.disk.snap) {
		return true
	}
	if l.disk.journal == nil {
		return j != nil
	}
	return !sameStamp(j, l.disk.journal)
}

// image is the log as the checkpoint files hold it.
type image struct {
	state
	disk diskState
	// migrate: the snapshot is version 1 (imported) or the journal was of
	// another generation, so a compaction should follow.
	migrate bool
}

// readImage reads the snapshot and replays the journal. Callers hold the
// file lock. A torn journal tail is cut off the file. Errors wrapping
// ErrCorrupt mean the snapshot does not decode; a journal that does not
// decode is moved aside with a warning.
func (l *Log) readImage() (*image, error) {
	im := &image{}
	snapInfo, err := statOrNil(l.file)
	if err != nil {
		return nil, fmt.Errorf("editlog: read checkpoint: %w", err)
	}
	if snapInfo != nil {
		data, err := os.ReadFile(l.file)
		if err != nil {
			return nil, fmt.Errorf("editlog: read checkpoint: %w", err)
		}
		snap, migrated, err := l.decodeSnapshot(data)
		if err != nil {
			return nil, err
		}
		im.ops, im.intents, im.disk.gen, im.migrate = snap.Operations, snap.Intents, snap.Generation, migrated
		im.disk.snap = snapInfo
	}
	j, err := os.Open(l.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return im, nil
	}
	if err != nil {
		return nil, fmt.Errorf("editlog: read journal: %w", err)
	}
	defer j.Close()
	fi, err := j.Stat()
	if err != nil {
		return nil, fmt.Errorf("editlog: read journal: %w", err)
	}
	data, err := io.ReadAll(j)
	if err != nil {
		return nil, fmt.Errorf("editlog: read journal: %w", err)
	}
	nl := bytes.IndexByte(data, '\n')
	var h journalHeader
	if nl < 0 || json.Unmarshal(data[:nl], &h) != nil || h.Journal != 1 {
		aside := fmt.Sprintf("%s.corrupt-%d", l.journalPath(), l.now().Unix())
		if err := os.Rename(l.journalPath(), aside); err != nil {
			return nil, fmt.Errorf("editlog: the journal has no valid header, and it cannot be moved aside: %w", err)
		}
		l.log.Warn("edit log journal has no valid header; moved aside", "file", aside)
		im.migrate = true
		return im, nil
	}
	if h.Generation != im.disk.gen {
		// Left over from a compaction that stopped before replacing it:
		// every record is in the snapshot already.
		im.migrate = true
		return im, nil
	}
	off, bad := l.replay(&im.state, data, int64(nl+1))
	if bad > 0 {
		l.log.Warn("edit log journal: records that do not decode were skipped", "count", bad)
	}
	if off < int64(len(data)) {
		if err := cutTail(l.journalPath(), off); err != nil {
			return nil, err
		}
		l.log.Warn("edit log journal: cut a torn last record (a crash during a save)", "bytes", int64(len(data))-off)
		if fi, err = os.Stat(l.journalPath()); err != nil {
			return nil, fmt.Errorf("editlog: read journal: %w", err)
		}
	}
	im.disk.journal, im.disk.off = fi, off
	return im, nil
}

// cutTail truncates the journal to its first off bytes and syncs it.
func cutTail(p string, off int64) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("editlog: cut the journal's torn tail: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("editlog: cut the journal's torn tail: %w", err)
	}
	return f.Sync()
}

// replay applies the records of data from offset off to s and returns the
// offset after the last whole line and how many whole lines did not decode
// (skipped). A last line without a newline is not applied (torn), nor is a
// last line that does not decode.
func (l *Log) replay(s *state, data []byte, off int64) (end int64, bad int) {
	for off < int64(len(data)) {
		rest := data[off:]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return off, bad
		}
		var r record
		if err := json.Unmarshal(rest[:nl], &r); err != nil || validRecord(&r) != nil {
			if int64(nl+1) == int64(len(rest)) {
				return off, bad // the last line: torn, cut it
			}
			bad++
		} else {
			s.apply(&r)
		}
		off += int64(nl + 1)
	}
	return off, bad
}

// readTail applies the journal's records past the Log's offset (another
// runtime's appends). Callers hold the file lock and have checked that the
// journal is the file they read before and grew.
func (l *Log) readTail(fi os.FileInfo) error {
	f, err := os.Open(l.journalPath())
	if err != nil {
		return fmt.Errorf("editlog: read journal: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(l.disk.off, io.SeekStart); err != nil {
		return fmt.Errorf("editlog: read journal: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("editlog: read journal: %w", err)
	}
	end, bad := l.replay(&l.state, data, 0)
	if bad > 0 {
		l.log.Warn("edit log journal: records that do not decode were skipped", "count", bad)
	}
	if end < int64(len(data)) {
		if err := cutTail(l.journalPath(), l.disk.off+end); err != nil {
			return err
		}
		l.log.Warn("edit log journal: cut a torn last record (a crash during a save)", "bytes", int64(len(data))-end)
	}
	l.disk.off += end
	if fi, err = os.Stat(l.journalPath()); err == nil {
		l.disk.journal = fi
	}
	return nil
}

// decodeSnapshot decodes a checkpoint of version 2, or of version 1
// (contents inline), whose contents it puts in the blob store (migrated
// true).
func (l *Log) decodeSnapshot(data []byte) (*snapshot, bool, error) {
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	switch v.Version {
	case 1:
		snap, err := l.importV1(data)
		return snap, true, err
	case checkpointVersion:
	default:
		return nil, false, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, v.Version, checkpointVersion)
	}
	var snap snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	for i, op := range snap.Operations {
		if err := validOp(op); err != nil {
			return nil, false, fmt.Errorf("%w: operation %d: %v", ErrCorrupt, i, err)
		}
	}
	for i, in := range snap.Intents {
		if err := validIntent(in); err != nil {
			return nil, false, fmt.Errorf("%w: intent %d: %v", ErrCorrupt, i, err)
		}
	}
	return &snap, false, nil
}

// validPath reports whether p is a clean root-relative path.
func validPath(p string) bool { return fs.ValidPath(p) && p != "." }

func validOp(op *Operation) error {
	if op == nil || op.ID == "" {
		return errors.New("an operation has no id")
	}
	for _, f := range op.Files {
		if !validPath(f.Path) {
			return fmt.Errorf("operation %s names the path %q", op.ID, f.Path)
		}
		if (f.BeforeHash != "" && !validHash(f.BeforeHash)) || (f.AfterHash != "" && !validHash(f.AfterHash)) {
			return fmt.Errorf("operation %s has an invalid hash", op.ID)
		}
	}
	return nil
}

func validIntent(in *intent) error {
	if in == nil || in.ID == "" {
		return errors.New("an intent has no id")
	}
	for _, f := range in.Files {
		if !validPath(f.Path) {
			return fmt.Errorf("intent %s names the path %q", in.ID, f.Path)
		}
		if (f.To != "" && !validHash(f.To)) || (f.From != "" && !validHash(f.From)) {
			return fmt.Errorf("intent %s has an invalid hash", in.ID)
		}
	}
	return nil
}

func validRecord(r *record) error {
	if r.Op != nil {
		if err := validOp(r.Op); err != nil {
			return err
		}
	}
	if r.Intent != nil {
		return validIntent(r.Intent)
	}
	return nil
}

// v1File, v1Operation and v1Checkpoint are the version 1 checkpoint: the
// contents of every file inline (base64).
type v1File struct {
	FileEdit
	Before []byte `json:"before"`
	After  []byte `json:"after"`
}

type v1Operation struct {
	Operation
	Files []v1File `json:"files"`
}

type v1Checkpoint struct {
	Version    int            `json:"version"`
	Root       string         `json:"root"`
	Operations []*v1Operation `json:"operations"`
}

// importV1 decodes a version 1 checkpoint and stores its contents in the
// blob store (each after content as a delta against its before content).
func (l *Log) importV1(data []byte) (*snapshot, error) {
	var cp v1Checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	snap := &snapshot{Version: checkpointVersion, Root: cp.Root}
	for i, vop := range cp.Operations {
		if vop == nil {
			return nil, fmt.Errorf("%w: operation %d is null", ErrCorrupt, i)
		}
		op := vop.Operation
		op.Files = make([]FileEdit, len(vop.Files))
		for j, vf := range vop.Files {
			op.Files[j] = vf.FileEdit
		}
		if err := validOp(&op); err != nil {
			return nil, fmt.Errorf("%w: operation %d: %v", ErrCorrupt, i, err)
		}
		if !op.Dropped {
			for _, vf := range vop.Files {
				if err := l.putContents(vf.BeforeHash, vf.Before, vf.AfterHash, vf.After); err != nil {
					return nil, fmt.Errorf("editlog: importing a version 1 checkpoint: %w", err)
				}
			}
		}
		snap.Operations = append(snap.Operations, &op)
	}
	return snap, nil
}

// putContents stores the before and after contents of one file edit (a ""
// hash is an absent side); after as a delta against before. A content whose
// hash does not match is not stored (an old checkpoint with a damaged
// content: undo of it will report it missing).
func (l *Log) putContents(beforeHash string, before []byte, afterHash string, after []byte) error {
	base := ""
	if beforeHash != "" && hashOf(before) == beforeHash {
		if err := l.blobs.put(beforeHash, before, "", nil); err != nil {
			return err
		}
		base = beforeHash
	}
	if afterHash != "" && hashOf(after) == afterHash {
		if err := l.blobs.put(afterHash, after, base, before); err != nil {
			return err
		}
	}
	return nil
}

// appendRecord appends r to the journal, creating the journal (atomically,
// with its header) when there is none of the snapshot's generation, and
// fsyncs it when durable is set. Callers hold the file lock and have
// brought the log up to date.
func (l *Log) appendRecord(r *record, durable bool) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if l.disk.journal == nil {
		if err := l.newJournal(l.disk.gen); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(l.journalPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		// A partial line is cut on the next load.
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return err
	}
	l.disk.journal, l.disk.off = fi, fi.Size()
	return nil
}

// newJournal replaces the journal with an empty one of generation gen.
func (l *Log) newJournal(gen int64) error {
	h, _ := json.Marshal(journalHeader{Journal: 1, Generation: gen, Root: l.root})
	if err := os.MkdirAll(filepath.Dir(l.file), 0o700); err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(l.journalPath(), append(h, '\n'), 0o600); err != nil {
		return err
	}
	fi, err := os.Stat(l.journalPath())
	if err != nil {
		return err
	}
	l.disk.journal, l.disk.off = fi, fi.Size()
	return nil
}

// compact writes the whole log as the snapshot of the next generation, then
// an empty journal of that generation, then removes the contents nothing
// names any more. Callers hold the file lock and have synced the log.
func (l *Log) compact() error {
	if l.file == "" {
		l.garbage = 0
		return l.blobs.gc(l.liveHashes())
	}
	gen := l.disk.gen + 1
	data, err := json.Marshal(snapshot{Version: checkpointVersion, Root: l.root, Generation: gen, Operations: l.ops, Intents: l.intents})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.file), 0o700); err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(l.file, data, 0o600); err != nil {
		return err
	}
	l.disk.gen = gen
	if l.disk.snap, err = os.Stat(l.file); err != nil {
		return err
	}
	if err := l.newJournal(gen); err != nil {
		// The old journal is of the old generation: ignored from now on.
		l.disk.journal = nil
		return err
	}
	l.garbage = 0
	return l.blobs.gc(l.liveHashes())
}

// liveHashes is every content the log still needs: both sides of every file
// of the operations that keep their contents, and the targets of unfinished
// intents.
func (l *Log) liveHashes() map[string]bool {
	live := map[string]bool{}
	for _, op := range l.ops {
		if op.Dropped {
			continue
		}
		for _, f := range op.Files {
			live[f.BeforeHash], live[f.AfterHash] = true, true
		}
	}
	for _, in := range l.intents {
		for _, f := range in.Files {
			live[f.To] = true
		}
	}
	delete(live, "")
	return live
}

// maybeCompact compacts when the journal is large or enough contents became
// garbage; a failure is logged (the journal still holds everything).
func (l *Log) maybeCompact() {
	big := false
	if l.file != "" && l.disk.journal != nil {
		snapSize := int64(0)
		if l.disk.snap != nil {
			snapSize = l.disk.snap.Size()
		}
		big = l.disk.off > compactBytes && l.disk.off > snapSize
	}
	if !big && l.garbage < gcEvery && (l.file != "" || l.garbage == 0) {
		return
	}
	if err := l.compact(); err != nil {
		l.log.Warn("edit log: compacting the checkpoint", "err", err)
	}
}

// removeCheckpointTemps removes the temp files of this log's own atomic
// writes in dataDir/checkpoints, its blob folder and its temp folder: left
// by a crash, since every writer of them holds the file lock, as the caller
// does.
func (l *Log) removeCheckpointTemps() {
	n := 0
	dir := filepath.Dir(l.file)
	if entries, err := os.ReadDir(dir); err == nil {
		snapBase, journalBase := filepath.Base(l.file), filepath.Base(l.journalPath())
		for _, e := range entries {
			if name := e.Name(); e.Type().IsRegular() && (fsx.IsTempOf(name, snapBase) || fsx.IsTempOf(name, journalBase)) {
				if os.Remove(filepath.Join(dir, name)) == nil {
					n++
				}
			}
		}
	}
	for _, d := range []string{l.blobsDir(), l.tempDir()} {
		k, err := fsx.RemoveTemps(d, time.Time{})
		n += k
		if err != nil {
			l.log.Warn("edit log: removing temp files left by a crash", "err", err)
		}
	}
	if n > 0 {
		l.log.Info("edit log: removed temp files left by a crash", "count", n)
	}
}
