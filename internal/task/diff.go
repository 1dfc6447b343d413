package task

import (
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/project"
)

// The diff event (docs/events.md): after a task changed files, its whole
// unified diff from the edit log (editlog.TaskDiff: what edits/pending
// shows for the files it touched), debounced: diffQuiet after the last
// fileChanged, at most diffMaxWait after the first one not yet in a diff,
// and always once more before `done` when files changed since the last.
const (
	diffQuiet   = 300 * time.Millisecond
	diffMaxWait = 2 * time.Second
)

type diffDebounce struct {
	taskID string
	proj   *project.Project
	send   func(agent.Event)

	mu     sync.Mutex
	timer  *time.Timer
	first  time.Time // first change not in a diff yet (zero: none)
	closed bool
}

// changed notes a fileChanged event.
func (d *diffDebounce) changed() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	now := time.Now()
	if d.first.IsZero() {
		d.first = now
	}
	wait := min(diffQuiet, diffMaxWait-now.Sub(d.first))
	if d.timer != nil {
		d.timer.Stop()
	}
	d.timer = time.AfterFunc(max(wait, 0), d.fire)
}

func (d *diffDebounce) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.emitLocked()
	}
}

// done sends the diff of changes not in one yet (before `done`) and stops.
func (d *diffDebounce) done() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.emitLocked()
	d.closed = true
}

func (d *diffDebounce) emitLocked() {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if d.first.IsZero() {
		return
	}
	d.first = time.Time{}
	text, files, cut, err := d.proj.Edits().TaskDiff(d.taskID)
	if err != nil {
		return
	}
	d.send(agent.Event{Type: agent.EventDiff, Diff: text, Files: files, DiffCut: cut})
}
