// Package store owns saved tasks: one JSON file per task under
// dataDir/tasks/<taskId>.json, written atomically (temp file, fsync, rename),
// listed newest first, and the start-up sweep that marks tasks left `running`
// by a runtime that no longer exists as `failed`.
//
// Source: ../shared/spec/protocol.md (initialize, agent/tasks, agent/task,
// agent/deleteTask) and addendum §7 and §11 (owner pid and start time).
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/fsx"
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
	TaskID    string          `json:"taskId"`
	Title     string          `json:"title"`
	Status    string          `json:"status"`
	ChatMode  string          `json:"chatMode"`
	Model     string          `json:"model"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
	Error     string          `json:"error,omitempty"`
	Owner     Owner           `json:"owner"`
	Summary   json.RawMessage `json:"summary,omitempty"`
	Messages  json.RawMessage `json:"messages,omitempty"`
}

// Info is one entry of agent/tasks (addendum §11).
type Info struct {
	TaskID    string    `json:"taskId"`
	Title     string    `json:"title"`
	Status    string    `json:"status"`
	ChatMode  string    `json:"chatMode"`
	Model     string    `json:"model"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// ErrNotFound is returned for a task id with no file.
var ErrNotFound = errors.New("store: no such task")

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// ValidID reports whether id can name a task file (1-128 characters of
// letters, digits, '_', '-', '.', not starting with a dot or dash).
func ValidID(id string) bool { return idPattern.MatchString(id) && !strings.Contains(id, "..") }

// Store is the task folder of one data folder. Safe for concurrent use.
type Store struct {
	dir string
	mu  sync.Mutex
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

func (s *Store) path(id string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("invalid task id %q", id)
	}
	return filepath.Join(s.dir, id+".json"), nil
}

// Save writes t atomically, setting UpdatedAt (and CreatedAt when zero).
func (s *Store) Save(t *Task) error {
	p, err := s.path(t.TaskID)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	t.UpdatedAt = now
	data, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return fsx.WriteFileAtomic(p, data, 0o600)
}

// Load reads one task; ErrNotFound when it has no file.
func (s *Store) Load(id string) (*Task, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var t Task
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("task file %s is not valid JSON: %w", filepath.Base(p), err)
	}
	if t.Status == StatusFailed && t.Error != "" && (len(t.Summary) == 0 || string(t.Summary) == "null") {
		// Failed by a sweep that kept no summary (an older runtime's).
		t.Summary = failedSummary(&t)
	}
	return &t, nil
}

// Delete removes a task file; false when there was none.
func (s *Store) Delete(id string) (bool, error) {
	p, err := s.path(id)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err = os.Remove(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
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
		out = append(out, Info{TaskID: t.TaskID, Title: t.Title, Status: t.Status, ChatMode: t.ChatMode,
			Model: t.Model, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}

func (s *Store) all() ([]*Task, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []*Task
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") {
			continue
		}
		t, err := s.Load(strings.TrimSuffix(name, ".json"))
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
		t.Status = StatusFailed
		t.Error = "the runtime running this task stopped before it finished (it was killed or crashed)"
		t.Summary = failedSummary(t)
		if err := s.Save(t); err != nil {
			return changed, err
		}
		changed = append(changed, t.TaskID)
	}
	return changed, nil
}

// failedSummary returns t's summary with status "failed" and error set to
// t.Error (protocol.md initialize: the result must carry them, not only the
// file). A running task saved no summary yet; it gets one in the agent/run
// summary shape with what the record knows: no text, changes or calls counted,
// and no usage, which nobody measured (the client sees the conversation in
// messages).
func failedSummary(t *Task) json.RawMessage {
	var m map[string]any
	if len(t.Summary) == 0 || json.Unmarshal(t.Summary, &m) != nil || m == nil {
		m = map[string]any{
			"taskId": t.TaskID, "text": "", "changedFiles": []any{}, "operations": []any{},
			"validations": []any{}, "validationRan": false, "skippedChecks": []any{},
			"model": t.Model, "iterations": 0, "toolCalls": 0,
		}
	}
	m["status"] = StatusFailed
	m["error"] = t.Error
	b, err := json.Marshal(m)
	if err != nil {
		return t.Summary
	}
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
