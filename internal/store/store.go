// Package store owns saved tasks: per task an append-only log of records
// while it runs (dataDir/tasks/<taskId>.log, log.go) and a compact snapshot
// (dataDir/tasks/<taskId>.json, written atomically: temp file, fsync,
// rename) when it ends; the listing, newest first; and the start-up sweep
// that marks tasks left `running` by a runtime that no longer exists as
// `failed`. Task files of the format before the log (a snapshot only) load
// as they are. Memory is the same without a dataDir.
//
// Source: ../shared/spec/protocol.md (initialize, agent/tasks, agent/task,
// agent/deleteTask) and addendum §7 and §11 (owner pid and start time).
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/fsx"
	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Task statuses (addendum §7).
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Owner identifies the runtime process that runs a task: its pid and the
// process start time in clock ticks since boot (/proc/<pid>/stat field 22),
// so a reused pid is not mistaken for the owner.
type Owner struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
}

// Task is one saved task file. Summary is the agent/run summary as sent on
// the wire; Messages is the conversation (provider.Message values).
type Task struct {
	TaskID    string    `json:"taskId"`
	Title     string    `json:"title"`
	Status    string    `json:"status"`
	ChatMode  string    `json:"chatMode"`
	Model     string    `json:"model"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Error     string    `json:"error,omitempty"`
	Owner     Owner     `json:"owner"`
	// Root is the workspace folder the task ran in (absent in task files
	// written before it was kept): a client resuming "the newest task" picks
	// the newest of its folder.
	Root     string          `json:"root,omitempty"`
	Summary  json.RawMessage `json:"summary,omitempty"`
	Messages json.RawMessage `json:"messages,omitempty"`
	// Events are the task's events worth keeping (every event but the
	// deltas and the live-only ones), as sent, for agent/replay; absent in
	// task files of the format before the log.
	Events json.RawMessage `json:"events,omitempty"`
	// Gen is the snapshot's generation: a log whose begin record names
	// it continues this snapshot (log.go).
	Gen int `json:"gen,omitempty"`
}

// Info is one entry of agent/tasks (addendum §11).
type Info = protocol.TaskInfo

// ErrNotFound is returned for a task id with no file.
var ErrNotFound = errors.New("store: no such task")

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// ValidID reports whether id can name a task file (1-128 characters of
// letters, digits, '_', '-', '.', not starting with a dot or dash).
func ValidID(id string) bool { return idPattern.MatchString(id) && !strings.Contains(id, "..") }

// Store is the task folder of one data folder. Safe for concurrent use.
type Store struct {
	dir string
}

// staleTemp is how old the temp file of a task file's atomic write must be
// for Open to remove it as a crash leftover: another runtime on the same data
// folder may be writing one right now (a write takes milliseconds).
const staleTemp = time.Minute

// Open creates dataDir/tasks if needed and removes the temp files that
// crashed writes left there (older than staleTemp). dataDir must be
// absolute.
func Open(dataDir string) (*Store, error) {
	if !filepath.IsAbs(dataDir) {
		return nil, fmt.Errorf("dataDir %q is not an absolute path", dataDir)
	}
	dir := filepath.Join(dataDir, "tasks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the task folder: %w", err)
	}
	// Best effort: a leftover that cannot be removed harms nothing.
	fsx.RemoveTemps(dir, time.Now().Add(-staleTemp))
	return &Store{dir: dir}, nil
}

// Save writes t as the task's whole snapshot atomically, setting UpdatedAt
// (and CreatedAt when zero); a log the task had is folded away. ErrLocked
// while the task runs.
func (s *Store) Save(t *Task) error {
	lock, err := s.lockTask(t.TaskID, lockWait)
	if err != nil {
		return err
	}
	defer unlockTask(lock)
	cur, _, err := s.readTask(t.TaskID)
	if err != nil {
		cur = nil // an unreadable snapshot is replaced
	}
	return s.writeSnapshot(t, snapGen(cur)+1)
}

// Load reads one task: its snapshot with the records of its log applied;
// ErrNotFound when it has neither.
func (s *Store) Load(id string) (*Task, error) {
	t, _, err := s.readTask(id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, ErrNotFound
	}
	if t.Status == StatusFailed && t.Error != "" && (len(t.Summary) == 0 || string(t.Summary) == "null") {
		// Failed by a sweep that kept no summary (an older runtime's).
		t.Summary = failedSummary(t)
	}
	return t, nil
}

// Delete removes a task's snapshot and log; false when there was none, or
// when the task is running (its lock is held).
func (s *Store) Delete(id string) (bool, error) {
	lock, err := s.lockTask(id, 0) // held: running somewhere
	if errors.Is(err, ErrLocked) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer unlockTask(lock)
	found := false
	for _, ext := range []string{".json", ".log"} {
		p, _ := s.file(id, ext)
		err := os.Remove(p)
		if err == nil {
			found = true
		} else if !errors.Is(err, os.ErrNotExist) {
			return found, err
		}
	}
	p, _ := s.file(id, ".lock")
	os.Remove(p)
	return found, nil
}

// List returns every readable task, newest (by UpdatedAt) first. Unreadable
// or torn files are skipped.
func (s *Store) List() ([]Info, error) {
	tasks, err := s.all()
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, Info{TaskID: t.TaskID, Title: t.Title, Status: protocol.TaskStatus(t.Status), ChatMode: protocol.ChatMode(t.ChatMode),
			Model: t.Model, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Root: t.Root})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}

func (s *Store) all() ([]*Task, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []*Task
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if e.IsDir() || (ext != ".json" && ext != ".log") {
			continue
		}
		id := strings.TrimSuffix(name, ext)
		if seen[id] || !ValidID(id) {
			continue
		}
		seen[id] = true
		t, err := s.Load(id)
		if err != nil {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// FailOrphans marks every task saved as running whose owner process is gone
// (or is not the same process: a different start time) as failed, with Error
// set. alive reports whether an owner still runs; nil means OwnerAlive. It
// returns the ids it changed.
func (s *Store) FailOrphans(alive func(Owner) bool) ([]string, error) {
	if alive == nil {
		alive = OwnerAlive
	}
	tasks, err := s.all()
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, t := range tasks {
		if t.Status != StatusRunning || alive(t.Owner) {
			continue
		}
		ok, err := s.failOrphan(t.TaskID, alive)
		if err != nil {
			return changed, err
		}
		if ok {
			changed = append(changed, t.TaskID)
		}
	}
	return changed, nil
}

// failOrphan marks one task failed under its lock (a held lock means it
// runs somewhere: left alone), keeping every record of its log.
func (s *Store) failOrphan(id string, alive func(Owner) bool) (bool, error) {
	lock, err := s.lockTask(id, 0) // held: running somewhere
	if errors.Is(err, ErrLocked) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer unlockTask(lock)
	t, _, err := s.readTask(id)
	if err != nil || t == nil || t.Status != StatusRunning || alive(t.Owner) {
		return false, err
	}
	t.Status = StatusFailed
	t.Error = "the runtime running this task stopped before it finished (it was killed or crashed)"
	t.Summary = failedSummary(t)
	if err := s.writeSnapshot(t, t.Gen+1); err != nil {
		return false, err
	}
	return true, nil
}

// failedSummary returns t's summary with status "failed" and error set to
// t.Error (protocol.md initialize: the result must carry them, not only the
// file). A running task saved no summary yet; it gets one in the agent/run
// summary shape with what the record knows: no text, changes or calls counted,
// and no usage, which nobody measured (the client sees the conversation in
// messages).
func failedSummary(t *Task) json.RawMessage {
	members, ok := objectMembers(t.Summary)
	if !ok {
		// The agent/run summary (protocol.AgentSummary, so its members and
		// their order are the type's) with no usage or metrics.
		members, _ = objectMembers(jsonOf(protocol.AgentSummary{TaskID: t.TaskID, Model: t.Model,
			ChangedFiles: []protocol.FileChange{}, Operations: []string{}, Validations: []protocol.ValidationResult{},
			SkippedChecks: []protocol.SkippedCheck{}}))
	}
	members = setMember(members, "status", jsonOf(StatusFailed))
	members = setMember(members, "error", jsonOf(t.Error))
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonOf(m.name))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// member is one member of a JSON object, kept in its wire order: a summary
// patched here keeps the order its writer gave it (a map would sort it).
type member struct {
	name  string
	value json.RawMessage
}

// objectMembers splits a JSON object into its members in order; ok is false
// for anything but an object.
func objectMembers(raw json.RawMessage) (members []member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		name, isName := tok.(string)
		if err != nil || !isName {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		members = append(members, member{name, v})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	return members, true
}

// setMember sets name's value where it stands, or appends it.
func setMember(members []member, name string, value json.RawMessage) []member {
	for i := range members {
		if members[i].name == name {
			members[i].value = value
			return members
		}
	}
	return append(members, member{name, value})
}

func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// Self returns the Owner of the calling process.
func Self() Owner {
	pid := os.Getpid()
	st, _ := startTime(pid)
	return Owner{PID: pid, StartTime: st}
}

// OwnerAlive reports whether the process o names still runs with the same
// start time. A zero pid is never alive.
func OwnerAlive(o Owner) bool {
	if o.PID <= 0 {
		return false
	}
	st, err := startTime(o.PID)
	if err != nil {
		return false
	}
	return o.StartTime == 0 || st == o.StartTime
}

// startTime reads field 22 of /proc/<pid>/stat (starttime, clock ticks).
func startTime(pid int) (uint64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return 0, errors.New("short stat")
	}
	return strconv.ParseUint(fields[19], 10, 64)
}
