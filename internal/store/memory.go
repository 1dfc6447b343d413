package store

import (
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Memory keeps tasks in memory for one session (no dataDir): the same
// records as a task folder, at most Max of them (the oldest by UpdatedAt
// dropped), a running task's log appended in memory. Safe for concurrent
// use; Load returns copies.
type Memory struct {
	max   int
	mu    sync.Mutex
	tasks map[string]*Task
	logs  map[string]*memLog // running tasks
}

// NewMemory returns an empty in-memory store holding at most max tasks
// (max <= 0: 100).
func NewMemory(max int) *Memory {
	if max <= 0 {
		max = 100
	}
	return &Memory{max: max, tasks: map[string]*Task{}, logs: map[string]*memLog{}}
}

// Save stores a copy of t, setting UpdatedAt (and CreatedAt when zero).
func (m *Memory) Save(t *Task) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now().UTC()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	t.UpdatedAt = now
	if m.logs[t.TaskID] != nil {
		return ErrLocked
	}
	cp := *t
	m.put(&cp)
	return nil
}

// put stores t and drops the oldest ended tasks beyond max.
func (m *Memory) put(t *Task) {
	m.tasks[t.TaskID] = t
	for len(m.tasks) > m.max {
		var oldest *Task
		for _, x := range m.tasks {
			if m.logs[x.TaskID] == nil && (oldest == nil || x.UpdatedAt.Before(oldest.UpdatedAt)) {
				oldest = x
			}
		}
		if oldest == nil {
			return
		}
		delete(m.tasks, oldest.TaskID)
	}
}

// Load returns a copy of the task, ErrNotFound when there is none.
func (m *Memory) Load(id string) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return nil, ErrNotFound
	}
	cp := *t
	if l := m.logs[id]; l != nil {
		cp.Messages = appendRaw(cp.Messages, l.msgs)
		cp.Events = appendRaw(cp.Events, l.evs)
	}
	return &cp, nil
}

// Delete removes the task and reports whether it existed.
func (m *Memory) Delete(id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.logs[id] != nil {
		return false, nil
	}
	_, ok := m.tasks[id]
	delete(m.tasks, id)
	return ok, nil
}

// List returns every task's Info, newest first.
func (m *Memory) List() ([]Info, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Info, 0, len(m.tasks))
	for _, t := range m.tasks {
		out = append(out, Info{TaskID: t.TaskID, Title: t.Title, Status: protocol.TaskStatus(t.Status), ChatMode: protocol.ChatMode(t.ChatMode),
			Model: t.Model, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Root: t.Root})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}

// Begin starts the in-memory log of a running task (ErrLocked when it
// runs already); its records are kept until Finish folds them in.
func (m *Memory) Begin(t *Task) (Log, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.logs[t.TaskID] != nil {
		return nil, ErrLocked
	}
	cur := m.tasks[t.TaskID]
	cp := *t
	cp.Messages, cp.Events, cp.Summary = nil, nil, nil
	if cur != nil {
		cp.Messages, cp.Events = cur.Messages, cur.Events
		if !cur.CreatedAt.IsZero() {
			cp.CreatedAt = cur.CreatedAt
		}
	}
	now := time.Now().UTC()
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = now
	}
	cp.UpdatedAt = now
	l := &memLog{m: m, id: t.TaskID}
	m.logs[t.TaskID] = l
	m.put(&cp)
	return l, nil
}

// memLog is a running task's log in a Memory.
type memLog struct {
	m        *Memory
	id       string
	msgs     []json.RawMessage
	evs      []json.RawMessage
	finished bool
}

func (l *memLog) Append(recs ...Record) error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if l.finished {
		return errors.New("store: task log is closed")
	}
	for _, r := range recs {
		switch r.Kind {
		case RecMessage:
			l.msgs = append(l.msgs, r.Value)
		case RecEvent:
			l.evs = append(l.evs, r.Value)
		}
	}
	if t := l.m.tasks[l.id]; t != nil {
		t.UpdatedAt = time.Now().UTC()
	}
	return nil
}

func (l *memLog) Finish(final *Task) error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if l.finished {
		return errors.New("store: task log is closed")
	}
	l.finished = true
	delete(l.m.logs, l.id)
	t := l.m.tasks[l.id]
	if t == nil {
		return nil
	}
	cp := *t
	cp.Messages = appendRaw(cp.Messages, l.msgs)
	cp.Events = appendRaw(cp.Events, l.evs)
	cp.Title = final.Title
	cp.Status, cp.Error, cp.Summary = final.Status, final.Error, final.Summary
	if final.Messages != nil {
		cp.Messages = final.Messages
	}
	cp.UpdatedAt = time.Now().UTC()
	l.m.put(&cp)
	return nil
}

func (l *memLog) Close() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if !l.finished {
		l.finished = true
		delete(l.m.logs, l.id)
		if t := l.m.tasks[l.id]; t != nil {
			t.Messages = appendRaw(t.Messages, l.msgs)
			t.Events = appendRaw(t.Events, l.evs)
		}
	}
	return nil
}
