package store

import (
	"sort"
	"sync"
	"time"
)

// Memory keeps tasks in memory for one session (no dataDir): the same
// records as a task folder, at most Max of them (the oldest by UpdatedAt
// dropped). Safe for concurrent use; Load returns copies.
type Memory struct {
	max   int
	mu    sync.Mutex
	tasks map[string]*Task
}

// NewMemory returns an empty in-memory store holding at most max tasks
// (max <= 0: 100).
func NewMemory(max int) *Memory {
	if max <= 0 {
		max = 100
	}
	return &Memory{max: max, tasks: map[string]*Task{}}
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
	cp := *t
	m.tasks[t.TaskID] = &cp
	for len(m.tasks) > m.max {
		var oldest *Task
		for _, x := range m.tasks {
			if oldest == nil || x.UpdatedAt.Before(oldest.UpdatedAt) {
				oldest = x
			}
		}
		delete(m.tasks, oldest.TaskID)
	}
	return nil
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
	return &cp, nil
}

// Delete removes the task and reports whether it existed.
func (m *Memory) Delete(id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
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
		out = append(out, Info{TaskID: t.TaskID, Title: t.Title, Status: t.Status, ChatMode: t.ChatMode,
			Model: t.Model, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}
