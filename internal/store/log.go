package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/task-x/task-x-runtime/internal/fsx"
)

// The task log (docs/tasklog.md). A running task is recorded as records
// appended to dataDir/tasks/<taskId>.log, one line each:
//
//	<crc32c of the JSON, 8 hex digits> <JSON record>\n
//
// The first record is `begin` (the task's record as it starts: status
// running, owner, and `base`, the generation of the snapshot it continues);
// then `msg` (a conversation message) and `ev` (an event worth keeping)
// records, each appended and fsynced as it happens. When the task ends,
// Finish writes the compact snapshot dataDir/tasks/<taskId>.json (today's
// task file, atomically, with the next generation and the events) and
// removes the log. Load reads the snapshot and then the log records whose
// `base` is the snapshot's generation (a log left by a crash after its
// snapshot was written is stale and ignored), up to the last whole record:
// a torn or corrupt last record is dropped, never the whole task.
//
// One writer per task: every write (Begin to Finish, Save, Delete, the
// sweep) holds an exclusive flock(2) on dataDir/tasks/<taskId>.lock, so two
// runtimes sharing a data folder never interleave records of one task; a
// task whose lock is held is running somewhere (ErrLocked). Readers take no
// lock: appends are whole lines and the snapshot is replaced atomically.

// ErrLocked is Begin's, Save's and Delete's error for a task another
// writer (a running task, in this runtime or another) holds.
var ErrLocked = errors.New("store: task is in use by a running task")

// Record kinds of a task log.
const (
	RecBegin   = "begin"
	RecMessage = "msg"
	RecEvent   = "ev"
)

// Record is one entry of a task log: a conversation message (Kind msg) or
// an event worth keeping (Kind ev), its JSON in Value.
type Record struct {
	Kind  string          `json:"k"`
	Value json.RawMessage `json:"v,omitempty"`
	// Task and Base are set on the begin record only.
	Task *Task `json:"task,omitempty"`
	Base int   `json:"base,omitempty"`
}

// Log is the open log of one running task: Append adds records (each call
// one write and one fsync), Finish writes the final snapshot and closes it.
// Close without Finish leaves the task as a crash would (the records stay;
// the sweep marks it failed). Not safe for concurrent use.
type Log interface {
	Append(recs ...Record) error
	Finish(final *Task) error
	Close() error
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// encodeRecord is one log line.
func encodeRecord(r Record) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(data)+10)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(data, crcTable))
	line = append(line, data...)
	return append(line, '\n'), nil
}

// readLog returns the whole records of a log, in order, and the byte
// length they take; reading stops at the first line that is torn (no
// newline), has a wrong checksum or is not a record.
func readLog(data []byte) ([]Record, int) {
	var out []Record
	off := 0
	for off < len(data) {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break
		}
		line := data[off : off+nl]
		if len(line) < 10 || line[8] != ' ' {
			break
		}
		sum, err := strconv.ParseUint(string(line[:8]), 16, 32)
		if err != nil || uint32(sum) != crc32.Checksum(line[9:], crcTable) {
			break
		}
		var r Record
		if json.Unmarshal(line[9:], &r) != nil || r.Kind == "" {
			break
		}
		out = append(out, r)
		off += nl + 1
	}
	return out, off
}

func (s *Store) file(id, ext string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("invalid task id %q", id)
	}
	return filepath.Join(s.dir, id+ext), nil
}

// lockWait is how long a writer waits for a task's lock before it counts
// as held by a running task: the other writers (a save, a delete, the
// sweep) hold it for milliseconds.
const lockWait = 500 * time.Millisecond

// lockTask takes the task's writer lock; ErrLocked when another holder
// keeps it for wait (0: no wait). The lock file is checked to still be the
// one at its path after locking (Delete removes it while it holds it).
func (s *Store) lockTask(id string, wait time.Duration) (*os.File, error) {
	p, err := s.file(id, ".lock")
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, err
			}
			if time.Now().After(deadline) {
				return nil, ErrLocked
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		a, errA := f.Stat()
		b, errB := os.Stat(p)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return f, nil
		}
		f.Close() // removed or replaced while we waited: lock the new one
	}
}

// unlockTask releases a lock from lockTask.
func unlockTask(f *os.File) {
	if f != nil {
		f.Close() // closing the last descriptor releases the flock
	}
}

// readTask reads the snapshot and the log of one task without a lock: the
// task (nil when neither exists), the snapshot's generation, the log's
// records (nil when it has none that apply) and their byte length.
func (s *Store) readTask(id string) (*Task, []Record, error) {
	snapPath, err := s.file(id, ".json")
	if err != nil {
		return nil, nil, err
	}
	logPath, _ := s.file(id, ".log")
	var snap *Task
	data, err := os.ReadFile(snapPath)
	switch {
	case err == nil:
		var t Task
		if err := json.Unmarshal(data, &t); err != nil {
			return nil, nil, fmt.Errorf("task file %s is not valid JSON: %w", filepath.Base(snapPath), err)
		}
		snap = &t
	case !errors.Is(err, os.ErrNotExist):
		return nil, nil, err
	}
	logData, err := os.ReadFile(logPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	recs, _ := readLog(logData)
	if len(recs) == 0 || recs[0].Kind != RecBegin || recs[0].Task == nil {
		recs = nil
	} else if gen := snapGen(snap); recs[0].Base != gen {
		recs = nil // stale: the snapshot already holds it
	}
	if snap == nil && recs == nil {
		return nil, nil, nil
	}
	t := apply(snap, recs)
	if recs != nil {
		if fi, err := os.Stat(logPath); err == nil {
			t.UpdatedAt = fi.ModTime().UTC()
		}
	}
	return t, recs, nil
}

func snapGen(t *Task) int {
	if t == nil {
		return 0
	}
	return t.Gen
}

// apply returns the snapshot (nil: none) with the log records applied.
func apply(snap *Task, recs []Record) *Task {
	var t Task
	if snap != nil {
		t = *snap
	}
	if len(recs) == 0 {
		return &t
	}
	b := recs[0].Task
	gen, events, messages := t.Gen, t.Events, t.Messages
	t = *b
	t.Gen = gen
	if t.CreatedAt.IsZero() && snap != nil {
		t.CreatedAt = snap.CreatedAt
	}
	var msgs, evs []json.RawMessage
	for _, r := range recs[1:] {
		switch r.Kind {
		case RecMessage:
			msgs = append(msgs, r.Value)
		case RecEvent:
			evs = append(evs, r.Value)
		}
	}
	t.Messages = appendRaw(messages, msgs)
	t.Events = appendRaw(events, evs)
	return &t
}

// appendRaw appends items to a JSON array (nil or empty: a new array).
func appendRaw(arr json.RawMessage, items []json.RawMessage) json.RawMessage {
	if len(items) == 0 {
		return arr
	}
	var b bytes.Buffer
	trimmed := bytes.TrimSpace(arr)
	if len(trimmed) >= 2 && trimmed[0] == '[' && trimmed[len(trimmed)-1] == ']' {
		inner := bytes.TrimSpace(trimmed[1 : len(trimmed)-1])
		b.WriteByte('[')
		b.Write(inner)
		if len(inner) > 0 {
			b.WriteByte(',')
		}
	} else {
		b.WriteByte('[')
	}
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// writeSnapshot writes t as the task's snapshot with the next generation
// and removes its log. The caller holds the task's lock.
func (s *Store) writeSnapshot(t *Task, gen int) error {
	snapPath, err := s.file(t.TaskID, ".json")
	if err != nil {
		return err
	}
	logPath, _ := s.file(t.TaskID, ".log")
	now := time.Now().UTC()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	t.UpdatedAt = now
	t.Gen = gen
	data, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(snapPath, data, 0o600); err != nil {
		return err
	}
	if err := os.Remove(logPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Begin opens the log of a task that starts running: it takes the task's
// writer lock (ErrLocked when another runtime runs it), folds a log that a
// crashed run left into the snapshot, writes the first snapshot of a new
// task, and appends the begin record (t as it starts: status, owner,
// title; its messages and events come as records).
func (s *Store) Begin(t *Task) (Log, error) {
	lock, err := s.lockTask(t.TaskID, lockWait)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			unlockTask(lock)
		}
	}()
	cur, recs, err := s.readTask(t.TaskID)
	if err != nil {
		return nil, err
	}
	gen := snapGen(cur)
	meta := *t
	meta.Messages, meta.Events, meta.Summary, meta.Gen = nil, nil, nil, 0
	if cur != nil && !cur.CreatedAt.IsZero() {
		meta.CreatedAt = cur.CreatedAt
	}
	if meta.CreatedAt.IsZero() {
		meta.CreatedAt = time.Now().UTC()
	}
	switch {
	case cur == nil:
		// A new task: a first snapshot, so the task file exists while it runs.
		first := meta
		if err := s.writeSnapshot(&first, 1); err != nil {
			return nil, err
		}
		gen = 1
	case recs != nil:
		// A crashed run's log: keep its records in the snapshot.
		if err := s.writeSnapshot(cur, gen+1); err != nil {
			return nil, err
		}
		gen++
	}
	logPath, _ := s.file(t.TaskID, ".log")
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	l := &fileLog{s: s, id: t.TaskID, lock: lock, f: f}
	meta.UpdatedAt = time.Now().UTC()
	if err := l.Append(Record{Kind: RecBegin, Task: &meta, Base: gen}); err != nil {
		f.Close()
		return nil, err
	}
	syncDir(s.dir)
	ok = true
	return l, nil
}

// fileLog is the open log of one task in a task folder.
type fileLog struct {
	s    *Store
	id   string
	lock *os.File
	f    *os.File
	buf  []byte
}

// Append writes the records as one write and fsyncs the log.
func (l *fileLog) Append(recs ...Record) error {
	if l.f == nil {
		return errors.New("store: task log is closed")
	}
	l.buf = l.buf[:0]
	for _, r := range recs {
		line, err := encodeRecord(r)
		if err != nil {
			return err
		}
		l.buf = append(l.buf, line...)
	}
	if len(l.buf) == 0 {
		return nil
	}
	if _, err := l.f.Write(l.buf); err != nil {
		return err
	}
	return l.f.Sync()
}

// Finish writes the compact snapshot: the task as the log has it, with
// final's status, error, summary and (when not nil) messages, and the
// log's events; then it removes the log and releases the task.
func (l *fileLog) Finish(final *Task) error {
	if l.f == nil {
		return errors.New("store: task log is closed")
	}
	defer l.Close()
	cur, _, err := l.s.readTask(l.id)
	if err != nil {
		return err
	}
	if cur == nil {
		cur = &Task{TaskID: l.id}
	}
	cur.Title = final.Title
	cur.Status, cur.Error, cur.Summary = final.Status, final.Error, final.Summary
	if final.Messages != nil {
		cur.Messages = final.Messages
	}
	return l.s.writeSnapshot(cur, cur.Gen+1)
}

// Close releases the task without a snapshot.
func (l *fileLog) Close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	unlockTask(l.lock)
	l.lock = nil
	return err
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// LogBytes is the size of a task's log file (0 when it has none); for
// tests and benchmarks.
func (s *Store) LogBytes(id string) int64 {
	p, err := s.file(id, ".log")
	if err != nil {
		return 0
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}
