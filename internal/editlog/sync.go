package editlog

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
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
//   - reads (List, Pending, TaskOperations) reload the file first when it
//     changed since this Log last saw it.
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
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("editlog: lock %s: %w", lockPath(l.file), err)
	}
	return func() {
		if err := unlockFile(f); err != nil {
			l.log.Warn("edit log: releasing the checkpoint lock", "err", err)
		}
		f.Close()
	}, nil
}

// fileStamp identifies one version of the checkpoint file.
type fileStamp struct {
	size int64
	mod  time.Time
}

func stampOf(file string) (fileStamp, bool) {
	fi, err := os.Stat(file)
	if err != nil {
		return fileStamp{}, false
	}
	return fileStamp{fi.Size(), fi.ModTime()}, true
}

// reload merges the checkpoint on disk into the log. locked means the
// caller holds the file lock: an unfinished operation on disk then belongs
// to a runtime that died mid-edit and is settled (recover), and the result is
// saved when that changed anything. Without the lock unfinished operations
// are left out (another runtime may be writing them). A checkpoint that
// does not decode is left alone with a warning (the next save replaces it).
// Callers hold l.mu.
func (l *Log) reload(locked bool) error {
	if l.file == "" {
		return nil
	}
	st, ok := stampOf(l.file)
	if ok && l.stampOK && st == l.stamp {
		return nil
	}
	data, err := os.ReadFile(l.file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("editlog: read checkpoint: %w", err)
	}
	cp, err := decodeCheckpoint(data)
	if err != nil {
		l.log.Warn("edit log: the checkpoint changed on disk and does not decode; keeping this runtime's log", "err", err)
		return nil
	}
	l.merge(cp.Operations, locked)
	if !locked {
		l.stamp, l.stampOK = st, ok
		return nil
	}
	if l.recover() {
		return l.save()
	}
	l.stamp, l.stampOK = st, ok
	return nil
}

// merge adds the operations of disk to the log, by id: one known to both
// gets the union of their one-way states; one only on disk is added (unless
// it is unfinished and orphans is false); one only in memory is kept when
// committed. The result is ordered by time (stable).
func (l *Log) merge(disk []*Operation, orphans bool) {
	mine := make(map[string]*Operation, len(l.ops))
	for _, op := range l.ops {
		mine[op.ID] = op
	}
	onDisk := make(map[string]bool, len(disk))
	out := make([]*Operation, 0, len(disk)+len(l.ops))
	for _, d := range disk {
		onDisk[d.ID] = true
		if m := mine[d.ID]; m != nil {
			out = append(out, mergeOp(m, d))
			continue
		}
		if d.Committed || orphans {
			out = append(out, d)
		}
	}
	for _, m := range l.ops {
		if !onDisk[m.ID] && m.Committed {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	l.ops = out
}

// mergeOp is the union of two versions of one operation: the committed
// version's files (recovery may have removed files never written), each
// file settled when either version settled it, undone or dropped when
// either is (a dropped operation loses its contents).
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
		for i := range out.Files {
			out.Files[i].Before, out.Files[i].After = nil, nil
		}
	}
	return &out
}

// begin starts a change: it takes the file lock and merges the checkpoint.
// Callers hold l.mu and call the returned release when done.
func (l *Log) begin() (func(), error) {
	release, err := l.lock()
	if err != nil {
		return nil, err
	}
	if err := l.reload(true); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// refresh merges the checkpoint before a read when it changed since this Log
// last saw it; a failure is logged and the read goes on with the memory.
// Callers hold l.mu.
func (l *Log) refresh() {
	if err := l.reload(false); err != nil {
		l.log.Warn("edit log: reloading the checkpoint", "err", err)
	}
}
