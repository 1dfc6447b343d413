package editlog

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/fsx"
)

// Several runtimes may share one dataDir and one workspace (two VS Code
// windows on one folder): each has its own Log on the same checkpoint file.
// So that no operation is lost:
//   - operation ids are "op-<prefix>-<n>": prefix is 6 random hex digits
//     chosen per Log (not one a loaded id already uses), n counts from 1;
//   - every change runs under an exclusive file lock on the sidecar
//     "<workspace id>.lock" next to the checkpoint, and starts by reloading
//     the checkpoint and merging it by id (merge), so a save never drops
//     another Log's operations; Apply holds the lock from the stale-edit
//     check through the writes to the final save;
//   - reads (List, Pending, TaskOperations) first stat the checkpoint files
//     and, when they changed since this Log last saw them, take the lock and
//     catch up (only the journal's new records, when only it grew).
//
// Every per-operation state change is one-way (committed, undone, dropped,
// a file settled), so merging two versions of an operation keeps the union.

// newPrefix returns 6 random hex digits not used as the prefix of any id in
// ops.
func newPrefix(ops []*Operation) string {
	used := map[string]bool{}
	for _, op := range ops {
		if p, _, ok := strings.Cut(strings.TrimPrefix(op.ID, "op-"), "-"); ok {
			used[p] = true
		}
	}
	for {
		var b [3]byte
		if _, err := rand.Read(b[:]); err != nil {
			// crypto/rand does not fail on supported platforms; fall back
			// to the clock rather than panic.
			n := time.Now().UnixNano()
			b = [3]byte{byte(n >> 16), byte(n >> 8), byte(n)}
		}
		if p := hex.EncodeToString(b[:]); !used[p] {
			return p
		}
	}
}

// lockPath is the sidecar lock file of a checkpoint: "<name>.lock" for
// "<name>.json".
func lockPath(file string) string {
	return strings.TrimSuffix(file, ".json") + ".lock"
}

// lock takes the checkpoint's file lock (a no-op without a checkpoint) and
// returns its release. Callers hold l.mu.
func (l *Log) lock() (func(), error) {
	if l.file == "" {
		return func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(l.file), 0o700); err != nil {
		return nil, fmt.Errorf("editlog: lock: %w", err)
	}
	f, err := os.OpenFile(lockPath(l.file), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("editlog: lock: %w", err)
	}
	if err := fsx.LockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("editlog: lock %s: %w", lockPath(l.file), err)
	}
	return func() {
		if err := fsx.UnlockFile(f); err != nil {
			l.log.Warn("edit log: releasing the checkpoint lock", "err", err)
		}
		f.Close()
	}, nil
}

// reload brings the log up to date with the checkpoint files: nothing to do
// when they are as this Log last left them; the journal's new records when
// only it grew (another runtime's changes); otherwise the snapshot and the
// whole journal, merged by id into the log (merge). Unfinished operations
// and intents found then belong to a runtime that died mid-change (the
// caller holds the file lock) and are settled (recover), and the result is
// compacted. A snapshot that no longer decodes is rewritten from this Log's
// memory, with a warning. Callers hold l.mu and the file lock.
func (l *Log) reload() error {
	if l.file == "" {
		return nil
	}
	snap, err := statOrNil(l.file)
	if err != nil {
		return fmt.Errorf("editlog: read checkpoint: %w", err)
	}
	j, err := statOrNil(l.journalPath())
	if err != nil {
		return fmt.Errorf("editlog: read journal: %w", err)
	}
	if sameStamp(snap, l.disk.snap) {
		switch {
		case l.disk.journal == nil && j == nil, l.disk.journal != nil && sameStamp(j, l.disk.journal):
			return nil
		case l.disk.journal != nil && j != nil && os.SameFile(j, l.disk.journal) && j.Size() > l.disk.off:
			if err := l.readTail(j); err != nil {
				return err
			}
			l.settleOrphans(false)
			return nil
		}
	}
	im, err := l.readImage()
	if errors.Is(err, ErrCorrupt) {
		l.log.Warn("edit log: the checkpoint changed on disk and does not decode; rewriting it from this runtime's log", "err", err)
		return l.compact()
	}
	if err != nil {
		return err
	}
	l.merge(im)
	l.settleOrphans(im.migrate)
	return nil
}

// merge adds the operations of the checkpoint image to the log, by id: one
// known to both gets the union of their one-way states; one only on disk is
// added; one only in memory is kept when committed (its save failed). The
// result is ordered by time (stable). The intents are the image's (this
// Log has none between its changes).
func (l *Log) merge(im *image) {
	mine := make(map[string]*Operation, len(l.ops))
	for _, op := range l.ops {
		mine[op.ID] = op
	}
	onDisk := make(map[string]bool, len(im.ops))
	out := make([]*Operation, 0, len(im.ops)+len(l.ops))
	for _, d := range im.ops {
		onDisk[d.ID] = true
		if m := mine[d.ID]; m != nil {
			out = append(out, mergeOp(m, d))
			continue
		}
		out = append(out, d)
	}
	for _, m := range l.ops {
		if !onDisk[m.ID] && m.Committed {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	l.ops, l.intents, l.disk = out, im.intents, im.disk
}

// mergeOp is the union of two versions of one operation: the committed
// version's files (recovery may have removed files never written), each
// file settled when either version settled it, undone or dropped when
// either is (a dropped operation loses its diff).
func mergeOp(a, b *Operation) *Operation {
	if !a.Committed && b.Committed {
		a, b = b, a
	}
	out := copyOp(a)
	settled := map[string]bool{}
	for _, f := range b.Files {
		if f.Settled {
			settled[f.Path] = true
		}
	}
	for i := range out.Files {
		if settled[out.Files[i].Path] {
			out.Files[i].Settled = true
		}
	}
	out.Undone = a.Undone || b.Undone
	if a.Dropped || b.Dropped {
		out.Dropped, out.Diff = true, ""
	}
	return &out
}

// begin starts a change: it takes the file lock and brings the log up to
// date. Callers hold l.mu and call the returned release when done.
func (l *Log) begin() (func(), error) {
	release, err := l.lock()
	if err != nil {
		return nil, err
	}
	if err := l.reload(); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// refresh brings the log up to date before a read when the checkpoint files
// changed since this Log last saw them (a stat of each; the file lock only
// then); a failure is logged and the read goes on with the memory. Callers
// hold l.mu.
func (l *Log) refresh() {
	if !l.changedOnDisk() {
		return
	}
	release, err := l.begin()
	if err != nil {
		l.log.Warn("edit log: reloading the checkpoint", "err", err)
		return
	}
	release()
}
